// The same flows on the real kubelet (v1.37.2, the local cluster) and on kubelet-sim, in one run:
// Plugboard's device plugin (the library, in this process) registered with each, then
//   - register → the Node's allocatable shows the devices (API server),
//   - a fault → the Node's allocatable one lower (API server),
//   - a pod with 2 GPUs → Running (real: created through the API server and scheduled; kubelet-sim:
//     admitted through its control API, which has no pod writes),
// each the median of N rounds, and the ratio real ÷ sim. The real node reports node status every
// second (the test bed's setting; upstream's default is 10 s), which bounds the first two flows.
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
import { parsePluginConfig, startPlugins, type PluginRuntime } from '@plugboard/plugin';
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
const work = mkdtempSync(join(tmpdir(), 'pb-bench-real-'));
const bins = await ensureBinaries();
await up(bins, { dir: join(work, 'cluster'), nodes: 0, apiserverPort: 0 });
process.env.PLUGBOARD_REAL_CLUSTER_DIR = join(work, 'cluster');
const cluster = realCluster();
const node = await cluster.addNode('bench');
const ns = await cluster.namespace('bench');
const sim = await startKubeletSim({
  devicePluginDir: join(work, 'sim-dp'),
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
        input: JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace: ns.name },
          spec: {
            nodeSelector: { 'kubernetes.io/hostname': node.name },
            containers: [
              { name: 'main', image: 'registry.k8s.io/pause:3.10', resources: { limits: { [GPU]: 2 } } },
            ],
          },
        }),
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
  const state = readState(join(work, 'cluster'));
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
  await down(join(work, 'cluster'));
  rmSync(work, { recursive: true, force: true });
}
