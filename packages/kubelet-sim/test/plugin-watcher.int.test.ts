// The plugin-watcher registration path (pluginregistration v1 in plugins_registry): GetInfo,
// validation with the kubelet's wording reported through NotifyRegistrationStatus, registration
// at the advertised endpoint, deregistration when the socket goes; against a raw registration
// server and against @plugboard/plugin in plugin-watcher mode.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pluginregistration } from '@plugboard/proto';
import { parsePluginConfig, startPlugins } from '@plugboard/plugin';
import { registrationServer } from './registration-server.js';
import { startFixture, waitFor, type SimFixture } from './helpers.js';
import { TestPlugin } from './test-plugin.js';

describe('plugin watcher', () => {
  let f: SimFixture;
  let registry: string;
  let plugin: TestPlugin;
  before(async () => {
    f = await startFixture({ dialTimeoutMs: 1000 }, { registry: true });
    registry = f.registry;
    plugin = new TestPlugin({
      dir: f.dir,
      resourceName: 'example.com/watched',
      devices: [{ id: 'w0' }, { id: 'w1' }],
    });
    await plugin.start();
  });
  after(async () => {
    await plugin.stop();
    await f.cleanup();
  });

  const info = (over: Partial<pluginregistration.PluginInfo>): pluginregistration.PluginInfo => ({
    type: 'DevicePlugin',
    name: 'example.com/watched',
    endpoint: plugin.socketPath,
    supportedVersions: ['v1beta1'],
    ...over,
  });

  const cases: [string, Partial<pluginregistration.PluginInfo>, string | RegExp][] = [
    [
      'an unsupported version',
      { supportedVersions: ['v1'] },
      'RegisterPlugin error -- plugin validation failed with err: manager version, v1beta1, is not among plugin supported versions [v1]',
    ],
    [
      'an invalid resource name',
      { name: 'kubernetes.io/x' },
      'RegisterPlugin error -- plugin validation failed with err: invalid name of device plugin socket: the ResourceName "kubernetes.io/x" is invalid',
    ],
    [
      'an unknown plugin type',
      { type: 'CSIPlugin' },
      /^RegisterPlugin error -- no handler registered for plugin type: CSIPlugin at socket .*bad-2\.sock$/,
    ],
    [
      'an endpoint that is not a socket',
      { endpoint: '/nonexistent/x.sock' },
      /^RegisterPlugin error -- plugin registration failed with err: failed to dial device plugin: \/nonexistent\/x\.sock is not a Unix socket$/,
    ],
  ];
  cases.forEach(([what, over, error], i) => {
    test(`${what} is reported through NotifyRegistrationStatus`, async () => {
      const reg = await registrationServer(join(registry, `bad-${i}.sock`), info(over));
      try {
        const first = await waitFor(() => reg.statuses[0], 'a registration status');
        assert.equal(first.pluginRegistered, false);
        if (typeof error === 'string') assert.equal(first.error, error);
        else assert.match(first.error, error);
        // The socket is still there, so the reconciler tries it again after its backoff (500 ms).
        const second = await waitFor(() => reg.statuses[1], 'the retried registration');
        assert.deepEqual(second, first);
      } finally {
        reg.stop();
      }
    });
  });

  test('a plugin whose GetInfo fails at first is registered when the reconciler tries again', async () => {
    const reg = await registrationServer(join(registry, 'late.sock'), info({}), 2);
    try {
      const s = await waitFor(() => reg.statuses[0], 'a registration status', 10_000);
      assert.deepEqual(s, { pluginRegistered: true, error: '' });
      assert.equal(reg.getInfoCalls(), 3, 'two failed GetInfo calls, then the one that registered');
      assert.equal(f.sim.state().resources['example.com/watched']?.registeredVia, 'plugin-watcher');
    } finally {
      reg.stop();
    }
    await waitFor(
      () => f.sim.state().resources['example.com/watched']?.registered === false,
      'deregistration',
    );
  });

  test('a valid DevicePlugin registers at its endpoint and deregisters when its socket goes', async () => {
    const reg = await registrationServer(join(registry, 'good.sock'), info({}));
    const status = await waitFor(() => reg.statuses[0], 'a registration status');
    assert.deepEqual(status, { pluginRegistered: true, error: '' });
    const r = await waitFor(
      () =>
        f.sim.state().resources['example.com/watched']?.allocatable === 2
          ? f.sim.state().resources['example.com/watched']
          : undefined,
      'devices',
    );
    assert.equal(r.registeredVia, 'plugin-watcher');
    assert.equal(r.endpoint, plugin.socketPath);
    reg.stop();
    await waitFor(
      () => f.sim.state().resources['example.com/watched']?.registered === false,
      'deregistration',
    );
    assert.equal(
      f.sim.state().resources['example.com/watched']?.capacity,
      2,
      'capacity stays for the grace period',
    );
  });
});

