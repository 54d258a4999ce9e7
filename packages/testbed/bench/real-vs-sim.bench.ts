// The same flows on the real kubelet (v1.37.2, the local cluster) and on kubelet-sim, in one run:
// Plugboard's device plugin (the library, in this process) registered with each, then
//   - register → the Node's allocatable shows the devices (API server),
//   - a fault → the Node's allocatable one lower (API server),
//   - a pod with 2 GPUs → Running (real: created through the API server and scheduled; kubelet-sim:
//     admitted through its control API, which has no pod writes),
// and Plugboard's DRA driver (examples/dra-node.yaml) registered with each, then
//   - register → its 8 devices in this node's ResourceSlices (API server),
//   - a pod with a claim (from a template: 1 GPU) → Running (the scheduler allocates it, the kubelet
//     calls NodePrepareResources; kubelet-sim's control plane does both in-process),
//   - a health fault → the pod's allocatedResourcesStatus says Unhealthy (the pod from the API server),
// each the median of N rounds, and the ratio real ÷ sim. The real node reports node status every
// second (the test bed's setting; upstream's default is 10 s), which bounds the device plugin's
// first two flows.
// Also the cluster's resident memory (control plane, one kubelet + fake runtime).
// Needs root and Go (it starts its own local cluster): npm run bench -w @plugboard/testbed
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { pino } from 'pino';
import { ensureBinaries, readState, up, down } from '@plugboard/local-cluster';
import { startKubeletSim } from '@plugboard/kubelet-sim';
import {
  kubeApiFromKubeConfig,
  parsePluginConfig,
  startDraDrivers,
  startPlugins,
  type DraKubeApi,
  type PluginRuntime,
} from '@plugboard/plugin';
import { parse as parseYaml } from 'yaml';
import { pinnedPod, type PodManifest } from '../src/pod.js';
import { realCluster } from '../src/real-cluster.js';

const GPU = 'plugboard.example/gpu';
const ROUNDS = Number(process.env.ROUNDS ?? 10);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Side {
  allocatable(): Promise<number>;
  startPod(name: string): Promise<void>;
  deletePod(name: string): Promise<void>;
  devicePluginDir: string;
}

/** One side's DRA flows: its API server, its node's plugin dirs, its pods. */
interface DraSide {
  nodeName: string;
  kube: DraKubeApi;
  pluginsDir: string;
  pluginsRegistryDir: string;
  cdiDir: string;
  /** How many of DRIVER's devices this node's ResourceSlices list. */
  published(): Promise<number>;
  /** The pod (claim `gpus` from template `one`) Running; its allocated device. */
  startPod(name: string): Promise<string>;
  /** The health the pod's status gives `device` (its `claim:gpus` entry). */
  health(name: string, device: string): Promise<string | undefined>;
  deletePod(name: string): Promise<void>;
}

const DRIVER = 'gpu.plugboard.example';
const draConfig = parsePluginConfig(
  parseYaml(readFileSync(new URL('../../../examples/dra-node.yaml', import.meta.url), 'utf8')),
  'examples/dra-node.yaml',
);
const deviceClass = (ns: string): Record<string, unknown> => ({
  apiVersion: 'resource.k8s.io/v1',
  kind: 'DeviceClass',
  metadata: { name: `${ns}-gpu` },
  spec: { selectors: [{ cel: { expression: `device.driver == "${DRIVER}"` } }] },
});
const claimTemplate = (ns: string): Record<string, unknown> => ({
  apiVersion: 'resource.k8s.io/v1',
  kind: 'ResourceClaimTemplate',
  metadata: { name: 'one', namespace: ns },
  spec: {
    spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: `${ns}-gpu`, count: 1 } }] } },
  },
});
const claimPod = (ns: string, name: string, node: string): PodManifest =>
  pinnedPod(name, ns, node, { claims: { gpus: { template: 'one' } } });
