// kubelet-sim benchmark: admission throughput, PodResources List latency with many pods (as a
// ratio to an empty node measured in the same run), the time for a device fault to reach the
// pods' status, and Dynamic Resource Allocation: 250 pods with a 4-device claim each over 1,024 DRA
// devices (claim from a template, scheduled, prepared by a raw DRA driver over a real socket) beside
// the same pods taking 4 devices each from a 1,024-device plugin, time per pod (submit → Running)
// with p50/p99 and the DRA / device-plugin ratio. Prints one JSON summary; no assertions (targets
// are read from the ratios).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { podresources } from '@plugboard/proto';
import { KubeConfig, ResourceV1Api } from '@kubernetes/client-node';
import { startKubeletSim, type KubeObject } from '../src/index.js';
import { TestDraDriver } from '../test/dra-driver.js';
import { TestPlugin } from '../test/test-plugin.js';

const PODS = Number(process.env.BENCH_PODS ?? 200);
const DEVICES = 64;
const GPU = 'bench.example/gpu';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.99) - 1] ?? NaN;

const DRA_PODS = Number(process.env.BENCH_DRA_PODS ?? 250);
const DRA_DEVICES = 1024;
const DEVICES_PER_POD = 4;
const DRA_DRIVER = 'bench.example.com';

/** Time per pod (submit → Running) for `pods` pods, each made by `podFor(i)`. */
async function timePods(
  sim: Awaited<ReturnType<typeof startKubeletSim>>,
  count: number,
  podFor: (i: number) => Parameters<typeof sim.admitPod>[0],
): Promise<{ perPod: number[]; seconds: number }> {
  const perPod: number[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    const pod = await sim.admitPod(podFor(i));
    const phase = (pod['status'] as { phase: string }).phase;
    if (phase !== 'Running') throw new Error(`pod ${i} is ${phase}`);
    perPod.push(performance.now() - t);
  }
  return { perPod, seconds: (performance.now() - started) / 1000 };
}

/** 250 pods × 4 DRA devices out of 1,024, and the same through a device plugin. */
async function draBench() {
  const root = mkdtempSync(join(tmpdir(), 'pb-ksim-bench-dra-'));
  const sim = await startKubeletSim({
    devicePluginDir: join(root, 'dp'),
    stateDir: join(root, 'st'),
    pluginsRegistryDir: join(root, 'plugins_registry'),
    numaNodes: 2,
    cpus: 64,
    maxPods: 2 * DRA_PODS + 10,
    podResourcesRateLimit: false,
  });
  const kc = new KubeConfig();
  kc.loadFromFile(sim.kubeconfigPath);
  const api = kc.makeApiClient(ResourceV1Api);
  const driver = new TestDraDriver({
    driver: DRA_DRIVER,
    registryDir: join(root, 'plugins_registry'),
    pluginsDir: join(root, 'plugins'),
    kubeconfigPath: sim.kubeconfigPath,
    nodeName: sim.nodeName,
    devices: Array.from({ length: DRA_DEVICES }, (_, i) => ({
      name: `gpu-${i}`,
      attributes: { 'resource.kubernetes.io/numaNode': { int: i % 2 } },
    })),
    devicesPerSlice: 128,
  });
  const plugin = new TestPlugin({
    dir: sim.devicePluginDir,
    resourceName: GPU,
    devices: Array.from({ length: DRA_DEVICES }, (_, i) => ({ id: `g${i}`, numa: [i % 2] })),
  });
  try {
    await api.createDeviceClass({
      body: {
        metadata: { name: DRA_DRIVER },
        spec: { selectors: [{ cel: { expression: `device.driver == "${DRA_DRIVER}"` } }] },
      },
    });
    await api.createNamespacedResourceClaimTemplate({
      namespace: 'bench',
      body: {
        metadata: { name: 'four-gpus', namespace: 'bench' },
        spec: {
          spec: {
            devices: {
              requests: [{ name: 'gpus', exactly: { deviceClassName: DRA_DRIVER, count: DEVICES_PER_POD } }],
            },
          },
        },
      },
    });
    await driver.start();
    while ((await api.listResourceSlice({ fieldSelector: `spec.driver=${DRA_DRIVER}` })).items.length < 8)
      await new Promise((r) => setTimeout(r, 5));
    while (!sim.state().dra.drivers.find((d) => d.name === DRA_DRIVER)?.plugins[0]?.connected)
      await new Promise((r) => setTimeout(r, 5));
    await plugin.start();
    await plugin.register();
    while (sim.state().resources[GPU]?.allocatable !== DRA_DEVICES)
      await new Promise((r) => setTimeout(r, 5));

    const viaDra = await timePods(sim, DRA_PODS, (i) => ({
      metadata: { name: `dra-${i}`, namespace: 'bench' },
      spec: {
        resourceClaims: [{ name: 'gpus', resourceClaimTemplateName: 'four-gpus' }],
        containers: [{ name: 'main', resources: { claims: [{ name: 'gpus' }] } }],
      },
    }));
    const viaPlugin = await timePods(sim, DRA_PODS, (i) => ({
      metadata: { name: `dp-${i}`, namespace: 'bench' },
      spec: { containers: [{ name: 'main', resources: { limits: { [GPU]: String(DEVICES_PER_POD) } } }] },
    }));
    const allocated = sim.state().dra.claims.reduce((n, c) => n + c.devices.length, 0);
    const stats = (xs: number[]) => ({ p50: +median(xs).toFixed(3), p99: +p99(xs).toFixed(3) });
    return {
      pods: DRA_PODS,
      devices: DRA_DEVICES,
      devicesPerPod: DEVICES_PER_POD,
      draDevicesAllocated: allocated,
      draPerPodMs: stats(viaDra.perPod),
      devicePluginPerPodMs: stats(viaPlugin.perPod),
      ratio: {
        p50: +(median(viaDra.perPod) / median(viaPlugin.perPod)).toFixed(2),
        p99: +(p99(viaDra.perPod) / p99(viaPlugin.perPod)).toFixed(2),
      },
      podsPerSecond: {
        dra: Math.round(DRA_PODS / viaDra.seconds),
        devicePlugin: Math.round(DRA_PODS / viaPlugin.seconds),
      },
    };
  } finally {
    driver.stop();
    await plugin.stop();
    await sim.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

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
        dra: await draBench(),
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
