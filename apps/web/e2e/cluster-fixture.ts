// A real cluster for the browser tests and the benchmark: per node a kubelet-sim and a gateway
// (the test bed's simNode and the plugboard-gateway binary, a process of its own) running real
// plugins (and DRA drivers) over real Unix sockets, with pods admitted through the
// kubelet-sim (so devices are really allocated by the plugin, and claims by the scheduler's DRA
// allocator and prepared by the driver). Run as its own process:
//   node --conditions=@plugboard/source --import tsx apps/web/e2e/cluster-fixture.ts
// It prints one line `PLUGBOARD_FIXTURE=<json>` when every gateway shows its pods, and tears
// everything down on SIGTERM/SIGINT.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import {
  gatewayDocument,
  gatewayProcess,
  simNode,
  type GatewayProcess,
  type SimNode,
  waitFor,
} from '@plugboard/testbed';
import type { NodeSnapshot } from '@plugboard/api';
import {
  deviceClassFor,
  DraDriver,
  evenPartitions,
  SimulatedSource,
  kubeApiFromKubeConfig,
  parsePluginConfig,
  startPlugins,
  type PluginRuntime,
} from '@plugboard/plugin';

import { draExtendedResources, E2E_TOKEN, NODES, type NodeSpec } from './fixture-spec';

export interface FixtureInfo {
  gateways: { name: string; url: string }[];
  sims: { name: string; url: string }[];
}