interface PodJson {
  status: {
    phase?: string;
    resourceClaimStatuses?: { name: string; resourceClaimName: string }[];
    containerStatuses?: {
      allocatedResourcesStatus?: { name: string; resources?: { resourceID: string; health: string }[] }[];
    }[];
  };
}
interface ClaimJson {
  metadata: { uid: string };
  status?: { allocation?: { devices: { results: { device: string }[] } } };
}
interface SliceListJson {
  items: { spec: { driver: string; nodeName?: string; devices?: unknown[] } }[];
}
const devicesOf = (list: SliceListJson, node: string): number =>
  list.items
    .filter((s) => s.spec.driver === DRIVER && s.spec.nodeName === node)
    .reduce((n, s) => n + (s.spec.devices?.length ?? 0), 0);
/** The real kubelet (and kubelet-sim) name a DRA entry `claim:<pod claim>`, each device by its CDI ID. */
const healthOf = (pod: PodJson, claim: ClaimJson, device: string): string | undefined =>
  pod.status.containerStatuses?.[0]?.allocatedResourcesStatus
    ?.find((s) => s.name === 'claim:gpus')
    ?.resources?.find((r) => r.resourceID === `k8s.${DRIVER}/gpu=${claim.metadata.uid}-${device}`)?.health;

async function measureDra(side: DraSide): Promise<Record<string, number>> {
  const t0 = performance.now();
  const dra = await startDraDrivers(draConfig, {
    nodeName: side.nodeName,
    kube: side.kube,
    pluginsDir: side.pluginsDir,
    pluginsRegistryDir: side.pluginsRegistryDir,
    cdiDir: side.cdiDir,
    faultTaints: true,
  });
  try {
    const driver = dra.drivers.get(DRIVER)!;
    // Registered with the kubelet (its plugin watcher) and the 8 devices published.
    if (driver.registration().phase !== 'registered') {
      await once(driver, 'registered', { signal: AbortSignal.timeout(60_000) }).catch(() => {
        throw new Error(
          `${side.nodeName}: the kubelet did not register ${DRIVER}: ${JSON.stringify(driver.registration())}`,
        );
      });
    }
    await until(async () => (await side.published()) === 8);
    const registerMs = performance.now() - t0;
    const pods: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const t = performance.now();
      await side.startPod(`dra-${i}`);
      pods.push(performance.now() - t);
      await side.deletePod(`dra-${i}`);
    }
    const device = await side.startPod('dra-health');
    await until(async () => (await side.health('dra-health', device)) === 'Healthy');
    const faults: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const t = performance.now();
      driver.injectFault(device, 'bench');
      await until(async () => (await side.health('dra-health', device)) === 'Unhealthy');
      faults.push(performance.now() - t);
      driver.clearFault(device);
      await until(async () => (await side.health('dra-health', device)) === 'Healthy');
    }
    await side.deletePod('dra-health');
    return {
      draRegisterToSlicesMs: registerMs,
      draPodWithClaimRunningMs: median(pods),
      draFaultToPodStatusMs: median(faults),
    };
  } finally {
    await dra.stop();
  }
}

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 5));
}

async function measure(side: Side, runtime: () => Promise<PluginRuntime>): Promise<Record<string, number>> {
  const t0 = performance.now();
  const plugins = await runtime();
  const gpu = plugins.resources.get(GPU)!;
  if (gpu.registration().phase !== 'registered') await once(gpu, 'registered');
  await until(async () => (await side.allocatable()) === 8);
  const registerMs = performance.now() - t0;
  const faults: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const id = `gpu-${i % 8}`;
    const t = performance.now();
    gpu.injectFault(id, 'bench');
    await until(async () => (await side.allocatable()) === 7);
    faults.push(performance.now() - t);
    gpu.clearFault(id);
    await until(async () => (await side.allocatable()) === 8);
  }
  const pods: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    await side.startPod(`bench-${i}`);
    pods.push(performance.now() - t);
    await side.deletePod(`bench-${i}`);
  }
  await plugins.stop();
  return {
    registerToAllocatableMs: registerMs,
    faultToAllocatableMs: median(faults),
    podWith2GpusRunningMs: median(pods),
  };
}

