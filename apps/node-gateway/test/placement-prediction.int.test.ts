// "Try to place" is a prediction the gateway makes itself (sysfs, configz, PodResources, the
// plugins' preferred allocation, @plugboard/topology). Here it is held against the real thing: for
// every Topology Manager policy × scope, a kubelet-sim with real plugins served by the gateway, and
// a table of pods — GPUs and NIC VFs, exclusive CPUs, memory and hugepages, sidecars, init
// containers, pods that do not fit — admitted one after the other (and some deleted) so that the
// node fragments. Before each admission the gateway predicts; the prediction must be the decision
// kubelet-sim then makes: result, reason, every merge step's hints, and per container the affinity,
// the devices (the plugin's preferred allocation included), the CPUs and the memory blocks.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { AdmissionDecision, AdmissionView } from '@plugboard/api';
import type { KubeletSim, PodSpecInput } from '@plugboard/kubelet-sim';
import { gatewayDocument, simNode, type SimNode } from '@plugboard/testbed';
import { parseGatewayConfig, startGateway, type Gateway } from '../src/index.js';
import { waitFor } from './helpers.js';

const GPU = 'plugboard.example/gpu';
const NIC = 'plugboard.example/nic';
const silent = pino({ level: 'silent' });
const MI = 2 ** 20;
const GI = 2 ** 30;

type Limits = Record<string, string>;
const container = (name: string, limits: Limits, extra: Record<string, unknown> = {}) => ({
  name,
  resources: { limits },
  ...extra,
});
const pod = (name: string, containers: unknown[], initContainers: unknown[] = []): PodSpecInput =>
  ({
    metadata: { name, namespace: 'default' },
    spec: { containers, ...(initContainers.length ? { initContainers } : {}) },
  }) as PodSpecInput;
const guaranteed = (cpu: number, memory: string, more: Limits = {}): Limits => ({
  cpu: String(cpu),
  memory,
  ...more,
});

/** The table, in order: `delete` steps free a pod's resources; the rest are admitted. */
const STEPS: ({ admit: PodSpecInput } | { delete: string })[] = [
  { admit: pod('g1', [container('main', guaranteed(2, '1Gi', { [GPU]: '1' }))]) },
  { admit: pod('g3', [container('main', guaranteed(4, '3Gi', { [GPU]: '3', [NIC]: '1' }))]) },
  { admit: pod('be-two-gpus', [container('main', { [GPU]: '2' })]) },
  // Only two GPUs are left, on one node: a third cannot be found anywhere.
  { admit: pod('three-more', [container('main', guaranteed(2, '1Gi', { [GPU]: '3' }))]) },
  { admit: pod('cpu-only', [container('main', guaranteed(6, '2Gi'))]) },
  {
    admit: pod('two-containers', [
      container('a', guaranteed(1, '512Mi', { [GPU]: '1' })),
      container('b', guaranteed(1, '512Mi', { [GPU]: '1', [NIC]: '1' })),
    ]),
  },
  { delete: 'g1' },
  {
    admit: pod(
      'with-sidecar',
      [container('main', { [GPU]: '1' })],
      [container('proxy', { [NIC]: '1' }, { restartPolicy: 'Always' })],
    ),
  },
  { admit: pod('hugepages', [container('main', guaranteed(2, '256Mi', { 'hugepages-2Mi': '128Mi' }))]) },
  { delete: 'g3' },
  // Devices of an init container that the app container takes over in full.
  {
    admit: pod('init-reuse', [container('main', { [GPU]: '2' })], [container('prepare', { [GPU]: '1' })]),
  },
  { admit: pod('wide-cpus', [container('main', guaranteed(8, '1Gi'))]) },
  { admit: pod('too-many-cpus', [container('main', guaranteed(20, '1Gi'))]) },
  { admit: pod('too-much-memory', [container('main', guaranteed(1, '20Gi'))]) },
  { admit: pod('last-nic', [container('main', guaranteed(1, '1Gi', { [NIC]: '1' }))]) },
  // A name the kubelet already knows.
  { admit: pod('cpu-only', [container('main', guaranteed(1, '1Gi'))]) },
  // Not pinned (Burstable), so only the node-resources predicate can refuse it.
  { admit: pod('burstable-big', [{ name: 'main', resources: { requests: { cpu: '13' } } }]) },
  { delete: 'init-reuse' },
  { delete: 'two-containers' },
  // GPUs free on both NUMA nodes but not enough on either one.
  { admit: pod('spread-gpus', [container('main', { [GPU]: '4' })]) },
];

/** What must agree: everything but the time and the dry-run flag. */
function comparable(d: AdmissionDecision | AdmissionView) {
  return {
    policy: d.policy,
    scope: d.scope,
    cpuManagerPolicy: d.cpuManagerPolicy,
    memoryManagerPolicy: d.memoryManagerPolicy,
    result: d.result,
    reason: d.reason,
    message: d.message,
    steps: d.steps,
    containers: d.containers,
  };
}

