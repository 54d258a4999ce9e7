// Fault drills through DeviceTaintRule on a real node (v1.37.2 from upstream source): a DRA driver the
// gateway does not run (Plugboard's driver library, started here), a pod holding a claim on one of
// its devices, the gateway's fault as a DeviceTaintRule. The real kube-controller-manager's device
// taint eviction controller writes the rule's status: the dry run's message is compared word for word
// with the one kubelet-sim's controller writes (dra-taint-rule.int.test.ts), NoExecute evicts the
// pod, clearing deletes the rule.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { NodeSnapshot } from '@plugboard/api';
import { DraDriver, SimulatedSource, kubeApiFromKubeConfig } from '@plugboard/plugin';
import { realCluster, waitFor, type RealCluster, type RealNode } from '@plugboard/testbed';
import { parseGatewayConfig, startGateway, type Gateway } from '../../src/index.js';
import { faultTaintRule } from '../../src/faults/taint-rules.js';

const OTHER = 'ext.plugboard.example';
const GPU = 'plugboard.example/gpu';
const TOKEN = 'real-cluster-token-0123456789';
const silent = pino({ level: 'silent' });
/** What kubelet-sim's controller writes for the same drill (dra-taint-rule.int.test.ts). */
const DRY_RUN =
  '1 published device selected. 1 allocated device selected. 1 pod would be evicted in 1 namespace if the effect was NoExecute. This information will not be updated again. Recreate the DeviceTaintRule to trigger an update.';

interface PodJson {
  metadata: { uid: string; deletionTimestamp?: string };
  status: { phase: string; resourceClaimStatuses?: { resourceClaimName: string }[] };
}
interface ClaimJson {
  status?: { allocation?: { devices: { results: { pool: string; device: string }[] } } };
}
interface RuleJson {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { deviceSelector: Record<string, string>; taint: { effect: string } };
  status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
}

