// The plugin against a test kubelet over real Unix sockets: registration order, options round
// trip, ListAndWatch first send and updates on fault/heal, Allocate success and every error case,
// GetPreferredAllocation, PreStartContainer, replicas, several resources per process, CDI.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status, type ServiceError } from '@grpc/grpc-js';
import type { deviceplugin } from '@plugboard/proto';
import { parsePluginConfig, startPlugins, type PluginRuntime, type SimulatedSource } from '../src/index.js';
import { healthOf, ids, TestKubelet } from './test-kubelet.js';

const GPU = 'plugboard.example/gpu';
const SHARED = 'plugboard.example/shared-gpu';
const RESET = 'plugboard.example/fpga';

describe('plugin against a test kubelet', () => {
  let kubelet: TestKubelet;
  let runtime: PluginRuntime;
  let cdiDir: string;

  before(async () => {
    kubelet = await TestKubelet.create();
    cdiDir = await mkdtemp(join(tmpdir(), 'pb-cdi-'));
    const config = parsePluginConfig(
      {
        resources: [
          {
            name: GPU,
            simulated: { count: 8, numaNodes: [0, 1], deviceNodePattern: '/dev/null' },
            exclude: ['gpu-7'],
            allocate: {
              env: { PLUGBOARD_VISIBLE_DEVICES: '{{ids}}', GPU_COUNT: '{{count}}' },
              deviceNodes: false,
              devices: [{ hostPath: '/dev/null', containerPath: '/dev/plugboard-ctl', permissions: 'r' }],
              mounts: [{ hostPath: '/opt/driver', containerPath: '/usr/local/driver', readOnly: true }],
              annotations: { 'plugboard.example/devices': '{{physicalIds}}' },
              cdi: { vendor: 'plugboard.example', class: 'gpu' },
            },
          },
          {
            name: SHARED,
            simulated: { count: 2, numaNodes: [0] },
            replicas: 3,
            failRequestsGreaterThanOne: true,
          },
          { name: RESET, simulated: { count: 2 }, preStart: { delayMs: 1 }, preferredAllocation: false },
        ],
      },
      'test-config',
    );
    const registered = Promise.all([GPU, SHARED, RESET].map((r) => kubelet.nextRegistration(r)));
    runtime = await startPlugins(config, { devicePluginDir: kubelet.dir, cdiDir });
    await registered;
    for (const plugin of runtime.resources.values()) {
      if (plugin.registration().phase !== 'registered') await once(plugin, 'registered');
    }
  });

  after(async () => {
    await runtime?.stop();
    await kubelet?.stop();
    await rm(cdiDir, { recursive: true, force: true });
  });

  it('serves before it registers, with endpoint file names relative to the directory', () => {
    for (const name of [GPU, SHARED, RESET]) {
      const registration = kubelet.registrations.find((r) => r.request.resourceName === name);
      assert.ok(registration, name);
      assert.equal(registration.socketExistedAtRegister, true);
      assert.equal(registration.request.version, 'v1beta1');
      assert.ok(!registration.request.endpoint.includes('/'), registration.request.endpoint);
      assert.equal(join(kubelet.dir, registration.request.endpoint), runtime.resources.get(name)!.socketPath);
      assert.equal(runtime.resources.get(name)!.registration().phase, 'registered');
    }
  });

  it('GetDevicePluginOptions returns exactly the options sent at registration', () => {
    const byName = new Map(kubelet.registrations.map((r) => [r.request.resourceName, r]));
    for (const [name, expected] of [
      [GPU, { preStartRequired: false, getPreferredAllocationAvailable: true }],
      [RESET, { preStartRequired: true, getPreferredAllocationAvailable: false }],
    ] as const) {
      const r = byName.get(name)!;
      assert.deepEqual(r.options, expected);
      assert.deepEqual(r.request.options, expected);
    }
  });

  it('ListAndWatch sends the full list at once, with NUMA topology and without excluded devices', async () => {
    const first = kubelet.endpoint(GPU).updates[0] ?? (await kubelet.waitForDevices(GPU, () => true));
    assert.deepEqual(ids(first), ['gpu-0', 'gpu-1', 'gpu-2', 'gpu-3', 'gpu-4', 'gpu-5', 'gpu-6']);
    assert.ok(first.every((d) => d.health === 'Healthy'));
    assert.deepEqual(first.find((d) => d.ID === 'gpu-1')?.topology?.nodes, [{ ID: 0 }]);
    assert.deepEqual(first.find((d) => d.ID === 'gpu-5')?.topology?.nodes, [{ ID: 1 }]);
    const shared = await kubelet.waitForDevices(SHARED, () => true);
    assert.deepEqual(ids(shared), [
      'shared-gpu-0::0',
      'shared-gpu-0::1',
      'shared-gpu-0::2',
      'shared-gpu-1::0',
      'shared-gpu-1::1',
      'shared-gpu-1::2',
    ]);
  });

  it('an injected fault goes out as Unhealthy and heals back, with reason and transition time', async () => {
    const gpu = runtime.resources.get(GPU)!;
    const healthEvent = once(gpu, 'health');
    gpu.injectFault('gpu-2', 'XID 79: fell off the bus');
    const unhealthy = await kubelet.waitForDevices(GPU, (d) => healthOf(d, 'gpu-2') === 'Unhealthy');
    assert.equal(unhealthy.length, 7);
    assert.equal(healthOf(unhealthy, 'gpu-3'), 'Healthy');
    const [event] = (await healthEvent) as [{ deviceId: string; health: string; reason: string }];
    assert.deepEqual(
      [event.deviceId, event.health, event.reason],
      ['gpu-2', 'Unhealthy', 'XID 79: fell off the bus'],
    );
    const device = gpu.devices().find((d) => d.id === 'gpu-2')!;
    assert.equal(device.reason, 'XID 79: fell off the bus');
    assert.equal(device.since, (event as unknown as { at: string }).at);
    assert.ok(gpu.registration().lastListAndWatchSend);

    gpu.clearFault('gpu-2');
    await kubelet.waitForDevices(GPU, (d) => healthOf(d, 'gpu-2') === 'Healthy');
    assert.equal(gpu.devices().find((d) => d.id === 'gpu-2')!.reason, null);
  });

  it('a fault from the source itself (simulated hardware) travels the same path; clearFault does not hide it', async () => {
    const gpu = runtime.resources.get(GPU)!;
    const source = runtime.sources.get(GPU) as SimulatedSource;
    source.markUnhealthy('gpu-4', 'ECC errors');
    await kubelet.waitForDevices(GPU, (d) => healthOf(d, 'gpu-4') === 'Unhealthy');
    gpu.clearFault('gpu-4');
    assert.equal(gpu.devices().find((d) => d.id === 'gpu-4')!.health, 'Unhealthy');
    source.heal('gpu-4');
    await kubelet.waitForDevices(GPU, (d) => healthOf(d, 'gpu-4') === 'Healthy');
  });

  it('faulting a physical device marks all its replicas Unhealthy', async () => {
    const shared = runtime.resources.get(SHARED)!;
    shared.injectFault('shared-gpu-1', 'thermal');
    const devices = await kubelet.waitForDevices(
      SHARED,
      (d) => healthOf(d, 'shared-gpu-1::0') === 'Unhealthy',
    );
    assert.deepEqual(
      devices.filter((d) => d.health === 'Unhealthy').map((d) => d.ID),
      ['shared-gpu-1::0', 'shared-gpu-1::1', 'shared-gpu-1::2'],
    );
    shared.clearFault('shared-gpu-1');
    await kubelet.waitForDevices(SHARED, (d) => d.every((x) => x.health === 'Healthy'));
  });

  it('Allocate builds one response per container from the template', async () => {
    const allocated = once(runtime.resources.get(GPU)!, 'allocate');
    const res = await kubelet.call<deviceplugin.AllocateRequest, deviceplugin.AllocateResponse>(
      GPU,
      'allocate',
      {
        containerRequests: [{ devicesIds: ['gpu-0', 'gpu-1'] }, { devicesIds: ['gpu-5'] }],
      },
    );
    assert.equal(res.containerResponses.length, 2);
    const [a, b] = res.containerResponses;
    assert.deepEqual(a!.envs, { PLUGBOARD_VISIBLE_DEVICES: 'gpu-0,gpu-1', GPU_COUNT: '2' });
    assert.deepEqual(b!.envs, { PLUGBOARD_VISIBLE_DEVICES: 'gpu-5', GPU_COUNT: '1' });
    assert.deepEqual(a!.devices, [
      { hostPath: '/dev/null', containerPath: '/dev/plugboard-ctl', permissions: 'r' },
    ]);
    assert.deepEqual(a!.mounts, [
      { hostPath: '/opt/driver', containerPath: '/usr/local/driver', readOnly: true },
    ]);
    assert.deepEqual(a!.annotations, { 'plugboard.example/devices': 'gpu-0,gpu-1' });
    assert.deepEqual(a!.cdiDevices, [
      { name: 'plugboard.example/gpu=gpu-0' },
      { name: 'plugboard.example/gpu=gpu-1' },
    ]);
    const [event] = (await allocated) as [{ deviceIds: string[][]; ok: boolean }];
    assert.deepEqual(event.deviceIds, [['gpu-0', 'gpu-1'], ['gpu-5']]);
    assert.equal(event.ok, true);
  });

  it('writes a CDI spec with the advertised devices', async () => {
    const spec = JSON.parse(await readFile(join(cdiDir, 'plugboard.example-gpu.json'), 'utf8')) as {
      kind: string;
      devices: { name: string; containerEdits: { deviceNodes?: { path: string }[] } }[];
    };
    assert.equal(spec.kind, 'plugboard.example/gpu');
    assert.deepEqual(
      spec.devices.map((d) => d.name),
      ['gpu-0', 'gpu-1', 'gpu-2', 'gpu-3', 'gpu-4', 'gpu-5', 'gpu-6'],
    );
    assert.deepEqual(spec.devices[0]!.containerEdits.deviceNodes, [{ path: '/dev/null' }]);
  });

  const allocateError = async (
    resource: string,
    containerRequests: deviceplugin.ContainerAllocateRequest[],
  ): Promise<ServiceError> => {
    const err = await kubelet.call(resource, 'allocate', { containerRequests }).then(
      () => assert.fail('Allocate should fail'),
      (e: ServiceError) => e,
    );
    assert.equal(err.code, status.INVALID_ARGUMENT, err.details);
    return err;
  };

  it('Allocate rejects unknown, excluded, unhealthy and duplicated IDs with INVALID_ARGUMENT naming them', async () => {
    assert.match(
      (await allocateError(GPU, [{ devicesIds: ['gpu-0', 'gpu-99'] }])).details,
      /unknown device IDs: gpu-99$/,
    );
    assert.match(
      (await allocateError(GPU, [{ devicesIds: ['gpu-7'] }])).details,
      /unknown device IDs: gpu-7/,
    );
    const gpu = runtime.resources.get(GPU)!;
    gpu.injectFault('gpu-3', 'test');
    try {
      assert.match(
        (await allocateError(GPU, [{ devicesIds: ['gpu-3'] }])).details,
        /unhealthy device IDs: gpu-3/,
      );
    } finally {
      gpu.clearFault('gpu-3');
    }
    const dup = await allocateError(GPU, [{ devicesIds: ['gpu-1'] }, { devicesIds: ['gpu-1', 'gpu-2'] }]);
    assert.match(dup.details, /duplicated device IDs: gpu-1/);
    assert.match((await allocateError(GPU, [])).details, /no container requests/);
    assert.match(
      (await allocateError(GPU, [{ devicesIds: [] }])).details,
      /container request 0 has no device IDs/,
    );
  });

  it('a shared resource with failRequestsGreaterThanOne refuses two replicas in one container', async () => {
    const err = await allocateError(SHARED, [{ devicesIds: ['shared-gpu-0::0', 'shared-gpu-1::0'] }]);
    assert.match(err.details, /asks for 2 shared devices/);
    const ok = await kubelet.call<deviceplugin.AllocateRequest, deviceplugin.AllocateResponse>(
      SHARED,
      'allocate',
      {
        containerRequests: [{ devicesIds: ['shared-gpu-1::2'] }],
      },
    );
    assert.deepEqual(ok.containerResponses[0]!.envs, { PLUGBOARD_VISIBLE_DEVICES: 'shared-gpu-1' });
  });

  it('GetPreferredAllocation prefers one NUMA node and logs the decision', async () => {
    const res = await kubelet.call<
      deviceplugin.PreferredAllocationRequest,
      deviceplugin.PreferredAllocationResponse
    >(GPU, 'getPreferredAllocation', {
      containerRequests: [
        {
          availableDeviceIDs: ['gpu-0', 'gpu-2', 'gpu-4', 'gpu-5', 'gpu-6'],
          mustIncludeDeviceIDs: [],
          allocationSize: 2,
        },
      ],
    });
    assert.deepEqual(res.containerResponses[0]!.deviceIDs, ['gpu-4', 'gpu-5']);
    const log = runtime.resources.get(GPU)!.preferredAllocationLog();
    assert.deepEqual(log.at(-1)!.chosen, ['gpu-4', 'gpu-5']);
    assert.match(log.at(-1)!.reason, /single NUMA node 1/);
    const bad = await kubelet
      .call(GPU, 'getPreferredAllocation', {
        containerRequests: [{ availableDeviceIDs: ['gpu-0'], mustIncludeDeviceIDs: [], allocationSize: 3 }],
      })
      .then(
        () => assert.fail('should fail'),
        (e: ServiceError) => e,
      );
    assert.equal(bad.code, status.INVALID_ARGUMENT);
  });

  it('PreStartContainer runs the configured hook and rejects unknown IDs', async () => {
    await kubelet.call(RESET, 'preStartContainer', { devicesIds: ['fpga-0'] });
    const err = await kubelet.call(RESET, 'preStartContainer', { devicesIds: ['fpga-9'] }).then(
      () => assert.fail('should fail'),
      (e: ServiceError) => e,
    );
    assert.equal(err.code, status.INVALID_ARGUMENT);
    assert.match(err.details, /fpga-9/);
  });

  it('a burst of changes in one turn goes out as one full list', async () => {
    const gpu = runtime.resources.get(GPU)!;
    // Earlier tests' heals must have arrived first, so that the count below is only the burst.
    await kubelet.waitForDevices(GPU, (d) => d.every((x) => x.health === 'Healthy'));
    const before = kubelet.endpoint(GPU).updates.length;
    const burst = ['gpu-0', 'gpu-1', 'gpu-2', 'gpu-3'];
    for (const id of burst) gpu.injectFault(id, 'burst');
    const devices = await kubelet.waitForDevices(GPU, (d) =>
      burst.every((id) => healthOf(d, id) === 'Unhealthy'),
    );
    assert.equal(kubelet.endpoint(GPU).updates.length, before + 1);
    assert.equal(devices.length, 7);
    for (const id of burst) gpu.clearFault(id);
    await kubelet.waitForDevices(GPU, (d) => d.every((x) => x.health === 'Healthy'));
  });

  it('many concurrent ListAndWatch streams all get the same updates', async () => {
    const { client } = kubelet.endpoint(GPU);
    const streams = Array.from({ length: 5 }, () => client.listAndWatch({}).on('error', () => undefined));
    try {
      const firsts = await Promise.all(
        streams.map(async (s) => ((await once(s, 'data')) as [deviceplugin.ListAndWatchResponse])[0]),
      );
      assert.ok(firsts.every((m) => m.devices.length === 7));
      const next = streams.map(
        async (s) => ((await once(s, 'data')) as [deviceplugin.ListAndWatchResponse])[0],
      );
      runtime.resources.get(GPU)!.injectFault('gpu-6', 'burst');
      for (const m of await Promise.all(next)) assert.equal(healthOf(m.devices, 'gpu-6'), 'Unhealthy');
    } finally {
      for (const s of streams) s.cancel();
      runtime.resources.get(GPU)!.clearFault('gpu-6');
    }
  });
});