const POLICIES = ['none', 'best-effort', 'restricted', 'single-numa-node'] as const;
const SCOPES = ['container', 'pod'] as const;
const outcomes = new Map<string, string[]>();

for (const policy of POLICIES) {
  for (const scope of SCOPES) {
    describe(`prediction vs admission: ${policy}, scope ${scope}`, () => {
      let dir: string;
      let node: SimNode;
      let sim: KubeletSim;
      let gw: Gateway;
      before(async () => {
        dir = mkdtempSync(join(tmpdir(), 'pb-gw-predict-'));
        node = await simNode(dir, 'predict-node', {
          sim: {
            numaNodes: 2,
            cpus: 16,
            memoryPerNumaBytes: 8 * GI,
            hugepagesPerNumaBytes: { 'hugepages-2Mi': 512 * MI },
            reservedCpus: [0, 1],
            topologyManagerPolicy: policy,
            topologyManagerScope: scope,
            podResourcesRateLimit: false,
          },
        });
        sim = node.sim;
        const document = gatewayDocument(node, {
          resources: [
            { name: GPU, simulated: { count: 8, numaNodes: [0, 1] } },
            { name: NIC, simulated: { count: 4, numaNodes: [0, 1] } },
          ],
          faults: false,
          gateway: { podResources: { pollIntervalMs: 200 }, topology: { pollIntervalMs: 200 } },
        });
        gw = await startGateway(parseGatewayConfig(document), { logger: silent });
        await waitFor('plugins registered', async () => (await fetch(`${gw.url}/readyz`)).status === 200);
        await waitFor('placement available', () => gw.model.snapshot().topology?.placement.available);
      });
      after(async () => {
        await gw?.stop();
        await node?.remove();
        rmSync(dir, { recursive: true, force: true });
      });

      /** The gateway's API-server view holds exactly the kubelet's pods, in their phases. */
      const caughtUp = () => {
        const want = sim
          .state()
          .pods.map((p) => `${p.name}:${p.phase}`)
          .sort();
        const seen = (gw.model.sourceInputs().kube?.pods ?? [])
          .map((p) => `${p.metadata?.name}:${p.status?.phase}`)
          .sort();
        return JSON.stringify(want) === JSON.stringify(seen);
      };

      test('every prediction is the admission kubelet-sim then makes', async () => {
        const results: string[] = [];
        for (const step of STEPS) {
          if ('delete' in step) {
            await sim.deletePod('default', step.delete);
            await waitFor(`the gateway sees ${step.delete} gone`, caughtUp);
            continue;
          }
          const name = step.admit.metadata.name;
          const res = await fetch(`${gw.url}/api/v1/placement`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(step.admit),
          });
          assert.equal(res.status, 200, `${name}: ${await res.clone().text()}`);
          const predicted = (await res.json()) as AdmissionView;
          assert.equal(predicted.source, 'prediction');
          assert.equal(predicted.dryRun, true);
          const before = sim.state().pods.find((p) => p.name === name)?.admission ?? null;
          await sim.admitPod(step.admit).catch(() => undefined);
          // An AlreadyExists refusal leaves the earlier pod's decision in place: compare by reason.
          const actual =
            predicted.reason === 'AlreadyExists'
              ? null
              : sim.state().pods.find((p) => p.name === name)?.admission;
          if (predicted.reason === 'AlreadyExists') {
            assert.ok(before, `${name} existed before`);
          } else {
            assert.ok(actual, `${name}: kubelet-sim made a decision`);
            assert.deepEqual(comparable(predicted), comparable(actual), `${name} (${policy}, ${scope})`);
          }
          results.push(`${name}:${predicted.result}${predicted.reason ? `:${predicted.reason}` : ''}`);
          await waitFor(`the gateway sees ${name}`, caughtUp);
        }
        outcomes.set(`${policy}/${scope}`, results);
      });
    });
  }
}

test('the table exercises admissions, every kind of rejection and policy differences', () => {
  assert.equal(outcomes.size, POLICIES.length * SCOPES.length, 'every policy × scope ran');
  const all = [...outcomes.values()].flat();
  for (const want of [
    ':admitted',
    ':rejected:UnexpectedAdmissionError',
    ':rejected:TopologyAffinityError',
    ':rejected:OutOfcpu',
    ':rejected:AlreadyExists',
  ]) {
    assert.ok(
      all.some((r) => r.includes(want)),
      `some step ends ${want}: ${all.join(' ')}`,
    );
  }
  const bestEffort = outcomes.get('best-effort/container')!;
  const restricted = outcomes.get('restricted/container')!;
  assert.ok(
    bestEffort.some((r, i) => r.endsWith(':admitted') && restricted[i]?.includes(':rejected')),
    'best-effort admits a pod restricted refuses',
  );
});
