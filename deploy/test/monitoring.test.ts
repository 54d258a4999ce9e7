// The chart's Prometheus Operator objects and the Grafana dashboard: they render only where the
// monitoring.coreos.com/v1 API exists (or when forced), validate against the operator's CRD schema,
// every alert expression parses as PromQL and carries summary, description and runbook text that
// docs/OBSERVABILITY.md documents, and the dashboard shipped in deploy/grafana/ is the chart's.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { asArray, at, chartDir, find, k8sSchemaError, only, render, repoRoot, template } from './helm.js';
import { promqlErrors } from './promql.js';

const MONITORING_API = 'monitoring.coreos.com/v1';
const ALERTS = [
  'PlugboardDeviceUnhealthy',
  'PlugboardAllocatableLow',
  'PlugboardDevicePluginNotRegistered',
  'PlugboardKubeletRestartsFlapping',
  'PlugboardStreamClientsDropped',
  'PlugboardGatewayHeapNearLimit',
] as const;

const enabled = {
  metrics: {
    serviceMonitor: { enabled: true },
    prometheusRule: { enabled: true, runbookBaseUrl: 'https://plugboard.example/docs/OBSERVABILITY.md' },
  },
};

interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

function alertRules(objects = render({ values: enabled, apiVersions: [MONITORING_API] })): AlertRule[] {
  const rule = only(objects, 'PrometheusRule');
  return asArray(at(rule, 'spec', 'groups')).flatMap((g) => asArray(at(g, 'rules'))) as AlertRule[];
}

