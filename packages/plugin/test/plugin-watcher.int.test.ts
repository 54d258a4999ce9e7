// plugin-watcher registration mode against a test plugin watcher written here: the plugin serves
// pluginregistration.Registration in the registry directory; the "kubelet" calls GetInfo, dials
// the advertised endpoint, then reports NotifyRegistrationStatus.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, readdir, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, type ServiceError } from '@grpc/grpc-js';
import { deviceplugin, pluginregistration } from '@plugboard/proto';
import {
  parsePluginConfig,
  startPlugins,
  type PluginRuntime,
  type ResourcePluginEvents,
} from '../src/index.js';

const NIC = 'plugboard.example/nic-vf';

function unary<Res>(fn: (cb: (err: ServiceError | null, res: Res) => void) => void): Promise<Res> {
  return new Promise((resolve, reject) => fn((err, res) => (err ? reject(err) : resolve(res))));
}

describe('plugin-watcher registration', () => {
  let devicePluginDir: string;
  let registryDir: string;
  let runtime: PluginRuntime;

  before(async () => {
    devicePluginDir = await mkdtemp(join(tmpdir(), 'pb-dp-'));
    registryDir = await mkdtemp(join(tmpdir(), 'pb-reg-'));
    runtime = await startPlugins(
      parsePluginConfig({ resources: [{ name: NIC, simulated: { count: 2, idPrefix: 'vf' } }] }),
      {
        devicePluginDir,
        registrationMode: 'plugin-watcher',
        pluginsRegistryDir: registryDir,
        restartPollIntervalMs: 100,
      },
    );
  });

  after(async () => {
    await runtime.stop();
    await rm(devicePluginDir, { recursive: true, force: true });
    await rm(registryDir, { recursive: true, force: true });
  });

  /** GetInfo, dial, ListAndWatch, NotifyRegistrationStatus; `keepStream` leaves the stream open. */
  async function discover(
    how: { keepStream?: (stream: { cancel(): void }) => void } = {},
  ): Promise<pluginregistration.PluginInfo> {
    const [socket] = await readdir(registryDir);
    assert.ok(socket, 'a registration socket in the registry directory');
    const client = new pluginregistration.RegistrationClient(
      `unix://${join(registryDir, socket)}`,
      credentials.createInsecure(),
    );
    try {
      const info = await unary<pluginregistration.PluginInfo>((cb) => client.getInfo({}, cb));
      // Dial the advertised endpoint as the device manager does, then report the result.
      const dp = new deviceplugin.DevicePluginClient(`unix://${info.endpoint}`, credentials.createInsecure());
      const options = await unary<deviceplugin.DevicePluginOptions>((cb) =>
        dp.getDevicePluginOptions({}, cb),
      );
      assert.equal(options.getPreferredAllocationAvailable, true);
      const stream = dp.listAndWatch({}).on('error', () => undefined);
      const [first] = (await once(stream, 'data')) as [deviceplugin.ListAndWatchResponse];
      assert.deepEqual(
        first.devices.map((d) => d.ID),
        ['vf-0', 'vf-1'],
      );
      if (how.keepStream) {
        how.keepStream({
          cancel: () => {
            stream.cancel();
            dp.close();
          },
        });
      } else {
        stream.cancel();
        dp.close();
      }
      await unary((cb) => client.notifyRegistrationStatus({ pluginRegistered: true, error: '' }, cb));
      return info;
    } finally {
      client.close();
    }
  }

  it('GetInfo describes a v1beta1 device plugin; NotifyRegistrationStatus completes registration', async () => {
    const nic = runtime.resources.get(NIC)!;
    assert.equal(nic.registration().phase, 'registering');
    const registered = once(nic, 'registered');
    const info = await discover();
    assert.deepEqual(info, {
      type: 'DevicePlugin',
      name: NIC,
      endpoint: nic.socketPath,
      supportedVersions: ['v1beta1'],
    });
    await registered;
    assert.equal(nic.registration().phase, 'registered');
  });

  it('a refused registration is reported with the kubelet error', async () => {
    const nic = runtime.resources.get(NIC)!;
    const [socket] = await readdir(registryDir);
    const client = new pluginregistration.RegistrationClient(
      `unix://${join(registryDir, socket!)}`,
      credentials.createInsecure(),
    );
    const failed = once(nic, 'registration-error');
    await unary((cb) =>
      client.notifyRegistrationStatus({ pluginRegistered: false, error: 'resource name conflict' }, cb),
    );
    client.close();
    const [event] = (await failed) as ResourcePluginEvents['registration-error'];
    assert.equal(event.error, 'resource name conflict');
    assert.deepEqual(
      [nic.registration().phase, nic.registration().error],
      ['failed', 'resource name conflict'],
    );
  });

  it('sockets deleted (kubelet restart) are served again and discovery works again', async () => {
    const nic = runtime.resources.get(NIC)!;
    const restarted = once(nic, 'kubelet-restart');
    await unlink(nic.socketPath);
    await unlink(nic.registrationSocketPath!);
    await restarted;
    // The watcher reports on its own schedule; wait until both sockets are back.
    const deadline = Date.now() + 3000;
    while ((await readdir(registryDir)).length === 0 || !(await readdir(devicePluginDir)).length) {
      assert.ok(Date.now() < deadline, 'sockets re-created');
      await new Promise((r) => setTimeout(r, 20));
    }
    const registered = once(nic, 'registered');
    await discover();
    await registered;
  });

  it('the kubelet dropping the stream: waiting-for-kubelet until it discovers the plugin again', async () => {
    const nic = runtime.resources.get(NIC)!;
    let stream: { cancel(): void } | undefined;
    const registered = once(nic, 'registered');
    await discover({ keepStream: (s) => (stream = s) });
    await registered;
    assert.equal(nic.listAndWatchStreams, 1);
    const waiting = once(nic, 'waiting-for-kubelet');
    stream!.cancel();
    const [event] = (await waiting) as ResourcePluginEvents['waiting-for-kubelet'];
    assert.equal(event.cause, 'stream-closed');
    assert.equal(nic.registration().phase, 'waiting-for-kubelet');
    // The registration socket is still served: a kubelet coming back finds it.
    const again = once(nic, 'registered');
    await discover();
    await again;
    assert.equal(nic.registration().waitingSince, null);
  });
});
