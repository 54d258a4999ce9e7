// The simulator against plugins built with @plugboard/plugin (the project's own library): real
// registration, NUMA topology, Allocate responses from config templates, PreStartContainer,
// faults injected at the source, and re-registration after a kubelet restart.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { parsePluginConfig, startPlugins, type PluginRuntime } from '@plugboard/plugin';
import { pod, startFixture, waitFor, type SimFixture } from './helpers.js';

const GPU = 'plugboard.example/gpu';
const ACCEL = 'plugboard.example/accel';

describe('kubelet-sim with @plugboard/plugin', () => {
  let f: SimFixture;
  let runtime: PluginRuntime;
  before(async () => {
    f = await startFixture({ numaNodes: 2, cpus: 4, crashLoopBackOff: { initialMs: 30, maxMs: 60 } });
    const config = parsePluginConfig({
      resources: [
        {
          name: GPU,
          simulated: { count: 4, numaNodes: [0, 1] },
          allocate: { env: { VISIBLE: '{{ids}}' } },
          preStart: { delayMs: 1 },
        },
        { name: ACCEL, simulated: { count: 1, idPrefix: 'accel' }, replicas: 2 },
      ],
    });
    runtime = await startPlugins(config, {
      devicePluginDir: f.dir,
      restartPollIntervalMs: 50,
      registrationRetry: { initialMs: 20, maxMs: 200 },
    });
    await waitFor(
      () =>
        f.sim.state().resources[GPU]?.allocatable === 4 && f.sim.state().resources[ACCEL]?.allocatable === 2,
      'both resources',
    );
  });
  after(async () => {
    await runtime.stop();
    await f.cleanup();
  });

  test('registers with the options its GetDevicePluginOptions answers, devices with NUMA topology', () => {
    const gpu = f.sim.state().resources[GPU]!;
    assert.deepEqual(gpu.options, { preStartRequired: true, getPreferredAllocationAvailable: true });
    assert.deepEqual(
      gpu.devices.map((d) => d.numaNodes),
      [[0], [0], [1], [1]],
    );
    assert.equal(f.sim.state().resources[ACCEL]!.capacity, 2, 'replicas count as devices');
  });

  test("admission: NUMA-aligned devices, Allocate answer from the plugin's templates, PreStart before start", async () => {
    const admitted = await f.sim.admitPod(pod('trainer', { [GPU]: 2 }));
    assert.equal((admitted['status'] as { phase: string }).phase, 'Running');
    const main = f.sim.state().pods.find((p) => p.name === 'trainer')!.containers[0]!;
    assert.equal(main.devices[GPU]!.length, 2);
    const devices = f.sim.state().resources[GPU]!.devices.filter((d) => main.devices[GPU]!.includes(d.id));
    assert.equal(new Set(devices.map((d) => d.numaNodes[0])).size, 1, 'both devices on one NUMA node');
    const response = main.allocateResponses[GPU] as { envs: Record<string, string> };
    assert.deepEqual(response.envs['VISIBLE']?.split(',').sort(), [...main.devices[GPU]!].sort());
    const plugin = runtime.resources.get(GPU)!;
    assert.equal(plugin.registration().phase, 'registered');
  });

  test('a fault injected at the source crash-loops the container; clearing it heals the pod', async () => {
    const plugin = runtime.resources.get(GPU)!;
    const device = f.sim.state().pods.find((p) => p.name === 'trainer')!.containers[0]!.devices[GPU]![0]!;
    plugin.injectFault(device, 'ECC errors');
    await waitFor(() => f.sim.state().resources[GPU]?.allocatable === 3, 'allocatable 3');
    assert.equal(f.sim.state().resources[GPU]!.capacity, 4);
    await waitFor(
      () => (f.sim.state().pods.find((p) => p.name === 'trainer')!.containers[0]!.restartCount ?? 0) >= 2,
      'crash loop',
    );
    plugin.clearFault(device);
    await waitFor(
      () => f.sim.state().pods.find((p) => p.name === 'trainer')!.containers[0]!.state === 'running',
      'recovery',
    );
    assert.equal(f.sim.state().resources[GPU]!.allocatable, 4);
  });

  test('after a kubelet restart the plugins notice their deleted sockets and register again', async () => {
    const plugin = runtime.resources.get(GPU)!;
    const before = plugin.registration().kubeletRestartsSeen;
    await f.sim.restart();
    assert.equal(existsSync(plugin.socketPath), false);
    await waitFor(
      () => f.sim.state().resources[GPU]?.registered && f.sim.state().resources[GPU]?.allocatable === 4,
      'GPU re-registration',
      10_000,
    );
    await waitFor(() => f.sim.state().resources[ACCEL]?.registered, 'accel re-registration', 10_000);
    assert.ok(plugin.registration().kubeletRestartsSeen > before);
    assert.equal(f.sim.state().resources[GPU]!.allocated.length, 2, 'the trainer pod keeps its devices');
    await f.sim.admitPod(pod('after-restart', { [ACCEL]: 1 }));
    assert.equal(
      f.sim.state().pods.find((p) => p.name === 'after-restart')!.containers[0]!.devices[ACCEL]!.length,
      1,
    );
  });
});