describe('Prometheus Operator objects', () => {
  it('are rendered only when the cluster serves monitoring.coreos.com/v1, or when forced', () => {
    const kinds = (objects: ReturnType<typeof render>) =>
      objects
        .filter((o) => o.apiVersion === MONITORING_API)
        .map((o) => o.kind)
        .sort();
    assert.deepEqual(kinds(render({ values: enabled })), [], 'no CRDs, no force: nothing');
    assert.deepEqual(kinds(render({ values: enabled, apiVersions: [MONITORING_API] })), [
      'PrometheusRule',
      'ServiceMonitor',
    ]);
    const forced = {
      metrics: {
        serviceMonitor: { enabled: true, force: true },
        prometheusRule: { enabled: true, force: true },
      },
    };
    assert.deepEqual(kinds(render({ values: forced })), ['PrometheusRule', 'ServiceMonitor']);
    assert.deepEqual(kinds(render({ apiVersions: [MONITORING_API] })), [], 'off by default');
    const podMonitor = { metrics: { podMonitor: { enabled: true } } };
    assert.deepEqual(kinds(render({ values: podMonitor })), []);
    assert.deepEqual(kinds(render({ values: podMonitor, apiVersions: [MONITORING_API] })), ['PodMonitor']);
  });

  it('has the PodMonitor select the gateway pods by their port named http', async () => {
    const objects = render({
      values: { metrics: { podMonitor: { enabled: true, interval: '15s', labels: { release: 'kps' } } } },
      apiVersions: [MONITORING_API],
    });
    const pm = only(objects, 'PodMonitor');
    assert.equal(await k8sSchemaError(pm), undefined);
    assert.equal(pm.metadata.labels?.release, 'kps');
    const ds = only(objects, 'DaemonSet', '-gateway');
    const podLabels = at(ds, 'spec', 'template', 'metadata', 'labels') as Record<string, string>;
    for (const [k, v] of Object.entries(
      at(pm, 'spec', 'selector', 'matchLabels') as Record<string, string>,
    )) {
      assert.equal(podLabels[k], v, `gateway pods carry ${k}=${v}`);
    }
    const ports = asArray(at(ds, 'spec', 'template', 'spec', 'containers', 0, 'ports'));
    assert.ok(ports.some((p) => at(p, 'name') === at(pm, 'spec', 'podMetricsEndpoints', 0, 'port')));
    assert.equal(at(pm, 'spec', 'podMetricsEndpoints', 0, 'interval'), '15s');
  });

  it('leave node identity to the gateway: no relabeling, the scraped labels honoured', () => {
    // The gateway labels every series with its node, so every scrape path (ServiceMonitor,
    // PodMonitor, pod annotations) yields the same series; deploy/test/prometheus.int.test.ts
    // checks the alerts and panels on them.
    const objects = render({
      values: { metrics: { serviceMonitor: { enabled: true }, podMonitor: { enabled: true } } },
      apiVersions: [MONITORING_API],
    });
    const endpoints = [
      at(only(objects, 'ServiceMonitor'), 'spec', 'endpoints', 0),
      at(only(objects, 'PodMonitor'), 'spec', 'podMetricsEndpoints', 0),
    ];
    for (const endpoint of endpoints) {
      assert.equal(at(endpoint, 'honorLabels'), true);
      assert.equal(at(endpoint, 'relabelings'), undefined);
      assert.equal(at(endpoint, 'metricRelabelings'), undefined);
    }
  });

  it('keeps the plain prometheus.io scrape annotations for Prometheus without the operator', () => {
    const ds = only(render(), 'DaemonSet', '-gateway');
    const annotations = at(ds, 'spec', 'template', 'metadata', 'annotations') as Record<string, string>;
    assert.equal(annotations['prometheus.io/scrape'], 'true');
    assert.equal(annotations['prometheus.io/path'], '/metrics');
    assert.equal(annotations['prometheus.io/port'], '9400');
  });

  it('validate against the prometheus-operator CRD schemas', async () => {
    const objects = render({ values: enabled, apiVersions: [MONITORING_API] });
    for (const obj of find(objects, 'PrometheusRule').concat(find(objects, 'ServiceMonitor'))) {
      const error = await k8sSchemaError(obj);
      assert.equal(error, undefined, `${obj.kind}/${obj.metadata.name}: ${error}`);
    }
  });

  it('has the six alerts, each with valid PromQL, a severity and runbook text', () => {
    const rules = alertRules();
    assert.deepEqual(rules.map((r) => r.alert).sort(), [...ALERTS].sort());
    for (const rule of rules) {
      assert.deepEqual(promqlErrors(rule.expr), [], `${rule.alert}: ${rule.expr}`);
      assert.match(rule.labels.severity ?? '', /^(critical|warning|info)$/, rule.alert);
      for (const key of ['summary', 'description', 'runbook']) {
        assert.ok((rule.annotations[key] ?? '').length > 20, `${rule.alert} has a ${key}`);
      }
      assert.match(rule.annotations.runbook ?? '', /^1\. /m, `${rule.alert}: runbook is numbered steps`);
      assert.equal(
        rule.annotations.runbook_url,
        `https://plugboard.example/docs/OBSERVABILITY.md#${rule.alert.toLowerCase()}`,
      );
      // Prometheus' alert templates survive Helm: the summary still names the labels.
      assert.match(rule.annotations.summary ?? '', /\{\{ \$labels\.\w+ \}\}/, `${rule.alert} summary`);
    }
  });

  it('follows the thresholds and windows given in the values', () => {
    const rules = alertRules(
      render({
        apiVersions: [MONITORING_API],
        values: {
          metrics: {
            prometheusRule: {
              enabled: true,
              alertLabels: { team: 'gpu-platform' },
              deviceUnhealthy: { for: '2m', severity: 'critical', includeSimulatedFaults: true },
              allocatableLow: { ratio: 0.5, for: '1h' },
              kubeletRestartsFlapping: { threshold: 5, window: '1h' },
              streamClientsDropped: { enabled: false },
            },
          },
        },
      }),
    );
    const byName = new Map(rules.map((r) => [r.alert, r]));
    assert.equal(byName.has('PlugboardStreamClientsDropped'), false);
    const unhealthy = byName.get('PlugboardDeviceUnhealthy')!;
    assert.equal(unhealthy.for, '2m');
    assert.equal(unhealthy.labels.severity, 'critical');
    assert.doesNotMatch(unhealthy.expr, /plugboard_device_faulted/, 'drills included: no "unless faulted"');
    assert.match(
      byName.get('PlugboardAllocatableLow')!.expr,
      /< 0\.5 \* plugboard_resource_capacity_devices/,
    );
    assert.equal(byName.get('PlugboardAllocatableLow')!.for, '1h');
    assert.match(byName.get('PlugboardKubeletRestartsFlapping')!.expr, /\[1h\]\)\) >= 5$/);
    for (const rule of rules) assert.equal(rule.labels.team, 'gpu-platform', rule.alert);
    assert.equal(rules[0]!.annotations.runbook_url, undefined, 'no base URL, no runbook_url');

    const defaults = new Map(alertRules().map((r) => [r.alert, r]));
    assert.match(defaults.get('PlugboardDeviceUnhealthy')!.expr, /unless on \(node, resource, device\)/);
  });

  it('refuses a PrometheusRule with every alert disabled, naming the value', () => {
    const off = { enabled: false };
    const res = template({
      apiVersions: [MONITORING_API],
      values: {
        metrics: {
          prometheusRule: {
            enabled: true,
            deviceUnhealthy: off,
            allocatableLow: off,
            pluginNotRegistered: off,
            kubeletRestartsFlapping: off,
            streamClientsDropped: off,
            gatewayHeapNearLimit: off,
          },
        },
      },
    });
    assert.notEqual(res.status, 0);
    assert.match(res.stderr, /metrics\.prometheusRule\.enabled is true but every alert is disabled/);
  });

  it('refuses a bad duration or severity through the values schema', () => {
    const res = template({
      values: { metrics: { prometheusRule: { deviceUnhealthy: { for: 'ten minutes', severity: 'page' } } } },
    });
    assert.notEqual(res.status, 0);
    assert.match(res.stderr, /deviceUnhealthy/);
  });

  it('documents every alert in docs/OBSERVABILITY.md under a heading its runbook_url points at', () => {
    const doc = readFileSync(join(repoRoot, 'docs/OBSERVABILITY.md'), 'utf8');
    for (const alert of ALERTS) assert.match(doc, new RegExp(`^### ${alert}$`, 'm'), alert);
  });
});

