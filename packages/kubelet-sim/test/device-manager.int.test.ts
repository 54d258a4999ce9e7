// Registration, capacity/allocatable arithmetic, the grace period and kubelet restarts, over real
// Unix sockets against a device plugin written directly on the v1beta1 API.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { status, type ServiceError } from '@grpc/grpc-js';
import { KUBELET_CHECKPOINT_FILE } from '@plugboard/proto';
import { pod, startFixture, startWithPlugin, waitFor, type SimFixture } from './helpers.js';
import { TestPlugin } from './test-plugin.js';

/** A file's identity: its inode number alone can be reused at once, its birth and change times not. */
function socketIdentity(path: string): string {
  const s = statSync(path, { bigint: true });
  return `${s.ino}:${s.birthtimeNs}:${s.ctimeNs}`;
}

const GPU = 'example.com/gpu';

describe('Registration validation', () => {
  let f: SimFixture;
  let plugin: TestPlugin;
  const rejected: { resource: string; error: string }[] = [];
  before(async () => {
    f = await startFixture({ dialTimeoutMs: 500 });
    f.sim.on('registration-rejected', (e) => rejected.push(e));
    plugin = new TestPlugin({ dir: f.dir, resourceName: GPU, devices: [{ id: 'g0' }] });
    await plugin.start();
  });
  after(async () => {
    await plugin.stop();
    await f.cleanup();
  });

  const rejects = async (overrides: Parameters<TestPlugin['register']>[0], message: string | RegExp) => {
    await assert.rejects(plugin.register(overrides), (err: ServiceError) => {
      assert.equal(err.code, status.UNKNOWN);
      if (typeof message === 'string') assert.equal(err.details, message);
      else assert.match(err.details, message);
      return true;
    });
  };

  test('an unsupported API version is refused with the kubelet error text', async () => {
    await rejects(
      { version: 'v1alpha' },
      'requested API version "v1alpha" is not supported by kubelet. Supported version is ["v1beta1"]',
    );
  });

  for (const name of [
    'gpu',
    'kubernetes.io/gpu',
    'example.kubernetes.io/gpu',
    'requests.example.com/gpu',
    'example.com/gp u',
    'Example.com/gpu',
    'example.com/',
  ]) {
    test(`resource name ${JSON.stringify(name)} is not a valid extended resource name`, async () => {
      await rejects({ resourceName: name }, `the ResourceName "${name}" is invalid`);
    });
  }

  test('the endpoint must be a socket file name inside the device-plugin directory', async () => {
    await rejects({ endpoint: '../escape.sock' }, /must be a socket file name inside/);
    await rejects({ endpoint: join(f.dir, plugin.socketName) }, /must be a socket file name inside/);
    await rejects({ endpoint: 'missing.sock' }, /missing\.sock: no such file or directory/);
    writeFileSync(join(f.dir, 'plain-file'), 'not a socket');
    await rejects({ endpoint: 'plain-file' }, /plain-file is not a Unix socket/);
    await rejects({ endpoint: 'kubelet.sock' }, /kubelet's own socket/);
  });

  test('a socket that does not serve the device-plugin API fails GetDevicePluginOptions', async () => {
    const path = join(f.dir, 'not-grpc.sock');
    const server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(path, r));
    try {
      await rejects(
        { endpoint: 'not-grpc.sock' },
        /^failed to (get device plugin options|dial device plugin)/,
      );
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  test('rejections are emitted and nothing is registered', () => {
    assert.equal(f.sim.state().resources[GPU], undefined);
    assert.ok(rejected.length >= 14, `${rejected.length} rejections seen`);
    assert.ok(
      rejected.some(
        (e) =>
          e.resource === 'kubernetes.io/gpu' && e.error === 'the ResourceName "kubernetes.io/gpu" is invalid',
      ),
    );
  });
});

describe('Capacity and allocatable', () => {
  let f: SimFixture;
  let plugin: TestPlugin;
  before(async () => {
    f = await startFixture({ gracePeriodMs: 400 });
    // The request claims no options; the kubelet keeps what GetDevicePluginOptions answers.
    plugin = new TestPlugin({
      dir: f.dir,
      resourceName: GPU,
      devices: [
        { id: 'g0', numa: [0] },
        { id: 'g1', numa: [0] },
        { id: 'g2', numa: [1] },
        { id: 'g3', health: 'Unhealthy' },
      ],
      getPreferredAllocationAvailable: true,
      preStartRequired: true,
    });
    await plugin.start();
    await plugin.register({ options: { preStartRequired: false, getPreferredAllocationAvailable: false } });
  });
  after(async () => {
    await plugin.stop();
    await f.cleanup();
  });

  const node = () => f.sim.state().resources[GPU];

  test('GetDevicePluginOptions is called during Register and its answer is kept', async () => {
    assert.equal(plugin.calls.options, 1);
    const r = await waitFor(() => node(), 'resource');
    assert.deepEqual(r.options, { preStartRequired: true, getPreferredAllocationAvailable: true });
    assert.equal(r.registered, true);
    assert.equal(r.endpoint, plugin.socketPath);
  });

  test('capacity counts every device, allocatable only healthy ones', async () => {
    const r = await waitFor(() => (node()?.capacity === 4 ? node() : undefined), 'capacity 4');
    assert.equal(r.allocatable, 3);
    assert.deepEqual(
      r.devices.map((d) => [d.id, d.health, d.numaNodes]),
      [
        ['g0', 'Healthy', [0]],
        ['g1', 'Healthy', [0]],
        ['g2', 'Healthy', [1]],
        ['g3', 'Unhealthy', []],
      ],
    );
  });

  test('a fault lowers allocatable only; a heal restores it', async () => {
    plugin.setHealth('g1', 'Unhealthy');
    await waitFor(() => node()?.allocatable === 2, 'allocatable 2');
    assert.equal(node()?.capacity, 4);
    plugin.setHealth('g3', 'Healthy');
    plugin.setHealth('g1', 'Healthy');
    await waitFor(() => node()?.allocatable === 4, 'allocatable 4');
    assert.equal(node()?.capacity, 4);
  });

  test('a gone plugin keeps capacity for the grace period with allocatable 0, then drops to 0', async () => {
    const removed = new Promise<void>((r) => f.sim.on('resource-removed', () => r()));
    const started = Date.now();
    await plugin.stop();
    const during = await waitFor(() => (node()?.registered === false ? node() : undefined), 'disconnect');
    assert.equal(during.capacity, 4);
    assert.equal(during.allocatable, 0);
    assert.ok(during.graceExpiresAt);
    await removed;
    assert.ok(Date.now() - started >= 350, 'capacity dropped before the grace period');
    assert.equal(node()?.capacity, 0);
    assert.equal(node()?.removed, true);
    // The node keeps reporting the resource, at zero.
    const res = await fetch(`${f.sim.url}/api/v1/nodes/sim-node`);
    const obj = (await res.json()) as {
      status: { capacity: Record<string, string>; allocatable: Record<string, string> };
    };
    assert.equal(obj.status.capacity[GPU], '0');
    assert.equal(obj.status.allocatable[GPU], '0');
  });

  test('registering again within or after the grace period restores the resource', async () => {
    await plugin.start();
    await plugin.register();
    await waitFor(() => node()?.allocatable === 4 && node()?.registered, 're-registration');
    assert.equal(node()?.removed, false);
  });
});

describe('Kubelet restart', () => {
  let f: SimFixture;
  let plugin: TestPlugin;
  let stop: () => Promise<void>;
  before(async () => {
    ({ f, plugin, stop } = await startWithPlugin(
      {},
      { resourceName: GPU, devices: [{ id: 'g0' }, { id: 'g1' }, { id: 'g2' }] },
    ));
  });
  after(() => stop());

  test('deletes every socket, keeps the checkpoint, serves a new kubelet.sock; allocations survive', async () => {
    await f.sim.admitPod(pod('before-restart', { [GPU]: 2 }));
    const allocated = f.sim.state().pods[0]!.containers[0]!.devices[GPU]!;
    assert.equal(allocated.length, 2);
    writeFileSync(join(f.dir, 'unrelated.txt'), 'kept');
    // Inode numbers can be reused, so a socket's identity is its inode with its birth and change
    // times: another identity is a socket removed and created again (no inotify needed).
    const kubeletSock = join(f.dir, 'kubelet.sock');
    const before = socketIdentity(kubeletSock);

    await f.sim.restart();
    assert.notEqual(socketIdentity(kubeletSock), before, 'kubelet.sock removed and recreated');

    assert.equal(existsSync(plugin.socketPath), false, 'the plugin socket was deleted');
    assert.ok(existsSync(join(f.dir, KUBELET_CHECKPOINT_FILE)), 'the checkpoint stays');
    assert.ok(existsSync(join(f.dir, 'unrelated.txt')), 'non-socket files stay');
    assert.deepEqual(
      readdirSync(f.dir).filter((n) => n.endsWith('.sock')),
      ['kubelet.sock'],
    );
    const r = f.sim.state().resources[GPU]!;
    assert.equal(r.registered, false);
    assert.equal(r.capacity, 0, 'capacity is zero until the plugin registers again');
    assert.deepEqual(r.allocated, [...allocated].sort());

    // The plugin notices (its socket is gone), serves again and re-registers.
    await plugin.stop();
    await plugin.start();
    await plugin.register();
    await waitFor(() => f.sim.state().resources[GPU]?.allocatable === 3, 're-registration');
    // The restored allocation still holds: only one device is free.
    await assert.rejects(f.sim.admitPod(pod('too-big', { [GPU]: 2 })), /Requested: 2, Available: 1/);
    const ok = await f.sim.admitPod(pod('fits', { [GPU]: 1 }));
    const got = f.sim.state().pods.find((p) => p.name === 'fits')!.containers[0]!.devices[GPU]!;
    assert.equal(ok.metadata.name, 'fits');
    assert.equal(got.length, 1);
    assert.ok(!allocated.includes(got[0]!));
  });
});

describe('Checkpoint', () => {
  let f: SimFixture;
  let plugin: TestPlugin;
  let stop: () => Promise<void>;
  before(async () => {
    ({ f, plugin, stop } = await startWithPlugin(
      {},
      { resourceName: GPU, devices: [{ id: 'g0' }, { id: 'g1' }, { id: 'g2' }, { id: 'g3' }] },
    ));
  });
  after(() => stop());

  test('after a burst of ListAndWatch updates the last device state is on disk, and a restart keeps it', async () => {
    const file = join(f.dir, KUBELET_CHECKPOINT_FILE);
    const registered = () =>
      (
        JSON.parse(readFileSync(file, 'utf8')) as { Data: { RegisteredDevices: Record<string, string[]> } }
      ).Data.RegisteredDevices[GPU]?.sort();
    // 200 messages on the plugin's stream; g1 ends Unhealthy, the others Healthy.
    for (let i = 0; i < 200; i++) {
      plugin.setHealth(`g${i % 4}`, 'Unhealthy');
      plugin.setHealth(`g${i % 4}`, 'Healthy');
    }
    plugin.setHealth('g1', 'Unhealthy');
    await waitFor(
      () =>
        f.sim.state().resources[GPU]?.devices.every((d) => (d.id === 'g1') === (d.health === 'Unhealthy')),
      'the last ListAndWatch message',
    );
    await waitFor(() => registered()?.join() === 'g0,g2,g3', 'the last state in the checkpoint');

    await f.sim.restart();
    assert.deepEqual(registered(), ['g0', 'g2', 'g3'], 'a restart keeps it');
    assert.equal(
      f.sim.state().resources[GPU]?.capacity,
      0,
      'restored without devices until the plugin returns',
    );
  });
});