const config = parsePluginConfig(
  { resources: [{ name: GPU, simulated: { count: 8, numaNodes: [0, 1] } }] },
  'bench',
);
// Short: a node's sockets (plugins_registry/<driver>-reg.sock) must fit a Unix socket address.
const work = mkdtempSync(join(tmpdir(), 'pb-b-'));
const clusterDir = join(work, 'c');
const bins = await ensureBinaries();
await up(bins, { dir: clusterDir, nodes: 0, apiserverPort: 0 });
process.env.PLUGBOARD_REAL_CLUSTER_DIR = clusterDir;
const cluster = realCluster();
const node = await cluster.addNode('bench');
const ns = await cluster.namespace('bench');
const sim = await startKubeletSim({
  devicePluginDir: join(work, 'sim-dp'),
  pluginsRegistryDir: join(work, 'sim-plugins_registry'),
  stateDir: join(work, 'sim'),
  nodeName: 'sim',
  listen: '127.0.0.1:0',
  logger: pino({ level: 'silent' }),
});
try {
  const nodeAllocatable = async (): Promise<number> => {
    const n = await cluster.kubectlJson<{ status: { allocatable: Record<string, string> } }>([
      'get',
      'node',
      node.name,
    ]);
    return Number(n.status.allocatable[GPU] ?? 0);
  };
  const real: Side = {
    devicePluginDir: node.devicePluginDir,
    allocatable: nodeAllocatable,
    startPod: async (name) => {
      await cluster.kubectl(['apply', '-f', '-'], {
        input: JSON.stringify(pinnedPod(name, ns.name, node.name, { limits: { [GPU]: 2 } })),
      });
      await cluster.kubectl([
        'wait',
        '-n',
        ns.name,
        '--for=condition=Ready',
        `pod/${name}`,
        '--timeout=120s',
      ]);
    },
    deletePod: async (name) =>
      void (await cluster.kubectl(['delete', 'pod', '-n', ns.name, name, '--grace-period=0', '--wait=true'])),
  };
  const simSide: Side = {
    devicePluginDir: sim.devicePluginDir,
    allocatable: async () => {
      const res = await fetch(`${sim.url}/api/v1/nodes/sim`);
      const n = (await res.json()) as { status: { allocatable: Record<string, string> } };
      return Number(n.status.allocatable[GPU] ?? 0);
    },
    startPod: async (name) => {
      await sim.admitPod({
        metadata: { name, namespace: 'bench' },
        spec: { containers: [{ name: 'main', resources: { limits: { [GPU]: '2' } } }] },
      });
      await until(() =>
        Promise.resolve(sim.state().pods.some((p) => p.name === name && p.phase === 'Running')),
      );
    },
    deletePod: (name) => sim.deletePod('bench', name),
  };
  const realResult = await measure(real, () =>
    startPlugins(config, { devicePluginDir: real.devicePluginDir }),
  );
  const simResult = await measure(simSide, () =>
    startPlugins(config, { devicePluginDir: simSide.devicePluginDir }),
  );
  const realDra: DraSide = {
    nodeName: node.name,
    kube: await kubeApiFromKubeConfig({ kubeconfig: cluster.kubeconfig }),
    pluginsDir: node.pluginsDir,
    pluginsRegistryDir: node.pluginsRegistryDir,
    cdiDir: join(work, 'real-cdi'),
    published: async () =>
      devicesOf(await cluster.kubectlJson<SliceListJson>(['get', 'resourceslices']), node.name),
    startPod: async (name) => {
      await cluster.kubectl(['apply', '-f', '-'], {
        input: JSON.stringify(claimPod(ns.name, name, node.name)),
      });
      await cluster
        .kubectl(['wait', '-n', ns.name, '--for=condition=Ready', `pod/${name}`, '--timeout=120s'])
        .catch(async (err: Error) => {
          const describe = await cluster
            .kubectl(['describe', 'pod', '-n', ns.name, name])
            .then((r) => r.stdout, String);
          throw new Error(`${err.message}\n${describe}`);
        });
      const pod = await cluster.kubectlJson<PodJson>(['get', 'pod', '-n', ns.name, name]);
      const claim = await cluster.kubectlJson<ClaimJson>([
        'get',
        'resourceclaim',
        '-n',
        ns.name,
        pod.status.resourceClaimStatuses![0]!.resourceClaimName,
      ]);
      return claim.status!.allocation!.devices.results[0]!.device;
    },
    health: async (name, device) => {
      const pod = await cluster.kubectlJson<PodJson>(['get', 'pod', '-n', ns.name, name]);
      const claimName = pod.status.resourceClaimStatuses?.[0]?.resourceClaimName;
      if (!claimName) return undefined;
      const claim = await cluster.kubectlJson<ClaimJson>(['get', 'resourceclaim', '-n', ns.name, claimName]);
      return healthOf(pod, claim, device);
    },
    deletePod: (name) => real.deletePod(name),
  };
  const simGet = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${sim.url}${path}`);
    if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status}`);
    return (await res.json()) as T;
  };
  const simPost = async (path: string, body: unknown): Promise<void> => {
    const res = await fetch(`${sim.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`POST ${path}: HTTP ${res.status}: ${await res.text()}`);
  };
  const simClaim = async (name: string): Promise<{ pod: PodJson; claim: ClaimJson } | null> => {
    const pod = await simGet<PodJson>(`/api/v1/namespaces/bench/pods/${name}`);
    const claimName = pod.status.resourceClaimStatuses?.[0]?.resourceClaimName;
    if (!claimName) return null;
    const claim = await simGet<ClaimJson>(
      `/apis/resource.k8s.io/v1/namespaces/bench/resourceclaims/${claimName}`,
    );
    return { pod, claim };
  };
  await simPost('/apis/resource.k8s.io/v1/deviceclasses', deviceClass('bench'));
  await simPost('/apis/resource.k8s.io/v1/namespaces/bench/resourceclaimtemplates', claimTemplate('bench'));
  await cluster.kubectl(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [deviceClass(ns.name), claimTemplate(ns.name)],
    }),
  });
  const simDra: DraSide = {
    nodeName: 'sim',
    kube: await kubeApiFromKubeConfig({ kubeconfig: sim.kubeconfigPath }),
    pluginsDir: join(work, 'sim-plugins'),
    pluginsRegistryDir: join(work, 'sim-plugins_registry'),
    cdiDir: join(work, 'sim-cdi'),
    published: async () =>
      devicesOf(await simGet<SliceListJson>('/apis/resource.k8s.io/v1/resourceslices'), 'sim'),
    startPod: async (name) => {
      await sim.admitPod(claimPod('bench', name, 'sim') as Parameters<typeof sim.admitPod>[0]);
      await until(() =>
        Promise.resolve(sim.state().pods.some((p) => p.name === name && p.phase === 'Running')),
      );
      return (await simClaim(name))!.claim.status!.allocation!.devices.results[0]!.device;
    },
    health: async (name, device) => {
      const got = await simClaim(name);
      return got ? healthOf(got.pod, got.claim, device) : undefined;
    },
    deletePod: (name) => simSide.deletePod(name),
  };
  Object.assign(realResult, await measureDra(realDra));
  Object.assign(simResult, await measureDra(simDra));
  await cluster.kubectl(['delete', 'deviceclass', `${ns.name}-gpu`, '--ignore-not-found']);
  const state = readState(clusterDir);
  const rss = (pid: number): number => {
    try {
      return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    } catch {
      return 0;
    }
  };
  const controlPlaneMB = state.controlPlane.reduce((s, p) => s + rss(p.pid), 0);
  const nodeState = state.nodes[0]!;
  const nodeMB = rss(nodeState.kubelet.pid) + rss(nodeState.runtime.pid);
  console.log(
    JSON.stringify(
      {
        rounds: ROUNDS,
        realNodeStatusUpdateFrequency: '1s',
        real: realResult,
        sim: simResult,
        ratioRealToSim: Object.fromEntries(
          Object.keys(realResult).map((k) => [k, +(realResult[k]! / simResult[k]!).toFixed(1)]),
        ),
        rssMB: { controlPlane: Math.round(controlPlaneMB), perNode: Math.round(nodeMB) },
        machine: execFileSync('uptime').toString().trim(),
      },
      null,
      2,
    ),
  );
} finally {
  await sim.stop();
  await ns.remove();
  await node.remove();
  await down(clusterDir);
  rmSync(work, { recursive: true, force: true });
}
