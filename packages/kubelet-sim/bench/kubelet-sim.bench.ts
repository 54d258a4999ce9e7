// kubelet-sim benchmark: admission throughput, PodResources List latency with many pods (as a
// ratio to an empty node measured in the same run) and the time for a device fault to reach the
// pods' status. Prints one JSON summary; no assertions (targets are read from the ratios).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { podresources } from '@plugboard/proto';
import { startKubeletSim, type KubeObject } from '../src/index.js';
import { TestPlugin } from '../test/test-plugin.js';

const PODS = Number(process.env.BENCH_PODS ?? 200);
const DEVICES = 64;
const GPU = 'bench.example/gpu';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function timeList(client: podresources.PodResourcesListerClient, n: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await new Promise<void>((resolve, reject) => client.list({}, (err) => (err ? reject(err) : resolve())));
    samples.push(performance.now() - t);
  }
  return median(samples);
}

const root = mkdtempSync(join(tmpdir(), 'pb-ksim-bench-'));
const sim = await startKubeletSim({
  devicePluginDir: join(root, 'dp'),
  stateDir: join(root, 'st'),
  numaNodes: 2,
  cpus: 64,
  maxPods: PODS + 10,
  podResourcesRateLimit: false,
});
const plugin = new TestPlugin({
  dir: sim.devicePluginDir,
  resourceName: GPU,
  devices: Array.from({ length: DEVICES }, (_, i) => ({ id: `g${i}`, numa: [i % 2] })),
});
try {
  await plugin.start();
  await plugin.register();
  while (sim.state().resources[GPU]?.allocatable !== DEVICES) await new Promise((r) => setTimeout(r, 5));
  const client = new podresources.PodResourcesListerClient(
    `unix://${sim.podResourcesSocket}`,
    credentials.createInsecure(),
  );
  const emptyList = await timeList(client, 200);

  const started = performance.now();
  for (let i = 0; i < PODS; i++) {
    await sim.admitPod({
      metadata: { name: `p${i}`, namespace: 'bench' },
      spec: { containers: [{ name: 'main', resources: { limits: i < DEVICES ? { [GPU]: '1' } : {} } }] },
    });
  }
  const admitSeconds = (performance.now() - started) / 1000;
  const fullList = await timeList(client, 200);

  const faults: number[] = [];
  for (let i = 0; i < 20; i++) {
    const id = `g${i}`;
    const t = performance.now();
    plugin.setHealth(id, 'Unhealthy');
    await new Promise<void>((resolve) => {
      const onNode = (node: KubeObject) => {
        const allocatable = (node['status'] as { allocatable: Record<string, string> }).allocatable[GPU];
        if (allocatable === String(DEVICES - 1)) {
          sim.off('node', onNode);
          resolve();
        }
      };
      sim.on('node', onNode);
    });
    faults.push(performance.now() - t);
    plugin.setHealth(id, 'Healthy');
    while (sim.state().resources[GPU]?.allocatable !== DEVICES) await new Promise((r) => setImmediate(r));
  }
  client.close();
  console.log(
    JSON.stringify(
      {
        pods: PODS,
        devices: DEVICES,
        admissionsPerSecond: Math.round(PODS / admitSeconds),
        podResourcesListMs: {
          emptyNode: +emptyList.toFixed(3),
          withPods: +fullList.toFixed(3),
          ratio: +(fullList / emptyList).toFixed(2),
        },
        faultToAllocatableMs: +median(faults).toFixed(3),
      },
      null,
      2,
    ),
  );
} finally {
  await plugin.stop();
  await sim.stop();
  rmSync(root, { recursive: true, force: true });
}
