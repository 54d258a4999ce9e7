// What the chart and docs promise about a running gateway, checked against a real one (in-process,
// real HTTP on port 0, real plugin servers on Unix sockets in a temp dir): the probe endpoints the
// DaemonSet and `helm test` use exist, and every metric the Grafana dashboard, the alert rules and
// the docs query is one the gateway actually exports (no dead panels, no alerts that never fire).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseGatewayConfig, startGateway, type Gateway } from '@plugboard/node-gateway';
import { asArray, at, chartDir, isObject, only, render, repoRoot } from './helm.js';
import { metricNames } from './promql.js';

const dir = mkdtempSync(join(tmpdir(), 'plugboard-metrics-'));
let gateway: Gateway;
let exported: Set<string>;
/** The gateway's /metrics answer. */
let text: string;
const types = new Map<string, string>();
/** Label names of the exported series, per metric (only metrics with at least one labelled series). */
const sampleLabels = new Map<string, string[]>();

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
        faults: { enabled: true },
      },
    },
    { env: {} },
  );
  gateway = await startGateway(config);
  // A fault gives the fault metrics series, so their labels can be compared with the docs too.
  const fault = await fetch(`${gateway.url}/api/v1/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      resource: 'plugboard.example/gpu',
      deviceId: 'gpu-1',
      reason: 'metrics contract',
    }),
  });
  assert.equal(fault.status, 201);
  const res = await fetch(`${gateway.url}/metrics`);
  assert.equal(res.status, 200);
  text = await res.text();
  exported = new Set();
  for (const match of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name = '', type = ''] = match;
    exported.add(name);
    types.set(name, type);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) exported.add(name + suffix);
  }
  for (const match of text.matchAll(/^(plugboard_\w+?)(?:_bucket|_sum|_count)?\{([^}]*)\}/gm)) {
    const [, name = '', body = ''] = match;
    const labels = [...body.matchAll(/(\w+)="/g)].map((m) => m[1]!).filter((l) => l !== 'le');
    if (types.has(name)) sampleLabels.set(name, labels.sort());
  }
});

after(async () => {
  await gateway?.stop();
  rmSync(dir, { recursive: true, force: true });
});

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

  it('exports every metric the PrometheusRule alerts on', () => {
    const rule = only(
      render({ values: { metrics: { prometheusRule: { enabled: true, force: true } } } }),
      'PrometheusRule',
    );
    const exprs = asArray(at(rule, 'spec', 'groups')).flatMap((g) =>
      asArray(at(g, 'rules')).map((r) => String(at(r, 'expr'))),
    );
    assert.equal(exprs.length, 6);
    const used = metricNames(exprs.join('\n'));
    // The heap alert also reads prom-client's default heap gauge.
    assert.match(exprs.join('\n'), /nodejs_heap_size_used_bytes/);
    used.add('nodejs_heap_size_used_bytes');
    assert.ok(used.size >= 6, `${used.size} metrics used`);
    for (const name of used) assert.ok(exported.has(name), `${name} is exported by the gateway`);
  });

  it('exports every metric docs/INSTALL.md, docs/OBSERVABILITY.md and the chart README mention', () => {
    const docs = ['docs/INSTALL.md', 'docs/OBSERVABILITY.md', 'deploy/helm/plugboard/README.md'].map((f) =>
      readFileSync(join(repoRoot, f), 'utf8'),
    );
    const used = metricNames(docs.join('\n'));
    assert.ok(used.size >= 5);
    for (const name of used) assert.ok(exported.has(name), `${name} is exported by the gateway`);
  });

  it('is documented in the metrics reference of docs/OBSERVABILITY.md: name, type and labels', () => {
    const doc = readFileSync(join(repoRoot, 'docs/OBSERVABILITY.md'), 'utf8');
    const rows = new Map<string, { type: string; labels: string[] }>();
    for (const m of doc.matchAll(/^\| `(plugboard_\w+)` \| (\w+) \| ([^|]*) \| [^|]+ \|$/gm)) {
      const labels = [...m[3]!.matchAll(/`(\w+)`/g)].map((l) => l[1]!).sort();
      rows.set(m[1]!, { type: m[2]!, labels });
    }
    const plugboard = [...types.keys()].filter((n) => n.startsWith('plugboard_')).sort();
    assert.deepEqual([...rows.keys()].sort(), plugboard, 'the table lists exactly the exported metrics');
    let labelled = 0;
    for (const [name, row] of rows) {
      assert.equal(row.type, types.get(name), `${name} type`);
      const labels = sampleLabels.get(name);
      if (labels) {
        labelled++;
        assert.deepEqual(row.labels, labels, `${name} labels`);
      }
    }
    // Every series carries at least `node`, so every row's labels are compared, except for the
    // allocations (no pod holds a device here) and the DRA series of devices, drivers and claims
    // (this gateway runs no DRA driver; apps/node-gateway/test/dra.int.test.ts reads them).
    assert.deepEqual(
      [...rows.keys()].filter((name) => !sampleLabels.has(name)).sort(),
      [
        'plugboard_container_device_allocations',
        'plugboard_dra_claim_healthy',
        'plugboard_dra_device_faulted',
        'plugboard_dra_device_healthy',
        'plugboard_dra_device_tainted',
        'plugboard_dra_devices',
        'plugboard_dra_driver_registered',
      ],
      `labels compared for ${labelled} metrics`,
    );
  });

  it('labels every series, defaults included, with the node it describes', () => {
    const series = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    assert.ok(series.length > 50, `${series.length} series`);
    for (const line of series) assert.match(line, /\{(?:[^}]*,)?node="node-a"[,}]/, line);
  });
});
