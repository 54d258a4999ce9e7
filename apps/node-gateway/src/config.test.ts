import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadGatewayConfig, parseGatewayConfig } from './config.js';
import { GatewayError } from './errors.js';

const dir = mkdtempSync(join(tmpdir(), 'pb-gw-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const resources = [{ name: 'plugboard.example/gpu', simulated: { count: 2 } }];

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

test('defaults: loopback listen, faults off, kube auto → disabled outside a cluster, kubelet paths', () => {
  const c = parseGatewayConfig({ resources }, { env: {} });
  assert.deepEqual(c.listen, { host: '127.0.0.1', port: 9400 });
  assert.equal(c.faults.enabled, false);
  assert.equal(c.kube.mode, 'disabled');
  assert.equal(c.podResources.socket, '/var/lib/kubelet/pod-resources/kubelet.sock');
  assert.equal(c.podResources.pollIntervalMs, 1000);
  assert.equal(c.devicePluginDir, '/var/lib/kubelet/device-plugins/');
  assert.ok(Object.isFrozen(c) && Object.isFrozen(c.stream));
  assert.ok(Object.isFrozen(c.kube) && Object.isFrozen(c.listen) && Object.isFrozen(c.plugins.resources[0]));
  assert.equal(
    parseGatewayConfig({ resources }, { env: { KUBERNETES_SERVICE_HOST: '10.0.0.1' } }).kube.mode,
    'in-cluster',
  );
  assert.deepEqual(parseGatewayConfig({ resources, gateway: { listen: '[::1]:0' } }).listen, {
    host: '::1',
    port: 0,
  });
});

test('invalid configs name the file, the field and the reason', () => {
  const cases: [unknown, RegExp][] = [
    [{ resources, gateway: { listen: 'nope' } }, /f\.yaml: gateway\.listen: must be HOST:PORT/],
    [{ resources, gateway: { listen: '127.0.0.1:70000' } }, /gateway\.listen: port must be 0\.\.65535/],
    [
      { resources, gateway: { podResources: { pollIntervalMs: 1 } } },
      /gateway\.podResources\.pollIntervalMs/,
    ],
    [{ resources, gateway: { bogus: 1 } }, /gateway: unknown key "bogus"/],
    [{ resources, gateway: { kube: { mode: 'kubeconfig' } } }, /gateway\.kube\.kubeconfig: required/],
    [
      { resources, gateway: { auth: { kubernetes: { enabled: true } }, kube: { mode: 'disabled' } } },
      /gateway\.auth\.kubernetes\.enabled: needs the Kubernetes API/,
    ],
    [{ resources, gateway: { stream: { maxQueueBytes: 10 } } }, /gateway\.stream\.maxQueueBytes/],
    [
      {
        dra: [{ driver: 'gpu.example.com', simulated: { count: 1 } }],
        gateway: { kube: { mode: 'disabled' } },
      },
      /dra: DRA drivers need the Kubernetes API/,
    ],
    [{ resources: [{ name: 'gpu', simulated: { count: 1 } }] }, /resources\[0\]\.name/],
  ];
  for (const [doc, message] of cases) {
    assert.throws(
      () => parseGatewayConfig(doc, { source: 'f.yaml' }),
      (err: unknown) =>
        err instanceof GatewayError && err.code === 'config-invalid' && message.test(err.message),
      `${JSON.stringify(doc)} should fail with ${message}`,
    );
  }
});

test('observer: no resource and no DRA driver is a gateway with nothing of its own (the plugin CLI refuses it)', () => {
  for (const doc of [{ resources: [] }, { resources: [], dra: [] }, {}, null]) {
    const c = parseGatewayConfig(doc, { env: {} });
    assert.deepEqual([c.plugins.resources, c.plugins.dra], [[], []], JSON.stringify(doc));
  }
  // No --config at all: every default, flags and env still applied.
  const loaded = loadGatewayConfig(['--node-name', 'n1', '--listen', '127.0.0.1:0'], {
    PLUGBOARD_LOG_LEVEL: 'warn',
  });
  assert.ok(!loaded.help);
  assert.equal(loaded.config.source, '<no --config: observer>');
  assert.deepEqual(loaded.config.plugins.resources, []);
  assert.equal(loaded.config.nodeName, 'n1');
  assert.equal(loaded.config.logLevel, 'warn');
  assert.deepEqual(loaded.config.listen, { host: '127.0.0.1', port: 0 });
});

test('flags override env, env overrides the file', () => {
  const cfg = file(
    'a.yaml',
    'resources:\n  - name: plugboard.example/gpu\n    simulated: { count: 1 }\ngateway:\n  listen: 127.0.0.1:1111\n  nodeName: from-file\n  faults: { enabled: false }\n',
  );
  const env = {
    PLUGBOARD_CONFIG: cfg,
    PLUGBOARD_LISTEN: '127.0.0.1:2222',
    PLUGBOARD_NODE_NAME: 'from-env',
    PLUGBOARD_ENABLE_FAULTS: 'true',
    PLUGBOARD_ALLOWED_ORIGINS: 'http://a, http://b',
  };
  const r1 = loadGatewayConfig([], env);
  assert.ok(!r1.help);
  assert.equal(r1.config.listen.port, 2222);
  assert.equal(r1.config.nodeName, 'from-env');
  assert.equal(r1.config.faults.enabled, true);
  assert.deepEqual(r1.config.stream.allowedOrigins, ['http://a', 'http://b']);
  const r2 = loadGatewayConfig(
    [
      '--listen',
      '127.0.0.1:3333',
      '--node-name',
      'from-flag',
      '--no-kube',
      '--pod-resources-socket',
      '',
      '--state-dir',
      dir,
    ],
    env,
  );
  assert.ok(!r2.help);
  assert.equal(r2.config.listen.port, 3333);
  assert.equal(r2.config.nodeName, 'from-flag');
  assert.equal(r2.config.kube.mode, 'disabled');
  assert.equal(r2.config.podResources.socket, null);
  assert.equal(r2.config.stateDir, dir);
  const r3 = loadGatewayConfig(['--config', cfg, '--kubeconfig', '/k'], {});
  assert.ok(!r3.help && r3.config.kube.mode === 'kubeconfig' && r3.config.kube.kubeconfig === '/k');
  assert.deepEqual(loadGatewayConfig(['--help'], {}), { help: true });
});

test("DRA directories: kubelet defaults, the file, PLUGBOARD_* env and flags (the plugin CLI's names)", () => {
  const c = parseGatewayConfig({ resources }, { env: {} });
  assert.equal(c.pluginsDir, '/var/lib/kubelet/plugins');
  assert.equal(c.pluginsRegistryDir, '/var/lib/kubelet/plugins_registry');
  assert.equal(c.cdiDir, '/var/run/cdi');
  const cfg = file(
    'dirs.yaml',
    'resources:\n  - name: plugboard.example/gpu\n    simulated: { count: 1 }\ngateway:\n  pluginsDir: /file/plugins\n  pluginsRegistryDir: /file/registry\n  cdiDir: /file/cdi\n',
  );
  const fromFile = loadGatewayConfig(['--config', cfg], {});
  assert.ok(!fromFile.help);
  assert.deepEqual(
    [fromFile.config.pluginsDir, fromFile.config.pluginsRegistryDir, fromFile.config.cdiDir],
    ['/file/plugins', '/file/registry', '/file/cdi'],
  );
  const env = {
    PLUGBOARD_PLUGINS_DIR: '/env/plugins',
    PLUGBOARD_PLUGINS_REGISTRY_DIR: '/env/registry',
    PLUGBOARD_CDI_DIR: '/env/cdi',
  };
  const fromEnv = loadGatewayConfig(['--config', cfg], env);
  assert.ok(!fromEnv.help);
  assert.deepEqual(
    [fromEnv.config.pluginsDir, fromEnv.config.pluginsRegistryDir, fromEnv.config.cdiDir],
    ['/env/plugins', '/env/registry', '/env/cdi'],
  );
  const flags = ['--plugins-dir', '/f/p', '--plugins-registry-dir', '/f/r', '--cdi-dir', '/f/c'];
  const fromFlags = loadGatewayConfig(['--config', cfg, ...flags], env);
  assert.ok(!fromFlags.help);
  assert.deepEqual(
    [fromFlags.config.pluginsDir, fromFlags.config.pluginsRegistryDir, fromFlags.config.cdiDir],
    ['/f/p', '/f/r', '/f/c'],
  );
});

test('command-line errors', () => {
  const cfg = file('b.yaml', 'resources:\n  - name: plugboard.example/gpu\n    simulated: { count: 1 }\n');
  assert.throws(
    () => loadGatewayConfig(['--config', cfg, '--frobnicate'], {}),
    /invalid command line: .*frobnicate/,
  );
  assert.throws(
    () => loadGatewayConfig(['--config', cfg, '--in-cluster', '--no-kube'], {}),
    /mutually exclusive/,
  );
  assert.throws(
    () => loadGatewayConfig(['--config', join(dir, 'missing.yaml')], {}),
    /cannot read config .*missing\.yaml/,
  );
  assert.throws(
    () => loadGatewayConfig(['--config', file('c.yaml', '- a list')], {}),
    /top level must be a mapping/,
  );
  assert.throws(
    () => loadGatewayConfig(['--config', file('d.yaml', 'resources: [\n')], {}),
    /cannot read config .*d\.yaml/,
  );
});
