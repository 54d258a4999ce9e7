// What the chart and docs promise about a running gateway, checked against a real one (in-process,
// real HTTP on port 0, real plugin servers on Unix sockets in a temp dir): the probe endpoints the
// DaemonSet and `helm test` use exist, and every metric the Grafana dashboard and docs/INSTALL.md
// query is one the gateway actually exports.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseGatewayConfig, startGateway, type Gateway } from '@plugboard/node-gateway';
import { asArray, at, chartDir, isObject, repoRoot } from './helm.js';

const dir = mkdtempSync(join(tmpdir(), 'plugboard-metrics-'));
let gateway: Gateway;
let exported: Set<string>;

before(async () => {
  const config = parseGatewayConfig(
    {
      resources: [{ name: 'plugboard.example/gpu', simulated: { count: 2, numaNodes: [0] } }],
      gateway: {
        nodeName: 'node-a',
        listen: '127.0.0.1:0',
        devicePluginDir: dir,
        logLevel: 'silent',
        podResources: { socket: null },
        kube: { mode: 'disabled' },
      },
    },
    { env: {} },
  );
  gateway = await startGateway(config);
  const res = await fetch(`${gateway.url}/metrics`);
  assert.equal(res.status, 200);
  const text = await res.text();
  exported = new Set();
  for (const match of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name = '', type] = match;
    exported.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) exported.add(name + suffix);
  }
});

after(async () => {
  await gateway?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Every `plugboard_*` metric name in a text (PromQL expressions, docs). */
function metricNames(text: string): Set<string> {
  return new Set(text.match(/\bplugboard_[a-z_]+[a-z]\b/g) ?? []);
}

describe('a running gateway honours the chart', () => {
  it('answers the probe paths the DaemonSet and helm test use', async () => {
    const healthz = await fetch(`${gateway.url}/healthz`);
    assert.equal(healthz.status, 200);
    const readyz = await fetch(`${gateway.url}/readyz`);
    // Not registered with a kubelet here, so not ready: but the endpoint exists and says why.
    assert.equal(readyz.status, 503);
    assert.match(readyz.headers.get('content-type') ?? '', /application\/problem\+json/);
  });

  it('exports every metric the Grafana dashboard queries', () => {
    const dashboard: unknown = JSON.parse(readFileSync(join(chartDir, 'dashboards/plugboard.json'), 'utf8'));
    const exprs = asArray(at(dashboard, 'panels')).flatMap((p) =>
      asArray(at(p, 'targets')).map((t) => String(at(t, 'expr'))),
    );
    const variables = asArray(at(dashboard, 'templating', 'list'))
      .map((v) => at(v, 'definition'))
      .filter((d): d is string => typeof d === 'string');
    assert.ok(exprs.length >= 15, `${exprs.length} queries`);
    const used = metricNames([...exprs, ...variables].join('\n'));
    assert.ok(used.size >= 15, `${used.size} metrics used`);
    for (const name of used) assert.ok(exported.has(name), `${name} is exported by the gateway`);
    for (const panel of asArray(at(dashboard, 'panels'))) {
      assert.ok(isObject(at(panel, 'gridPos')), `${String(at(panel, 'title'))} has a position`);
      assert.ok(String(at(panel, 'description')).length > 0, `${String(at(panel, 'title'))} is described`);
    }
  });

  it('exports every metric docs/INSTALL.md and the chart README mention', () => {
    const docs = ['docs/INSTALL.md', 'deploy/helm/plugboard/README.md'].map((f) =>
      readFileSync(join(repoRoot, f), 'utf8'),
    );
    const used = metricNames(docs.join('\n'));
    assert.ok(used.size >= 5);
    for (const name of used) assert.ok(exported.has(name), `${name} is exported by the gateway`);
  });
});