/** POSTs one resource.k8s.io/v1 object to the node's API slice, as `kubectl create` would. */
async function createDraObject(simUrl: string, plural: string, body: Record<string, unknown>): Promise<void> {
  const meta = body.metadata as { name: string; namespace?: string };
  const path = meta.namespace
    ? `/apis/resource.k8s.io/v1/namespaces/${meta.namespace}/${plural}`
    : `/apis/resource.k8s.io/v1/${plural}`;
  const res = await fetch(`${simUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`creating ${plural} ${meta.name}: HTTP ${res.status}: ${await res.text()}`);
}

async function createDraObjects(simUrl: string, spec: NodeSpec): Promise<void> {
  for (const c of spec.deviceClasses ?? []) {
    await createDraObject(simUrl, 'deviceclasses', {
      ...deviceClassFor(c.driver, {
        name: c.name,
        ...(c.extendedResourceName ? { extendedResourceName: c.extendedResourceName } : {}),
      }),
    });
  }
  const requests = (r: {
    deviceClassName: string;
    count: number;
    selector?: string;
    capacity?: Record<string, string>;
  }) => ({
    devices: {
      requests: [
        {
          name: 'gpu',
          exactly: {
            deviceClassName: r.deviceClassName,
            allocationMode: 'ExactCount',
            count: r.count,
            ...(r.selector ? { selectors: [{ cel: { expression: r.selector } }] } : {}),
            ...(r.capacity ? { capacity: { requests: r.capacity } } : {}),
          },
        },
      ],
    },
  });
  for (const t of spec.claimTemplates ?? []) {
    await createDraObject(simUrl, 'resourceclaimtemplates', {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceClaimTemplate',
      metadata: { name: t.name, namespace: t.namespace },
      spec: { spec: requests(t) },
    });
  }
  for (const c of spec.claims ?? []) {
    await createDraObject(simUrl, 'resourceclaims', {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceClaim',
      metadata: { name: c.name, namespace: c.namespace },
      spec: requests(c),
    });
  }
}

/**
 * A pod is shown: Running with its claims prepared; or, one the scheduler leaves Pending (not bound,
 * so not among the node's pods), its named claims pending with the scheduler's message.
 */
function podShown(s: NodeSnapshot, spec: NodeSpec, p: NodeSpec['pods'][number]): boolean {
  if (p.pending) {
    return (p.resourceClaims ?? []).every((rc) => {
      const c = 'claim' in rc ? s.dra?.claims[`${p.namespace}/${rc.claim}`] : undefined;
      return c?.phase === 'pending' && c.pendingReason !== null;
    });
  }
  const pod = s.pods[`${p.namespace}/${p.name}`];
  if (!pod) return false;
  const claims = (pod.claims ?? []).map((ref) => (ref.claim ? s.dra?.claims[ref.claim] : undefined));
  if (claims.length !== (p.resourceClaims?.length ?? 0)) return false;
  // A driver the gateway does not run reports no health of its own: its claims may stay unreported.
  const own = new Set((spec.dra ?? []).map((d) => d.driver));
  // An extended resource a DeviceClass maps: held through the claim the scheduler generated.
  const viaDra = [...draExtendedResources(spec)].filter((name) => (p.limits[name] ?? 0) > 0);
  return (
    pod.phase === 'Running' &&
    viaDra.every((name) =>
      s.extendedResources?.[name]?.pods.some(
        (x) => x.pod === `${p.namespace}/${p.name}` && x.via === 'dra' && x.devices.length > 0,
      ),
    ) &&
    claims.every(
      (c) =>
        c?.phase === 'prepared' &&
        (c.health === 'Healthy' || (c.health === null && c.devices.every((d) => !own.has(d.driver)))),
    )
  );
}

/** The device plugins and DRA drivers the node's gateway does not run, started against its kubelet-sim. */
async function startOthers(
  node: SimNode,
  spec: NodeSpec,
  logger: Logger,
): Promise<{ stop: () => Promise<void> }[]> {
  const started: { stop: () => Promise<void> }[] = [];
  const resources = spec.others?.resources ?? [];
  if (resources.length > 0) {
    const plugins: PluginRuntime = await startPlugins(parsePluginConfig({ resources }), {
      devicePluginDir: node.devicePluginDir,
      logger,
    });
    started.push(plugins);
  }
  for (const d of spec.others?.dra ?? []) {
    const driver = new DraDriver({
      driverName: d.driver,
      nodeName: node.name,
      source: new SimulatedSource(d.simulated),
      kube: await kubeApiFromKubeConfig({ kubeconfig: node.kubeconfig }),
      pluginsDir: node.pluginsDir,
      pluginsRegistryDir: node.pluginsRegistryDir,
      cdiDir: node.cdiDir,
      ...(d.partitions
        ? {
            partitions: {
              counters: () => ({ memory: d.partitions!.memory }),
              partitions: evenPartitions({ memory: d.partitions.memory }, d.partitions.splits),
            },
          }
        : {}),
      ...(d.shared
        ? {
            allowMultipleAllocations: true,
            capacity: () => ({
              memory: {
                value: d.shared!.memory,
                requestPolicy: { default: '10Gi', validRange: { min: '10Gi', step: '10Gi' } },
              },
            }),
          }
        : {}),
    });
    await driver.start();
    started.push(driver);
  }
  return started;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pb-web-e2e-'));
  // The kubelet-sims' log; each gateway's is its own process's, in <dir>/<node>/gateway-*/gateway.log.
  const logger = pino({ level: process.env.PLUGBOARD_FIXTURE_LOG ?? 'silent' });
  const nodes: SimNode[] = [];
  const gateways: GatewayProcess[] = [];
  const others: { stop: () => Promise<void> }[] = [];
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    // At once: the gateways are processes of their own, to be gone before our stopper's SIGKILL.
    await Promise.all(gateways.map((g) => g.stop().catch(() => {})));
    for (const o of others.reverse()) await o.stop().catch(() => {});
    for (const n of nodes.reverse()) await n.remove().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    process.exit(code);
  };
  process.once('SIGTERM', () => void stop(0));
  process.once('SIGINT', () => void stop(0));

  try {
    for (const spec of NODES) {
      // kubelet-sim in <dir>/<node>, its plugin watcher on (where DRA drivers register).
      const node = await simNode(dir, spec.name, {
        sim: {
          // Pod status (allocatedResourcesStatus: a DRA device's health) every 200 ms, not 10 s.
          ...(spec.dra || spec.others?.dra ? { syncFrequencyMs: 200 } : {}),
          listen: '127.0.0.1:0',
          numaNodes: spec.numaNodes,
          cpus: spec.cpus,
          podResourcesRateLimit: false,
          logger,
        },
      });
      nodes.push(node);
      // Progress for the parent (stderr): a start-up that goes on is not a hang, however loaded the machine.
      console.error(`fixture: ${spec.name}: kubelet-sim ${node.sim.url}`);
      const sim = node.sim;
      await createDraObjects(sim.url, spec);
      others.push(...(await startOthers(node, spec, logger)));
      const gw = await gatewayProcess(
        node,
        gatewayDocument(node, {
          resources: spec.resources,
          dra: spec.dra ?? [],
          stateDir: join(node.dir, 'gateway'),
          faults: spec.faults !== 'disabled',
          gateway: {
            podResources: { pollIntervalMs: 200 },
            // The CPU↔NUMA layout of the simulated node (the document's sysfsRoot), read every 200 ms.
            topology: { pollIntervalMs: 200 },
            // History buckets of 1 s so a fault reaches the charts' tables within the test.
            history: {
              tiers: [
                { resolutionMs: 1000, retentionMs: 3_600_000 },
                { resolutionMs: 60_000, retentionMs: 86_400_000 },
              ],
            },
          },
        }),
        spec.faults === 'token' ? { token: E2E_TOKEN } : {},
      );
      gateways.push(gw);
      console.error(`fixture: ${spec.name}: gateway ${gw.url}`);
      await waitFor(
        `${spec.name} plugins registered`,
        async () => (await fetch(`${gw.url}/readyz`)).status === 200,
      );
      // The scheduler allocates claims from published ResourceSlices only.
      await waitFor(`${spec.name} DRA drivers published`, async () => {
        const s = (await (await fetch(`${gw.url}/api/v1/node`)).json()) as NodeSnapshot;
        return (
          (spec.dra ?? []).every((d) => {
            const st = s.dra?.drivers[d.driver];
            return st?.publication?.lastPublishedAt != null && st.counts.published === d.simulated.count;
          }) &&
          // Drivers it does not run: seen through the ResourceSlice informer.
          (spec.others?.dra ?? []).every(
            (d) => s.dra?.drivers[d.driver]?.counts.published === (d.published ?? d.simulated.count),
          ) &&
          // Device plugins it does not run: registered with the kubelet, their devices allocatable.
          (spec.others?.resources ?? []).every(
            (r) => s.resources[r.name]?.kubelet.allocatable === r.simulated.count,
          )
        );
      });
      const draNames = draExtendedResources(spec);
      for (const p of spec.pods) {
        const claims = p.resourceClaims ?? [];
        // Through the scheduler, pinned to this node: a pod it cannot place waits Pending for it (as
        // in a cluster), and one asking for an extended resource a DeviceClass maps gets its claim.
        const scheduled = p.pending || Object.keys(p.limits).some((n) => draNames.has(n));
        await sim.admitPod({
          metadata: { name: p.name, namespace: p.namespace },
          spec: {
            restartPolicy: p.restartPolicy,
            ...(scheduled ? { nodeSelector: { 'kubernetes.io/hostname': spec.name } } : {}),
            ...(claims.length > 0
              ? {
                  resourceClaims: claims.map((c) =>
                    'template' in c
                      ? { name: c.name, resourceClaimTemplateName: c.template }
                      : { name: c.name, resourceClaimName: c.claim },
                  ),
                }
              : {}),
            containers: [
              {
                name: 'main',
                resources: {
                  limits: p.limits,
                  ...(claims.length > 0 ? { claims: claims.map((c) => ({ name: c.name })) } : {}),
                },
              },
            ],
          },
        });
      }
      // The last snapshot read, to say what was missing if the wait times out.
      const seen: { last: NodeSnapshot | null } = { last: null };
      await waitFor(`${spec.name} pods visible in the gateway`, async () => {
        const s = (await (await fetch(`${gw.url}/api/v1/node`)).json()) as NodeSnapshot;
        seen.last = s;
        return spec.pods.every((p) => podShown(s, spec, p));
      }).catch((err: unknown) => {
        const s = seen.last;
        const states = spec.pods.map((p) => {
          const pod = s?.pods[`${p.namespace}/${p.name}`];
          const claims = (pod?.claims ?? []).map((r) => (r.claim ? s?.dra?.claims[r.claim] : undefined));
          const shown = claims.map((c) => [c?.key, c?.phase, c?.health, c?.pendingReason]);
          return `${p.name}: ${pod ? `${pod.phase}, claims ${JSON.stringify(shown)}` : 'absent'}`;
        });
        throw new Error(`${(err as Error).message} (${states.join('; ')})`, { cause: err });
      });
    }
    const info: FixtureInfo = {
      gateways: NODES.map((n, i) => ({ name: n.name, url: gateways[i]!.url })),
      sims: NODES.map((n, i) => ({ name: n.name, url: nodes[i]!.sim.url })),
    };
    console.log(`PLUGBOARD_FIXTURE=${JSON.stringify(info)}`);
  } catch (err) {
    console.error(`fixture failed: ${(err as Error).stack ?? String(err)}`);
    await stop(1);
  }
}

if (process.argv[1]?.endsWith('cluster-fixture.ts')) void main();