describe('@plugboard/plugin in plugin-watcher mode', () => {
  test('registers through plugins_registry and is told so', async () => {
    const g = await startFixture({}, { registry: true });
    const registry = g.registry;
    const runtime = await startPlugins(
      parsePluginConfig({
        resources: [{ name: 'plugboard.example/vf', simulated: { count: 3, idPrefix: 'vf' } }],
      }),
      {
        devicePluginDir: g.dir,
        registrationMode: 'plugin-watcher',
        pluginsRegistryDir: registry,
        restartPollIntervalMs: 50,
      },
    );
    try {
      await waitFor(
        () => g.sim.state().resources['plugboard.example/vf']?.allocatable === 3,
        'registration via the watcher',
      );
      assert.equal(g.sim.state().resources['plugboard.example/vf']?.registeredVia, 'plugin-watcher');
      await waitFor(
        () => runtime.resources.get('plugboard.example/vf')?.registration().phase === 'registered',
        'NotifyRegistrationStatus',
      );
      // A kubelet restart: the new plugin watcher discovers the registration socket again.
      await g.sim.restart();
      await waitFor(
        () =>
          g.sim.state().resources['plugboard.example/vf']?.registered &&
          g.sim.state().resources['plugboard.example/vf']?.allocatable === 3,
        're-registration after a kubelet restart',
        10_000,
      );
    } finally {
      await runtime.stop();
      await g.cleanup();
    }
  });
});

describe('plugin watcher without inotify', () => {
  // fs.watch with every inotify instance of the user taken (fs.inotify.max_user_instances).
  const noInotify = (): never => {
    throw Object.assign(new Error('EMFILE: too many open files, watch'), { code: 'EMFILE' });
  };

  test('kubelet-sim and the plugin poll, say so, and registration still works, also after a kubelet restart', async () => {
    const g = await startFixture({ pluginsRegistryWatch: noInotify }, { registry: true });
    const runtime = await startPlugins(
      parsePluginConfig({
        resources: [{ name: 'plugboard.example/vf', simulated: { count: 2, idPrefix: 'vf' } }],
      }),
      {
        devicePluginDir: g.dir,
        registrationMode: 'plugin-watcher',
        pluginsRegistryDir: g.registry,
        restartPollIntervalMs: 50,
        watch: noInotify,
      },
    );
    try {
      const mode = g.sim.pluginWatchMode();
      assert.equal(mode?.mode, 'poll');
      assert.match(mode?.reason ?? '', /^inotify instances exhausted \(fs\.inotify\.max_user_instances\)/);
      await waitFor(
        () => g.sim.state().resources['plugboard.example/vf']?.allocatable === 2,
        'registration found by polling',
      );
      const plugin = runtime.resources.get('plugboard.example/vf')!;
      assert.equal(plugin.registration().fileWatch.mode, 'poll');
      await g.sim.restart();
      await waitFor(
        () =>
          g.sim.state().resources['plugboard.example/vf']?.registered &&
          g.sim.state().resources['plugboard.example/vf']?.allocatable === 2,
        're-registration after a kubelet restart',
        10_000,
      );
    } finally {
      await runtime.stop();
      await g.cleanup();
    }
  });

  test('reports watch mode while fs.watch works', async () => {
    const g = await startFixture({}, { registry: true });
    try {
      assert.deepEqual(g.sim.pluginWatchMode(), { mode: 'watch', reason: null });
    } finally {
      await g.cleanup();
    }
  });
});