describe('fault drills through DeviceTaintRule on a real node', () => {
  let cluster: RealCluster;
  let node: RealNode;
  let ns: { name: string; remove(): Promise<void> };
  let work: string;
  let driver: DraDriver;
  let gw: Gateway;
  let deviceClass: string;
  let pool: string;
  let device: string;
  let podUid: string;

  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const snapshot = async (): Promise<NodeSnapshot> =>
    (await (await fetch(`${gw.url}/api/v1/node`)).json()) as NodeSnapshot;
  const post = async (body: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await fetch(`${gw.url}/api/v1/faults`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const ourRules = async (): Promise<RuleJson[]> =>
    (await cluster.kubectlJson<{ items: RuleJson[] }>(['get', 'devicetaintrules'])).items.filter(
      (r) => r.spec.deviceSelector['driver'] === OTHER && r.spec.deviceSelector['pool'] === node.name,
    );

  before(async () => {
    cluster = realCluster();
    node = await cluster.addNode('dtr');
    ns = await cluster.namespace('taintrule');
    work = mkdtempSync(join(tmpdir(), 'pb-real-taint-rule-'));
    writeFileSync(join(work, 'token'), `${TOKEN}\n`);
    deviceClass = `${ns.name}-other`;
    await cluster.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'resource.k8s.io/v1',
        kind: 'DeviceClass',
        metadata: { name: deviceClass },
        spec: { selectors: [{ cel: { expression: `device.driver == "${OTHER}"` } }] },
      }),
    });
    driver = new DraDriver({
      driverName: OTHER,
      nodeName: node.name,
      source: new SimulatedSource({ count: 2, idPrefix: 'acc' }),
      kube: await kubeApiFromKubeConfig({ kubeconfig: cluster.kubeconfig }),
      pluginsDir: node.pluginsDir,
      pluginsRegistryDir: node.pluginsRegistryDir,
      cdiDir: join(work, 'cdi'),
    });
    await driver.start();
    gw = await startGateway(
      parseGatewayConfig({
        resources: [{ name: GPU, simulated: { count: 1 } }],
        gateway: {
          nodeName: node.name,
          listen: '127.0.0.1:0',
          devicePluginDir: node.devicePluginDir,
          stateDir: join(work, 'state'),
          podResources: { socket: node.podResourcesSocket, pollIntervalMs: 200, maxBackoffMs: 1000 },
          kube: { mode: 'kubeconfig', kubeconfig: cluster.kubeconfig },
          auth: { tokenFile: join(work, 'token') },
          faults: { enabled: true },
        },
      }),
      { logger: silent },
    );
  });

  after(async () => {
    await gw?.stop();
    await driver?.stop();
    for (const r of (await ourRules().catch(() => [])) ?? [])
      await cluster.kubectl(['delete', 'devicetaintrule', r.metadata.name, '--ignore-not-found']);
    await cluster
      ?.kubectl([
        'delete',
        'resourceslices',
        '--field-selector',
        `spec.nodeName=${node.name}`,
        '--wait=false',
      ])
      .catch(() => undefined);
    await cluster
      ?.kubectl(['delete', 'deviceclass', deviceClass, '--ignore-not-found', '--wait=false'])
      .catch(() => undefined);
    await ns?.remove();
    await node?.remove();
    rmSync(work, { recursive: true, force: true });
  });

  it('a pod holding a claim on the other driver’s device runs; the gateway sees the device', async () => {
    await cluster.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'resource.k8s.io/v1',
        kind: 'ResourceClaimTemplate',
        metadata: { name: 'acc', namespace: ns.name },
        spec: {
          spec: { devices: { requests: [{ name: 'acc', exactly: { deviceClassName: deviceClass } }] } },
        },
      }),
    });
    await cluster.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'holder', namespace: ns.name },
        spec: {
          nodeSelector: { 'kubernetes.io/hostname': node.name },
          resourceClaims: [{ name: 'acc', resourceClaimTemplateName: 'acc' }],
          containers: [
            { name: 'main', image: 'registry.k8s.io/pause:3.10', resources: { claims: [{ name: 'acc' }] } },
          ],
        },
      }),
    });
    await cluster.kubectl(['wait', '-n', ns.name, '--for=condition=Ready', 'pod/holder', '--timeout=120s']);
    const pod = await cluster.kubectlJson<PodJson>(['get', 'pod', '-n', ns.name, 'holder']);
    podUid = pod.metadata.uid;
    const claimName = pod.status.resourceClaimStatuses![0]!.resourceClaimName;
    const claim = await cluster.kubectlJson<ClaimJson>(['get', 'resourceclaim', '-n', ns.name, claimName]);
    const result = claim.status!.allocation!.devices.results[0]!;
    pool = result.pool;
    device = result.device;
    await waitFor(
      'the gateway to see the other driver’s device',
      async () => (await snapshot()).dra?.devices[`${OTHER}/${pool}/${device}`]?.published === true,
      60_000,
    );
  });

  it('taint None: one rule, the real controller’s dry-run status is the one kubelet-sim writes, the pod keeps running', async () => {
    const r = await post({ resource: OTHER, deviceId: device, reason: 'real drill', taint: 'None' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const id = r.body.id as string;
    const s = await waitFor(
      'the controller’s condition through the gateway',
      async () => {
        const s = await snapshot();
        return s.faults[id]?.taintRuleStatus?.condition ? s : null;
      },
      60_000,
    );
    const fault = s.faults[id]!;
    assert.equal(fault.state, 'active');
    assert.deepEqual(
      {
        status: fault.taintRuleStatus!.condition!.status,
        reason: fault.taintRuleStatus!.condition!.reason,
        message: fault.taintRuleStatus!.condition!.message,
      },
      { status: 'False', reason: 'NoEffect', message: DRY_RUN },
    );
    const rules = await ourRules();
    assert.deepEqual(
      rules.map((x) => x.metadata.name),
      [faultTaintRule(OTHER, pool, device).name],
    );
    assert.equal(rules[0]!.metadata.labels?.['app.kubernetes.io/managed-by'], 'plugboard');
    const pod = await cluster.kubectlJson<PodJson>(['get', 'pod', '-n', ns.name, 'holder']);
    assert.equal(pod.metadata.uid, podUid);
    assert.equal(pod.metadata.deletionTimestamp, undefined);
  });

  it('NoExecute on the same device: the one rule turns NoExecute, the real controller evicts the pod', async () => {
    const r = await post({
      resource: OTHER,
      deviceId: device,
      reason: 'real drill: evict',
      taint: 'NoExecute',
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    await waitFor(
      'the pod evicted',
      async () => {
        const list = await cluster.kubectlJson<{ items: PodJson[] }>(['get', 'pods', '-n', ns.name]);
        return !list.items.some((p) => p.metadata.uid === podUid && !p.metadata.deletionTimestamp);
      },
      60_000,
    );
    const rules = await ourRules();
    assert.equal(rules.length, 1);
    assert.equal(rules[0]!.spec.taint.effect, 'NoExecute');
  });

  it('clearing the device’s faults deletes the rule', async () => {
    const res = await fetch(
      `${gw.url}/api/v1/faults?resource=${encodeURIComponent(OTHER)}&deviceId=${encodeURIComponent(device)}`,
      { method: 'DELETE', headers },
    );
    assert.equal(res.status, 200);
    await waitFor('the rule deleted', async () => (await ourRules()).length === 0, 30_000);
  });
});