describe('Grafana dashboard', () => {
  it('ships the same dashboard in deploy/grafana/ (for manual import) as in the chart', () => {
    const chart = readFileSync(join(chartDir, 'dashboards/plugboard.json'), 'utf8');
    const standalone = readFileSync(join(repoRoot, 'deploy/grafana/plugboard.json'), 'utf8');
    assert.equal(
      standalone,
      chart,
      'copy deploy/helm/plugboard/dashboards/plugboard.json to deploy/grafana/',
    );
  });

  it('has every panel query parse as PromQL', () => {
    const dashboard: unknown = JSON.parse(readFileSync(join(chartDir, 'dashboards/plugboard.json'), 'utf8'));
    const exprs = asArray(at(dashboard, 'panels')).flatMap((p) =>
      asArray(at(p, 'targets')).map((t) => String(at(t, 'expr'))),
    );
    // Grafana variables are not PromQL: substitute what Grafana would.
    const substitute = (e: string) => e.replaceAll('$__rate_interval', '1m').replace(/\$(\w+)/g, '.*');
    for (const expr of exprs) assert.deepEqual(promqlErrors(substitute(expr)), [], expr);
  });

  it('filters every panel query by the node variable, and never hides missing data behind 0', () => {
    const dashboard: unknown = JSON.parse(readFileSync(join(chartDir, 'dashboards/plugboard.json'), 'utf8'));
    const exprs = asArray(at(dashboard, 'panels')).flatMap((p) =>
      asArray(at(p, 'targets')).map((t) => String(at(t, 'expr'))),
    );
    for (const expr of exprs) {
      const selectors = [...expr.matchAll(/\bplugboard_\w+(\{[^}]*\})?/g)];
      assert.ok(selectors.length > 0, expr);
      for (const [selector, matchers] of selectors) {
        assert.match(matchers ?? '', /node=~"\$node"/, `${selector} in ${expr}`);
      }
      // `or vector(0)` shows 0 when the selection matches nothing (an unscraped node, a typo).
      assert.doesNotMatch(expr, /vector\(/, expr);
    }
  });

  it('is shipped in the chart as a ConfigMap with the Grafana sidecar label', () => {
    const cm = only(
      render({ values: { metrics: { grafanaDashboard: { enabled: true } } } }),
      'ConfigMap',
      '-grafana-dashboard',
    );
    assert.equal(cm.metadata.labels?.grafana_dashboard, '1');
    const json = at(cm, 'data', 'plugboard.json');
    assert.equal(typeof json, 'string');
    assert.equal(at(JSON.parse(json as string), 'uid'), 'plugboard-devices');
  });
});
