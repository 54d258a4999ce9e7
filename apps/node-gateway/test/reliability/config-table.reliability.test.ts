// Invalid configuration, as a table: each example is written to a file and loaded the way each CLI
// loads it; the error names the file, the field and the reason. Both CLIs also run as processes on
// a bad file and bad flags to check their exit codes (plugin: 1 bad config, 2 bad flags; gateway: 2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPluginConfig } from '@plugboard/plugin';
import { loadGatewayConfig } from '../../src/index.js';
import { report } from './figures.js';

const OK_RESOURCES = 'resources:\n  - name: plugboard.example/gpu\n    simulated: { count: 2 }\n';

/** [what, YAML, field, reason] */
const PLUGIN_CASES: [string, string, string, RegExp][] = [
  ['resources not a list', 'resources: 5\n', 'resources', /array|list/i],
  [
    'name without a domain',
    'resources:\n  - name: gpu\n    simulated: { count: 1 }\n',
    'resources[0].name',
    /domain-prefixed/,
  ],
  [
    'native kubernetes.io name',
    'resources:\n  - name: kubernetes.io/gpu\n    simulated: { count: 1 }\n',
    'resources[0].name',
    /kubernetes\.io|native|invalid/i,
  ],
  [
    'negative device count',
    'resources:\n  - name: plugboard.example/gpu\n    simulated: { count: -1 }\n',
    'resources[0].simulated.count',
    /greater than|>=|too small|positive/i,
  ],
  [
    'unknown key',
    'resources:\n  - name: plugboard.example/gpu\n    simulated: { count: 1, extra: true }\n',
    'resources[0].simulated',
    /unknown key "extra"/,
  ],
  [
    'NUMA node not a number',
    'resources:\n  - name: plugboard.example/gpu\n    simulated: { count: 1, numaNodes: [a] }\n',
    'resources[0].simulated.numaNodes[0]',
    /number/i,
  ],
  ['YAML syntax error', 'resources: [\n', '', /line|YAML|flow|unexpected/i],
];

const GATEWAY_CASES: [string, string, string, RegExp][] = [
  ['listen not HOST:PORT', 'gateway:\n  listen: nope\n', 'gateway.listen', /HOST:PORT/],
  ['port out of range', 'gateway:\n  listen: 127.0.0.1:70000\n', 'gateway.listen', /0\.\.65535/],
  [
    'queue bound too small',
    'gateway:\n  stream: { maxQueueBytes: 10 }\n',
    'gateway.stream.maxQueueBytes',
    /1024|too small|greater/i,
  ],
  ['boolean as a string', 'gateway:\n  faults: { enabled: "yes" }\n', 'gateway.faults.enabled', /boolean/i],
  ['unknown gateway key', 'gateway:\n  listne: 127.0.0.1:1\n', 'gateway', /unknown key "listne"/],
  [
    'rate limit of zero',
    'gateway:\n  http: { mutationRateLimit: { perSecond: 0 } }\n',
    'gateway.http.mutationRateLimit.perSecond',
    /too small|greater|positive|>0/i,
  ],
  [
    'kubeconfig mode without a file',
    'gateway:\n  kube: { mode: kubeconfig }\n',
    'gateway.kube.kubeconfig',
    /required when kube\.mode is kubeconfig/,
  ],
  [
    'kube auth without the API',
    'gateway:\n  kube: { mode: disabled }\n  auth: { kubernetes: { enabled: true } }\n',
    'gateway.auth.kubernetes.enabled',
    /needs the Kubernetes API/,
  ],
  ['gateway not a mapping', 'gateway: [1]\n', 'gateway', /must be a mapping/],
  ['bad log level', 'gateway:\n  logLevel: loud\n', 'gateway.logLevel', /expected one of|invalid/i],
  [
    'bad plugin section in the gateway file',
    'resources:\n  - name: gpu\n    simulated: { count: 1 }\n',
    'resources[0].name',
    /domain-prefixed/,
  ],
];

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const PLUGIN_BIN = join(ROOT, 'packages/plugin/bin/plugboard-plugin.js');
const GATEWAY_BIN = join(ROOT, 'apps/node-gateway/bin/plugboard-gateway.js');

test(`invalid config table (${PLUGIN_CASES.length} plugin, ${GATEWAY_CASES.length} gateway): errors name file, field and reason; CLI exit codes`, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pb-rel-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const failures: string[] = [];
  const check = (what: string, file: string, message: string, field: string, reason: RegExp): void => {
    const line = message
      .split('\n')
      .find((l) => l.includes(file) && (field === '' || l.includes(`: ${field}:`)));
    if (!line) failures.push(`${what}: no line naming ${file} and ${field || 'a position'} in: ${message}`);
    else if (!reason.test(line)) failures.push(`${what}: reason does not match ${reason}: ${line}`);
  };
  let n = 0;
  for (const [what, yaml, field, reason] of PLUGIN_CASES) {
    const file = join(dir, `plugin-${n++}.yaml`);
    writeFileSync(file, yaml);
    const err = await loadPluginConfig(file).then(
      () => null,
      (e: Error) => e,
    );
    if (!err) failures.push(`plugin ${what}: accepted`);
    else check(`plugin ${what}`, file, err.message, field, reason);
  }
  for (const [what, yaml, field, reason] of GATEWAY_CASES) {
    const file = join(dir, `gateway-${n++}.yaml`);
    writeFileSync(file, yaml.startsWith('resources') ? yaml : `${OK_RESOURCES}${yaml}`);
    let err: Error | null = null;
    try {
      loadGatewayConfig(['--config', file], {});
    } catch (e) {
      err = e as Error;
    }
    if (!err) failures.push(`gateway ${what}: accepted`);
    else check(`gateway ${what}`, file, err.message, field, reason);
  }
  assert.deepEqual(failures, []);

  // Exit codes of the real processes.
  const run = (bin: string, args: string[]) =>
    spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 60_000 });
  const badPlugin = join(dir, 'plugin-1.yaml');
  const p1 = run(PLUGIN_BIN, ['--config', badPlugin, '--device-plugin-dir', dir]);
  assert.equal(p1.status, 1, p1.stderr);
  assert.ok(p1.stderr.includes(`${badPlugin}: resources[0].name: must be domain-prefixed`), p1.stderr);
  const p2 = run(PLUGIN_BIN, ['--config', badPlugin, '--log-level', 'loud']);
  assert.equal(p2.status, 2);
  assert.match(p2.stderr, /--log-level must be one of/);
  const badGateway = join(dir, `gateway-${PLUGIN_CASES.length}.yaml`);
  const g1 = run(GATEWAY_BIN, ['--config', badGateway]);
  assert.equal(g1.status, 2, g1.stderr);
  assert.ok(g1.stderr.includes(`${badGateway}: gateway.listen:`), g1.stderr);
  const g2 = run(GATEWAY_BIN, ['--config', badGateway, '--no-kube', '--in-cluster']);
  assert.equal(g2.status, 2);
  assert.match(g2.stderr, /mutually exclusive/);
  report(t, {
    scenario: 'config-table',
    figure: 'invalid configs rejected naming file, field and reason',
    value: PLUGIN_CASES.length + GATEWAY_CASES.length,
  });
});
