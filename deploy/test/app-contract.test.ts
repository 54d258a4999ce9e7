// The chart against the real applications: the gateway's own config loader accepts the rendered
// container arguments and config.yaml (and reads them as the chart means them), the DRA drivers find
// their directories where the chart mounts them, and the web server's config loader accepts the
// rendered environment and discovers the gateways the chart labels.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadGatewayConfig, type GatewayConfig } from '@plugboard/node-gateway';
import { DEFAULT_CDI_SPEC_DIR, draDriverConfigSchema, faultDirOf } from '@plugboard/plugin';
import { KUBELET_PLUGINS_PATH, PLUGINS_REGISTRY_PATH } from '@plugboard/proto';
import {
  asArray,
  at,
  chartDir,
  fixture,
  isObject,
  only,
  render,
  repoRoot,
  type K8sObject,
  type RenderOptions,
} from './helm.js';

const dir = mkdtempSync(join(tmpdir(), 'plugboard-contract-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const NODE = 'node-a';
/** What the kubelet gives the pod: the downward API values and the in-cluster service env. */
const podEnv = { NODE_NAME: NODE, POD_NAMESPACE: 'plugboard', KUBERNETES_SERVICE_HOST: '10.96.0.1' };

function containerOf(objects: K8sObject[], kind: string, name: string): Record<string, unknown> {
  const c = asArray(at(only(objects, kind), 'spec', 'template', 'spec', 'containers')).find(
    (x) => at(x, 'name') === name,
  );
  assert.ok(isObject(c));
  return c;
}

/** Loads the gateway config exactly as the DaemonSet would start it (config file from the ConfigMap). */
function gatewayConfigFor(
  name: string,
  opts: RenderOptions,
): { config: GatewayConfig; objects: K8sObject[] } {
  const objects = render(opts);
  const configFile = join(dir, `${name}.yaml`);
  writeFileSync(configFile, String(at(only(objects, 'ConfigMap', '-gateway'), 'data', 'config.yaml')));
  const args = asArray(containerOf(objects, 'DaemonSet', 'gateway').args).map((a) =>
    String(a)
      .replace('--config=/etc/plugboard/config.yaml', `--config=${configFile}`)
      .replace('$(NODE_NAME)', podEnv.NODE_NAME),
  );
  const result = loadGatewayConfig(args, podEnv);
  assert.equal(result.help, false);
  assert.ok(!result.help);
  return { config: result.config, objects };
}

describe('gateway accepts the chart', () => {
  it('defaults: an observer (no resource, no DRA driver), in-cluster, token auth, faults off, kubelet paths, state dir, node name', () => {
    const { config } = gatewayConfigFor('defaults', {});
    assert.equal(config.nodeName, NODE);
    assert.deepEqual(config.listen, { host: '0.0.0.0', port: 9400 });
    assert.equal(config.devicePluginDir, '/var/lib/kubelet/device-plugins');
    assert.equal(config.podResources.socket, '/var/lib/kubelet/pod-resources/kubelet.sock');
    assert.equal(config.podResources.pollIntervalMs, 1000);
    assert.equal(config.stateDir, '/var/lib/plugboard');
    assert.equal(config.kube.mode, 'in-cluster');
    assert.equal(config.auth.tokenFile, '/etc/plugboard/auth/token');
    assert.equal(config.auth.kubernetes.enabled, false);
    assert.equal(config.auth.insecureAllowUnauthenticated, false);
    assert.equal(config.faults.enabled, false);
    assert.equal(config.topology.configz.enabled, false, 'no nodes/proxy permission: configz is not read');
    assert.deepEqual(config.plugins.resources, []);
    assert.deepEqual(config.plugins.dra, []);
  });

  it('examples/simulated-gpus.values.yaml: the gateway serves eight simulated GPUs on two NUMA nodes', () => {
    const { config } = gatewayConfigFor('simulated-gpus', {
      valuesFiles: [join(chartDir, 'examples/simulated-gpus.values.yaml')],
    });
    assert.deepEqual(
      config.plugins.resources.map((r) => [r.name, r.simulated?.count, r.simulated?.numaNodes]),
      [['plugboard.example/gpu', 8, [0, 1]]],
    );
  });

  it('every feature on: kubernetes auth with the chart attributes, faults on, every device source', () => {
    const { config } = gatewayConfigFor('all', { valuesFiles: [fixture('all-features.values.yaml')] });
    assert.equal(config.auth.tokenFile, null);
    assert.deepEqual(
      { ...config.auth.kubernetes },
      { enabled: true, group: 'plugboard.io', resource: 'faults', verb: 'create', namespace: null },
    );
    assert.equal(config.faults.enabled, true);
    assert.equal(config.topology.configz.enabled, true, 'gateway.rbac.nodesProxy: configz is read');
    assert.equal(config.stream.heartbeatMs, 15000);
    assert.deepEqual(
      config.plugins.resources.map((r) => r.name),
      ['plugboard.example/gpu', 'plugboard.example/serial', 'plugboard.example/nic-vf'],
    );
    assert.deepEqual(
      config.plugins.dra.map((d) => d.driver),
      ['gpu.plugboard.example'],
    );
    assert.deepEqual(config.plugins.dra[0]?.attributes, {
      productName: { string: 'Plugboard PB-100 ({{name}})' },
    });
  });

  it('DRA drivers only: the gateway parses config.dra and finds their directories where the chart mounts them', () => {
    const drivers = [
      { driver: 'gpu.plugboard.example', simulated: { count: 4, numaNodes: [0, 1] }, replicas: 2 },
      { driver: 'nic.plugboard.example', sysfsPci: { vendor: '0x8086' }, taints: { effect: 'NoExecute' } },
    ];
    const { config, objects } = gatewayConfigFor('dra', {
      values: {
        config: { resources: [], dra: drivers },
        gateway: { hostPaths: { sys: { enabled: true, path: '/sys' } } },
      },
    });
    assert.deepEqual(config.plugins.resources, []);
    assert.deepEqual(
      config.plugins.dra.map((d) => [d.driver, d.replicas, d.taints?.effect ?? null]),
      [
        ['gpu.plugboard.example', 2, null],
        ['nic.plugboard.example', 1, 'NoExecute'],
      ],
    );
    // The gateway reads its DRA directories from the chart's flags: each is where the chart mounts
    // the host directory, and the default render names the plugin's own defaults.
    const mountPaths = asArray(containerOf(objects, 'DaemonSet', 'gateway').volumeMounts).map((m) =>
      at(m, 'mountPath'),
    );
    assert.equal(config.pluginsDir, KUBELET_PLUGINS_PATH);
    assert.equal(config.pluginsRegistryDir, PLUGINS_REGISTRY_PATH.replace(/\/$/, ''));
    assert.equal(config.cdiDir, DEFAULT_CDI_SPEC_DIR);
    for (const path of [
      ...drivers.map((d) => `${config.pluginsDir}/${d.driver}`),
      config.pluginsRegistryDir,
      config.cdiDir,
    ]) {
      assert.ok(mountPaths.includes(path), `${path} is mounted (${mountPaths.join(', ')})`);
    }
  });

  it('DRA drivers with a moved kubelet root: the gateway serves the drivers under the moved plugins directory', () => {
    const driver = 'gpu.plugboard.example';
    const root = '/var/snap/microk8s/common/var/lib/kubelet';
    const { config, objects } = gatewayConfigFor('dra-moved', {
      values: {
        config: { dra: [{ driver, simulated: { count: 1 } }] },
        gateway: {
          hostPaths: {
            plugins: `${root}/plugins/`,
            pluginsRegistry: { enabled: false, path: `${root}/plugins_registry` },
            cdi: { enabled: false, path: '/etc/cdi' },
          },
        },
      },
    });
    assert.equal(config.pluginsDir, `${root}/plugins`);
    // plugins_registry and CDI keep their container paths: only the host side moved.
    assert.equal(config.pluginsRegistryDir, PLUGINS_REGISTRY_PATH.replace(/\/$/, ''));
    assert.equal(config.cdiDir, DEFAULT_CDI_SPEC_DIR);
    const mountPaths = asArray(containerOf(objects, 'DaemonSet', 'gateway').volumeMounts).map((m) =>
      at(m, 'mountPath'),
    );
    for (const path of [`${config.pluginsDir}/${driver}`, config.pluginsRegistryDir, config.cdiDir]) {
      assert.ok(mountPaths.includes(path), `${path} is mounted (${mountPaths.join(', ')})`);
    }
    // The driver's default fault directory lies in its own (writable) mount.
    const faultDir = faultDirOf(config.plugins.dra[0]!, config.pluginsDir);
    assert.equal(faultDir, `${root}/plugins/${driver}/faults`);
  });

  it("the chart schema's DRA driver keys are the plugin's `dra:` keys", () => {
    const schema: unknown = JSON.parse(readFileSync(join(chartDir, 'values.schema.json'), 'utf8'));
    const chartKeys = Object.keys(at(schema, 'definitions', 'draDriver', 'properties') as object);
    assert.deepEqual(chartKeys.sort(), Object.keys(draDriverConfigSchema.shape).sort());
  });

  it('a DRA driver the chart schema lets through but the gateway refuses fails at its startup, naming the field', () => {
    assert.throws(
      () =>
        gatewayConfigFor('dra-bad', {
          values: {
            config: {
              dra: [
                {
                  driver: 'gpu.plugboard.example',
                  simulated: { count: 1 },
                  attributes: { serial: { string: '{{serial}}' } },
                },
              ],
            },
          },
        }),
      /dra\[0\]\.attributes\.serial.*unknown template variable/,
    );
  });

  it('no Kubernetes API, IPv6 listen, a custom token key, tuned gateway keys', () => {
    const { config } = gatewayConfigFor('minimal', {
      values: {
        auth: { token: { existingSecret: 'mine', secretKey: 'bearer' } },
        gateway: {
          kubernetesApi: 'none',
          listenAddress: '::',
          podResourcesPollIntervalMs: 250,
          logLevel: 'debug',
        },
        // As the chart README shows: history tiers and the stream's resume window through config.gateway.
        config: {
          gateway: {
            faults: { maxActive: 16 },
            history: { tiers: [{ resolutionMs: 60_000, retentionMs: 604_800_000 }] },
            stream: { historySize: 4096 },
          },
        },
      },
    });
    assert.equal(config.kube.mode, 'disabled');
    assert.deepEqual(config.listen, { host: '::', port: 9400 });
    assert.equal(config.auth.tokenFile, '/etc/plugboard/auth/bearer');
    assert.equal(config.podResources.pollIntervalMs, 250);
    assert.equal(config.logLevel, 'debug');
    assert.equal(config.faults.maxActive, 16);
    assert.deepEqual(config.history.tiers, [{ resolutionMs: 60_000, retentionMs: 604_800_000 }]);
    assert.equal(config.stream.historySize, 4096);
    assert.equal(config.faults.enabled, false, 'config.gateway merges into, not over, the generated section');
  });

  it('a config.gateway key the gateway does not know fails at its startup, naming the field', () => {
    assert.throws(
      () => gatewayConfigFor('typo', { values: { config: { gateway: { faults: { enabeld: true } } } } }),
      /gateway\.faults.*enabeld|enabeld/,
    );
  });
});

describe('web accepts the chart', () => {
  /** Runs the web server's own config loader (apps/web/server/config.ts) on the rendered env. */
  function loadWebConfig(env: Record<string, string>): { status: number; stdout: string; stderr: string } {
    const script = `
      const { loadWebConfig } = await import(${JSON.stringify(join(repoRoot, 'apps/web/server/config.ts'))});
      process.stdout.write(JSON.stringify(loadWebConfig(process.env)));`;
    const res = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: repoRoot,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    return { status: res.status ?? 1, stdout: res.stdout, stderr: res.stderr };
  }

  it('discovers the gateways in Kubernetes with the selector, namespace and port the chart renders', () => {
    const objects = render({
      values: { faults: { enabled: true }, web: { allowedOrigins: ['https://ops.example.com'] } },
    });
    const env: Record<string, string> = {};
    for (const e of asArray(containerOf(objects, 'Deployment', 'web').env)) {
      const name = String(at(e, 'name'));
      const value = at(e, 'value');
      const fieldPath = at(e, 'valueFrom', 'fieldRef', 'fieldPath');
      if (typeof value === 'string') env[name] = value;
      else if (fieldPath === 'metadata.namespace') env[name] = 'plugboard';
      else assert.fail(`${name}: unexpected env source`);
    }
    const res = loadWebConfig(env);
    assert.equal(res.status, 0, res.stderr);
    const config: unknown = JSON.parse(res.stdout);
    assert.deepEqual(at(config, 'discovery'), {
      mode: 'kubernetes',
      selector:
        'app.kubernetes.io/component=gateway,app.kubernetes.io/instance=pb,app.kubernetes.io/name=plugboard',
      namespace: 'plugboard',
      port: 9400,
      scheme: 'http',
    });
    assert.equal(at(config, 'host'), '0.0.0.0');
    assert.equal(at(config, 'port'), 3000);
    assert.equal(at(config, 'faultsEnabled'), true);
    assert.deepEqual(at(config, 'allowedOrigins'), ['https://ops.example.com']);
    assert.equal(at(config, 'readToken'), null);
  });
});
