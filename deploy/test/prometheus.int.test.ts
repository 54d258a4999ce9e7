// The chart's alert rules and Grafana dashboard in a real Prometheus (Debian's `prometheus`; .ci/run
// installs it). Two gateways run on kubelet-sim in this process (real plugins over Unix sockets,
// real HTTP on port 0). Prometheus scrapes them every second the way every scrape path of the chart
// does: honouring the gateway's labels, with the usual pod/namespace target labels and no `node`
// relabeling (the gateway labels every series with its node). The rules are the chart's
// PrometheusRule rendered by helm. The test causes every condition an alert watches, waits (polling
// Prometheus's HTTP API, each wait bounded) for the alert to fire with a fully rendered summary and
// to resolve once the condition ends, and evaluates every panel query of the Grafana dashboard for
// "All" and for each node against the state it caused.
//
// Durations are shortened explicitly, through the chart's own values (testRuleValues): every `for`
// is 1s and every window 10s, so a run takes about a minute instead of hours. The expressions are the
// shipped templates. One threshold differs: no test fills a real heap to 85 %, so the heap alert is
// rendered at a ratio of 0.001 to fire, then Prometheus reloads the rules with the shipped ratio and
// the alert must resolve.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { startKubeletSim, type KubeletSim, type KubeletSimOptions } from '@plugboard/kubelet-sim';
import { SimulatedSource, startPlugins, type PluginRuntime } from '@plugboard/plugin';
import type { NodeSnapshot } from '@plugboard/api';
import { parseGatewayConfig, startGateway, type Gateway } from '@plugboard/node-gateway';
import { asArray, at, chartDir, only, render } from './helm.js';
import {
  parseExposition,
  promtool,
  requireBinary,
  startPrometheus,
  until,
  type Alert,
  type Labels,
  type Prometheus,
  type Sample,
} from './prometheus.js';

const GPU = 'plugboard.example/gpu';
const NIC = 'plugboard.example/nic';
const NODE_A = 'pb-node-a';
const NODE_B = 'pb-node-b';
const NODES = [NODE_A, NODE_B] as const;
type NodeName = (typeof NODES)[number];
const SCRAPE = '1s';
const SCRAPE_SECONDS = 1;
/** What the test puts for Grafana's `$__rate_interval`: a window that holds the whole run. */
const RATE_WINDOW = '1h';
const MONITORING_API = 'monitoring.coreos.com/v1';
const silent = pino({ level: 'silent' });

/** The chart's alert values for this test: shipped expressions, short durations (see the header). */
const durations = {
  deviceUnhealthy: { for: '1s' },
  allocatableLow: { for: '1s' },
  pluginNotRegistered: { for: '1s' },
  kubeletRestartsFlapping: { window: '10s' },
  streamClientsDropped: { window: '10s' },
  gatewayHeapNearLimit: { for: '1s' },
};
/** Low enough that any gateway's heap is above it (see the header). */
const TEST_HEAP_RATIO = 0.001;
const testRuleValues = (heapRatio?: number) => ({
  metrics: {
    prometheusRule: {
      enabled: true,
      ...durations,
      gatewayHeapNearLimit: { ...durations.gatewayHeapNearLimit, ...(heapRatio ? { ratio: heapRatio } : {}) },
    },
  },
});

interface Rule {
  alert: string;
  expr: string;
  annotations: Labels;
}

/** The PrometheusRule's groups as a Prometheus rule file. */
function ruleFile(values: Record<string, unknown>): { groups: unknown[]; rules: Rule[] } {
  const rule = only(render({ values, apiVersions: [MONITORING_API] }), 'PrometheusRule');
  const groups = asArray(at(rule, 'spec', 'groups'));
  return { groups, rules: groups.flatMap((g) => asArray(at(g, 'rules'))) as Rule[] };
}

interface TestNode {
  name: NodeName;
  simOptions: KubeletSimOptions;
  sim: KubeletSim;
  plugins: PluginRuntime;
  gateway: Gateway;
  /** The kubelet restarts the plugins detected (`resource detectedBy at`), for failure messages. */
  restartsDetected: string[];
}

const root = mkdtempSync(join(tmpdir(), 'plugboard-prometheus-'));
const nodes = new Map<NodeName, TestNode>();
const node = (name: NodeName): TestNode => nodes.get(name)!;
let prom: Prometheus;
let rules: Rule[];
const rulesPath = join(root, 'rules.json');
/** Each gateway's /metrics when Prometheus had first scraped it, before the test did anything. */
const baseline = new Map<NodeName, (Sample & { name: string })[]>();
let baselineAt = 0;

/**
 * What the test did, i.e. what every alert and panel must show: active faults per node and
 * resource, devices made unhealthy (faults and real), kubelet restarts the test caused on node A,
 * the resources whose Allocate the test's pods called per node.
 */
const known = {
  /** `node|resource` → the faults in force (IDs and devices). */
  faults: new Map<string, { id: string; device: string }[]>(),
  /** `node|resource|device` of devices their own source reports unhealthy (no fault). */
  realUnhealthy: new Set<string>(),
  restartsA: 0,
  allocatedResources: new Map<NodeName, Set<string>>(NODES.map((n) => [n, new Set<string>()])),
};
const key = (...parts: string[]): string => parts.join('|');

async function startNode(
  name: NodeName,
  resources: unknown[],
  gateway: Record<string, unknown> = {},
): Promise<TestNode> {
  const dir = join(root, name);
  mkdirSync(dir);
  const simOptions: KubeletSimOptions = {
    devicePluginDir: join(dir, 'device-plugins'),
    stateDir: join(dir, 'kubelet'),
    nodeName: name,
    listen: '127.0.0.1:0',
    podResourcesRateLimit: false,
    logger: silent,
  };
  const sim = await startKubeletSim(simOptions);
  const config = parseGatewayConfig(
    {
      resources,
      gateway: {
        nodeName: name,
        listen: '127.0.0.1:0',
        devicePluginDir: sim.devicePluginDir,
        stateDir: join(dir, 'gateway'),
        logLevel: 'silent',
        podResources: { socket: sim.podResourcesSocket, pollIntervalMs: 200, maxBackoffMs: 400 },
        kube: { mode: 'kubeconfig', kubeconfig: sim.kubeconfigPath, maxBackoffMs: 500 },
        faults: { enabled: true },
        http: { mutationRateLimit: null },
        ...gateway,
      },
    },
    { env: {} },
  );
  // The test holds the plugins to await their registrations and to fail a device at its source.
  const plugins = await startPlugins(config.plugins, {
    devicePluginDir: sim.devicePluginDir,
    logger: silent,
  });
  const gw = await startGateway(config, { plugins, logger: silent });
  const n: TestNode = { name, simOptions, sim, plugins, gateway: gw, restartsDetected: [] };
  for (const p of plugins.resources.values()) {
    p.on('kubelet-restart', (e) => n.restartsDetected.push(`${p.resourceName} ${e.detectedBy} ${e.at}`));
  }
  nodes.set(name, n);
  await until(`${name} registered`, async () => (await fetch(`${gw.url}/readyz`)).status === 200);
  return n;
}

/** Resolves when every plugin of the node has registered with the kubelet again. */
function registeredAgain(n: TestNode): Promise<unknown> {
  return Promise.all(
    [...n.plugins.resources.values()].map((p) =>
      once(p, 'registered', { signal: AbortSignal.timeout(20_000) }),
    ),
  );
}

const snapshotOf = async (n: TestNode): Promise<NodeSnapshot> =>
  (await (await fetch(`${n.gateway.url}/api/v1/node`)).json()) as NodeSnapshot;
const exposition = async (n: TestNode) =>
  parseExposition(await (await fetch(`${n.gateway.url}/metrics`)).text());

async function gatewayApi(n: TestNode, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${n.gateway.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return text ? (JSON.parse(text) as unknown) : null;
}

// --- alerts

const matches = (labels: Labels, want: Labels): boolean =>
  Object.entries(want).every(([k, v]) => labels[k] === v);
const alertsNamed = async (alertname: string): Promise<Alert[]> =>
  (await prom.alerts()).filter((a) => a.labels.alertname === alertname);

/**
 * Waits until the alert fires for the labels, then checks its annotations: every label its summary
 * and description name is set and non-empty, the summary is exactly its template with those labels
 * filled in, and no template syntax or empty value is left over.
 */
async function firing(alertname: string, want: Labels): Promise<Alert> {
  const rule = rules.find((r) => r.alert === alertname);
  assert.ok(rule, `${alertname} is a rule of the chart`);
  let alert: Alert;
  try {
    alert = await until(
      `${alertname} ${JSON.stringify(want)} firing`,
      async () => (await alertsNamed(alertname)).find((a) => a.state === 'firing' && matches(a.labels, want)),
      30_000,
    );
  } catch (err) {
    // Say what Prometheus sees: the rule's expression right now and the alerts it has.
    const now = (await prom.query(rule.expr)).map((s) => s.metric);
    const active = (await prom.alerts()).map(
      (a) => `${a.labels.alertname}${JSON.stringify(a.labels)} ${a.state}`,
    );
    throw new Error(
      `${(err as Error).message}\n${rule.expr} returns ${JSON.stringify(now)}\nactive alerts: ${active.join('; ') || 'none'}`,
      { cause: err },
    );
  }
  for (const field of ['summary', 'description'] as const) {
    const template = rule.annotations[field] ?? '';
    const text = alert.annotations[field] ?? '';
    for (const [, label] of template.matchAll(/\{\{ \$labels\.(\w+) \}\}/g)) {
      assert.ok(alert.labels[label!], `${alertname}: label ${label} of its ${field} is set`);
      assert.ok(text.includes(alert.labels[label!]!), `${alertname} ${field} names ${label}: ${text}`);
    }
    assert.doesNotMatch(text, /\{\{|<no value>|\s\s|\s[.,]|^\s|\s$/, `${alertname} ${field}: "${text}"`);
  }
  const summary = (rule.annotations.summary ?? '').replace(
    /\{\{ \$labels\.(\w+) \}\}/g,
    (_, label: string) => alert.labels[label] ?? '',
  );
  assert.equal(alert.annotations.summary, summary);
  return alert;
}

async function resolved(alertname: string, want: Labels): Promise<void> {
  await until(
    `${alertname} ${JSON.stringify(want)} resolved`,
    async () => !(await alertsNamed(alertname)).some((a) => matches(a.labels, want)),
    30_000,
  );
}

// --- setup

before(async () => {
  requireBinary('prometheus');
  requireBinary('promtool');
  await startNode(NODE_A, [
    { name: GPU, simulated: { count: 4, numaNodes: [0, 1] } },
    { name: NIC, simulated: { count: 8, numaNodes: [0, 1] } },
  ]);
  // Node B also serves many NICs: failing half of them makes patches big enough to back up a
  // stream client that does not read.
  await startNode(
    NODE_B,
    [
      { name: GPU, simulated: { count: 2, numaNodes: [0] } },
      { name: NIC, simulated: { count: 128, numaNodes: [0, 1] } },
    ],
    { stream: { maxQueueBytes: 16 << 10 } },
  );

  const file = ruleFile(testRuleValues(TEST_HEAP_RATIO));
  rules = file.rules;
  writeFileSync(rulesPath, JSON.stringify({ groups: file.groups }));
  prom = await startPrometheus({
    dir: root,
    config: {
      global: { scrape_interval: SCRAPE, scrape_timeout: SCRAPE, evaluation_interval: SCRAPE },
      rule_files: [rulesPath],
      scrape_configs: [
        {
          job_name: 'plugboard-gateways',
          // As the chart's ServiceMonitor/PodMonitor and the usual kubernetes-pods job do.
          honor_labels: true,
          static_configs: NODES.map((name) => ({
            targets: [new URL(node(name).gateway.url).host],
            labels: { namespace: 'plugboard', pod: `pb-plugboard-gateway-${name.slice(-1)}` },
          })),
        },
      ],
    },
  });
  await until('Prometheus to scrape both gateways', async () => {
    const capacity = await prom.query('count by (node) (plugboard_resource_capacity_devices)');
    return capacity.length === 2;
  });
  baselineAt = Date.now() / 1000;
  for (const name of NODES) baseline.set(name, await exposition(node(name)));
});

after(async () => {
  await prom?.stop();
  for (const n of nodes.values()) {
    await n.gateway.stop();
    await n.plugins.stop();
    await n.sim.stop();
  }
  rmSync(root, { recursive: true, force: true });
});

describe('the chart’s alerts and dashboard in a real Prometheus', () => {
  it('passes promtool: the rendered rules (shipped and test durations) and each gateway’s /metrics', () => {
    const shipped = join(root, 'shipped-rules.json');
    writeFileSync(
      shipped,
      JSON.stringify({ groups: ruleFile({ metrics: { prometheusRule: { enabled: true } } }).groups }),
    );
    assert.match(promtool(['check', 'rules', shipped]), /SUCCESS: 6 rules found/);
    assert.match(promtool(['check', 'rules', rulesPath]), /SUCCESS: 6 rules found/);
    // /metrics of a busy gateway is checked at the end, once every metric has moved.
  });

  it('fires PlugboardGatewayHeapNearLimit once per gateway (at the test ratio)', async () => {
    for (const name of NODES) await firing('PlugboardGatewayHeapNearLimit', { node: name });
    assert.equal((await alertsNamed('PlugboardGatewayHeapNearLimit')).length, 2);
  });

  it('admits pods through the kubelets (Allocate on both nodes)', async () => {
    await node(NODE_A).sim.admitPod({
      metadata: { name: 'train', namespace: 'ml' },
      spec: { containers: [{ name: 'main', resources: { limits: { [GPU]: 1, [NIC]: 2 } } }] },
    });
    await node(NODE_B).sim.admitPod({
      metadata: { name: 'serve', namespace: 'inference' },
      spec: { containers: [{ name: 'main', resources: { limits: { [GPU]: 1 } } }] },
    });
    known.allocatedResources.get(NODE_A)!.add(GPU).add(NIC);
    known.allocatedResources.get(NODE_B)!.add(GPU);
  });

  it('fires PlugboardKubeletRestartsFlapping once for the node whose kubelet restarted 3 times', async () => {
    const a = node(NODE_A);
    for (let i = 0; i < 3; i++) {
      const registered = registeredAgain(a);
      await a.sim.restart();
      await registered;
      known.restartsA++;
    }
    await firing('PlugboardKubeletRestartsFlapping', { node: NODE_A });
    // Two resources re-registered three times each: still one kubelet, one alert.
    assert.deepEqual(
      (await alertsNamed('PlugboardKubeletRestartsFlapping')).map((x) => x.labels.node),
      [NODE_A],
    );
  });

  it('fires PlugboardDevicePluginNotRegistered while a kubelet is gone, and resolves when it is back', async () => {
    const b = node(NODE_B);
    const port = new URL(b.sim.url).port;
    await b.sim.stop();
    try {
      for (const resource of [GPU, NIC]) {
        await firing('PlugboardDevicePluginNotRegistered', { node: NODE_B, resource });
      }
    } finally {
      const registered = registeredAgain(b);
      b.sim = await startKubeletSim({ ...b.simOptions, listen: `127.0.0.1:${port}` });
      await registered;
    }
    for (const resource of [GPU, NIC])
      await resolved('PlugboardDevicePluginNotRegistered', { node: NODE_B, resource });
  });

  it('fires PlugboardAllocatableLow for 3 faults, PlugboardDeviceUnhealthy only for a real failure', async () => {
    const a = node(NODE_A);
    const held = new Set(
      a.sim.state().pods.flatMap((p) => p.containers.flatMap((c) => c.devices[GPU] ?? [])),
    );
    const free = Object.values((await snapshotOf(a)).devices)
      .filter((d) => d.resource === GPU && !held.has(d.id))
      .map((d) => d.id);
    assert.equal(free.length, 3, 'three free GPUs on node A');
    const faults: { id: string; device: string }[] = [];
    for (const deviceId of free) {
      const fault = (await gatewayApi(a, 'POST', '/api/v1/faults', {
        resource: GPU,
        deviceId,
        reason: 'prometheus drill',
      })) as { id: string };
      faults.push({ id: fault.id, device: deviceId });
    }
    known.faults.set(key(NODE_A, GPU), faults);
    await until('node A kubelet: one GPU allocatable', () => a.sim.state().resources[GPU]?.allocatable === 1);
    await firing('PlugboardAllocatableLow', { node: NODE_A, resource: GPU });

    // A device its own source reports unhealthy: not a drill, so PlugboardDeviceUnhealthy fires.
    const b = node(NODE_B);
    const heldB = new Set(
      b.sim.state().pods.flatMap((p) => p.containers.flatMap((c) => c.devices[GPU] ?? [])),
    );
    const broken = ['gpu-0', 'gpu-1'].find((id) => !heldB.has(id))!;
    const source = b.plugins.sources.get(GPU);
    assert.ok(source instanceof SimulatedSource);
    source.setHealth(broken, 'Unhealthy', 'ECC errors');
    known.realUnhealthy.add(key(NODE_B, GPU, broken));
    await firing('PlugboardDeviceUnhealthy', { node: NODE_B, resource: GPU, device: broken });
    await firing('PlugboardAllocatableLow', { node: NODE_B, resource: GPU });
    // The faulted devices have been unhealthy for longer, yet they do not page: drills are excluded.
    assert.deepEqual(
      (await alertsNamed('PlugboardDeviceUnhealthy')).map((x) => [x.labels.node, x.labels.device]),
      [[NODE_B, broken]],
    );
  });

  it('fires PlugboardStreamClientsDropped once for the gateway that cut a slow client off', async () => {
    const b = node(NODE_B);
    const slow = await stalledStreamClient(b);
    try {
      const droppedSlow = async () =>
        (await exposition(b))
          .filter(
            (s) => s.name === 'plugboard_gateway_stream_dropped_clients_total' && s.metric.reason === 'slow',
          )
          .reduce((n, s) => n + s.value, 0);
      // Failing and healing half of 128 NICs sends patches the stalled client never reads.
      await until(
        'node B to cut the stalled stream client off',
        async () => {
          const scenario = (await gatewayApi(b, 'POST', '/api/v1/scenarios', {
            action: 'fail-numa-node',
            numaNode: 0,
            resource: NIC,
            ttlSeconds: 60,
          })) as { id: string };
          await gatewayApi(b, 'DELETE', `/api/v1/scenarios/${scenario.id}`);
          return (await droppedSlow()) > 0;
        },
        60_000,
        0,
      );
    } finally {
      slow.destroy();
    }
    await firing('PlugboardStreamClientsDropped', { node: NODE_B });
    assert.equal((await alertsNamed('PlugboardStreamClientsDropped')).length, 1, 'one alert per node');
  });

  it('shows the right number in every Grafana panel, for "All" and for each node', async () => {
    const state = await settle();
    const dashboard: unknown = JSON.parse(readFileSync(join(chartDir, 'dashboards/plugboard.json'), 'utf8'));

    // Template variables first: the node and resource lists Grafana would offer.
    const variables = new Map(
      asArray(at(dashboard, 'templating', 'list')).map((v) => [
        String(at(v, 'name')),
        String(at(v, 'definition')),
      ]),
    );
    assert.equal(variables.get('node'), 'label_values(plugboard_resource_capacity_devices, node)');
    assert.deepEqual((await prom.labelValues('node', 'plugboard_resource_capacity_devices')).sort(), [
      ...NODES,
    ]);
    for (const name of NODES) {
      assert.deepEqual(
        (await prom.labelValues('resource', `plugboard_resource_capacity_devices{node=~"${name}"}`)).sort(),
        [GPU, NIC],
      );
    }

    // Two panels share the title "Unhealthy devices": the stat's and the time series' queries.
    const titles = asArray(at(dashboard, 'panels')).map((p) => String(at(p, 'title')));
    const targets = asArray(at(dashboard, 'panels')).flatMap((p) =>
      asArray(at(p, 'targets')).map((t) => ({
        id: `${String(at(p, 'title'))}${titles.filter((x) => x === at(p, 'title')).length > 1 ? ` [${String(at(p, 'type'))}]` : ''}/${String(at(t, 'refId'))}`,
        expr: String(at(t, 'expr')),
      })),
    );
    const checks = panelChecks(state);
    assert.deepEqual(
      targets.map((t) => t.id).sort(),
      Object.keys(checks).sort(),
      'every panel query is checked',
    );
    for (const selection of ['All', ...NODES] as const) {
      const selected = selection === 'All' ? [...NODES] : [selection];
      for (const target of targets) {
        const expr = substitute(target.expr, selection === 'All' ? '.*' : selection);
        const check = checks[target.id]!;
        const got = await prom.query(expr, state.time);
        const want = await check.expect(selected);
        const where = `${target.id} (node ${selection}): ${expr}`;
        const series = new Map<string, number>();
        for (const s of got) {
          const k = key(...check.by.map((l) => s.metric[l] ?? ''));
          assert.ok(!series.has(k), `${where}: two series for ${k}`);
          series.set(k, s.value);
        }
        assert.deepEqual([...series.keys()].sort(), [...want.keys()].sort(), `${where}: series`);
        for (const [k, expected] of want) assertValue(series.get(k)!, expected, state, `${where} [${k}]`);
      }
    }
  });

  it('passes promtool check metrics on each gateway’s /metrics after all that', async () => {
    for (const name of NODES) {
      const text = await (await fetch(`${node(name).gateway.url}/metrics`)).text();
      promtool(['check', 'metrics'], text);
    }
  });

  it('resolves every alert once its condition ends', async () => {
    const a = node(NODE_A);
    for (const { id } of known.faults.get(key(NODE_A, GPU)) ?? []) {
      await gatewayApi(a, 'DELETE', `/api/v1/faults/${id}`);
    }
    known.faults.delete(key(NODE_A, GPU));
    await resolved('PlugboardAllocatableLow', { node: NODE_A, resource: GPU });

    const b = node(NODE_B);
    const source = b.plugins.sources.get(GPU) as SimulatedSource;
    for (const device of known.realUnhealthy) source.setHealth(device.split('|')[2]!, 'Healthy');
    known.realUnhealthy.clear();
    await resolved('PlugboardDeviceUnhealthy', {});
    await resolved('PlugboardAllocatableLow', {});

    // Their windows (10s here) pass without another restart or drop.
    await resolved('PlugboardKubeletRestartsFlapping', {});
    await resolved('PlugboardStreamClientsDropped', {});

    // The shipped heap ratio: the gateways are far below it.
    writeFileSync(rulesPath, JSON.stringify({ groups: ruleFile(testRuleValues()).groups }));
    await prom.reload();
    await resolved('PlugboardGatewayHeapNearLimit', {});
    assert.deepEqual(await prom.alerts(), [], 'no alert left');
  });
});

/** Opens the gateway's stream, reads the snapshot's first bytes, then stops reading. */
async function stalledStreamClient(n: TestNode): Promise<Socket> {
  const { hostname, port } = new URL(n.gateway.url);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  socket.write(
    [
      'GET /api/v1/stream HTTP/1.1',
      `Host: ${hostname}:${port}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Key: ${Buffer.alloc(16, 7).toString('base64')}`,
      'Sec-WebSocket-Version: 13',
      '',
      '',
    ].join('\r\n'),
  );
  const [head] = (await once(socket, 'data')) as [Buffer];
  assert.match(head.toString('latin1'), /^HTTP\/1\.1 101 /);
  socket.pause();
  return socket;
}

// --- the settled state and what each panel must show

interface Settled {
  /** Evaluation time (Unix seconds): Prometheus has scraped both gateways after the state settled. */
  time: number;
  kubelets: Map<NodeName, ReturnType<KubeletSim['state']>>;
  /** Each gateway's /metrics at that time. */
  metrics: Map<NodeName, (Sample & { name: string })[]>;
}

/**
 * Waits until each gateway shows what its kubelet holds (capacity, allocatable on both sides,
 * registration, faults) and Prometheus has scraped both after that.
 */
async function settle(): Promise<Settled> {
  for (const name of NODES) {
    const n = node(name);
    await until(`${name}: gateway, kubelet and API server agree`, async () => {
      const s = await snapshotOf(n);
      const kubelet = n.sim.state();
      const faults = [GPU, NIC].reduce((sum, r) => sum + (known.faults.get(key(name, r))?.length ?? 0), 0);
      const unhealthyDevices = Object.values(s.devices).filter((d) => d.health === 'Unhealthy');
      return (
        Object.keys(s.faults).length === faults &&
        unhealthyDevices.length ===
          faults + [...known.realUnhealthy].filter((d) => d.startsWith(`${name}|`)).length &&
        [GPU, NIC].every((r) => {
          const g = s.resources[r];
          const k = kubelet.resources[r];
          return (
            g !== undefined &&
            k !== undefined &&
            g.registration.phase === 'registered' &&
            g.kubelet.capacity === k.capacity &&
            g.kubelet.allocatable === k.allocatable &&
            g.apiServer?.allocatable === k.allocatable &&
            g.kubelet.allocated === allocatedOn(kubelet, r)
          );
        })
      );
    });
  }
  const settledAt = Date.now();
  await until('Prometheus to scrape both gateways after that', async () => {
    const targets = await prom.targets();
    return (
      targets.length === 2 && targets.every((t) => t.health === 'up' && Date.parse(t.lastScrape) > settledAt)
    );
  });
  const metrics = new Map<NodeName, (Sample & { name: string })[]>();
  for (const name of NODES) metrics.set(name, await exposition(node(name)));
  return {
    time: Date.now() / 1000,
    kubelets: new Map(NODES.map((name) => [name, node(name).sim.state()])),
    metrics,
  };
}

const allocatedOn = (kubelet: ReturnType<KubeletSim['state']>, resource: string): number =>
  kubelet.pods.reduce(
    (n, p) => n + p.containers.reduce((m, c) => m + (c.devices[resource]?.length ?? 0), 0),
    0,
  );

/** Grafana's variables as the test selects them (`.*` is the dashboard's "All" value). */
function substitute(expr: string, nodeValue: string): string {
  const out = expr
    .replaceAll('$__rate_interval', RATE_WINDOW)
    .replaceAll('$node', nodeValue)
    .replaceAll('$resource', '.*');
  assert.doesNotMatch(out, /\$/, `a Grafana variable the test does not substitute: ${expr}`);
  return out;
}

/**
 * A panel value:
 * - `exact`: a gauge or a rounded count;
 * - `increase`: a counter's increase over the run. increase() extrapolates to the window's end by up
 *   to about one scrape interval (never below the true count), so it may exceed `n` by that share;
 * - `rate`: the same, per second of RATE_WINDOW;
 * - `between`: a histogram quantile, inside the bucket the quantile of the per-series rates falls in.
 */
type Expected = { exact: number } | { increase: number } | { rate: number } | { between: [number, number] };

function assertValue(got: number, want: Expected, state: Settled, where: string): void {
  if ('exact' in want) {
    assert.equal(got, want.exact, where);
  } else if ('between' in want) {
    // A rank that falls on a bucket boundary may land on either side of it, by float rounding.
    const [lo, hi] = want.between;
    const slack = (hi - lo) * 1e-9;
    assert.ok(got >= lo - slack && got <= hi + slack, `${where}: ${got} not in [${lo}, ${hi}]`);
  } else {
    const count = 'increase' in want ? got : got * seconds(RATE_WINDOW);
    const n = 'increase' in want ? want.increase : want.rate;
    const slack = n * ((3 * SCRAPE_SECONDS) / (state.time - baselineAt));
    assert.ok(
      count >= n - 1e-9 && count <= n + slack + 1e-9,
      `${where}: ${count}, expected ${n} (+${slack})`,
    );
  }
}

const seconds = (d: string): number =>
  Number(d.slice(0, -1)) * { s: 1, m: 60, h: 3600 }[d.slice(-1) as 's' | 'm' | 'h'];

interface PanelCheck {
  /** Labels that tell the panel's series apart. */
  by: string[];
  /** Expected value per series (keys: the `by` label values joined with `|`) for the selected nodes. */
  expect: (nodes: NodeName[]) => Map<string, Expected> | Promise<Map<string, Expected>>;
}

function panelChecks(state: Settled): Record<string, PanelCheck> {
  const kubelet = (name: NodeName) => state.kubelets.get(name)!;
  /** Devices made unhealthy on the node, `node|resource|device`: the faulted ones and the broken one. */
  const unhealthy = (name: NodeName, resource: string): string[] => [
    ...(known.faults.get(key(name, resource)) ?? []).map((f) => key(name, resource, f.device)),
    ...[...known.realUnhealthy].filter((d) => d.startsWith(key(name, resource, ''))),
  ];
  const perResource = (nodesSel: NodeName[], value: (n: NodeName, r: string) => number) =>
    new Map<string, Expected>(
      nodesSel.flatMap((n) => [GPU, NIC].map((r): [string, Expected] => [key(n, r), { exact: value(n, r) }])),
    );
  const total = (nodesSel: NodeName[], value: (n: NodeName, r: string) => number) =>
    new Map<string, Expected>([
      ['', { exact: nodesSel.reduce((sum, n) => sum + [GPU, NIC].reduce((s, r) => s + value(n, r), 0), 0) }],
    ]);
  /** Node A: the restarts the test made; node B: those its gateway saw when the kubelet came back. */
  const restarts = (n: NodeName): number => {
    const seen = counter(state.metrics.get(n)!, 'plugboard_kubelet_restarts_total', {});
    if (n === NODE_A) {
      assert.equal(
        seen,
        known.restartsA,
        `node A gateway: one restart counted per restart; the plugins detected: ${node(n).restartsDetected.join(', ')}`,
      );
    }
    return n === NODE_A ? known.restartsA : seen;
  };
  /** A counter's growth since Prometheus first scraped the gateway, per `by` label values. */
  const grown = (
    nodesSel: NodeName[],
    name: string,
    by: string[],
    kind: 'increase' | 'rate' = 'increase',
  ): Map<string, Expected> => {
    const sums = new Map<string, number>();
    for (const n of nodesSel) {
      for (const s of state.metrics.get(n)!.filter((x) => x.name === name)) {
        const before = counter(baseline.get(n)!, name, s.metric);
        const k = key(...by.map((l) => s.metric[l] ?? ''));
        sums.set(k, (sums.get(k) ?? 0) + s.value - before);
      }
    }
    return new Map(
      [...sums].map(([k, v]): [string, Expected] => [k, kind === 'increase' ? { increase: v } : { rate: v }]),
    );
  };
  const quantile =
    (q: number, metric: string, by: string, present: (nodesSel: NodeName[]) => Set<string>) =>
    async (nodesSel: NodeName[]) => {
      const bounds = await quantileBuckets(q, metric, by, nodesSel, state.time);
      const want = present(nodesSel);
      assert.deepEqual(
        [...bounds.keys()].sort(),
        [...want].sort(),
        `${metric}: observed for ${[...want].join(', ')}`,
      );
      return new Map([...bounds].map(([k, b]): [string, Expected] => [k, { between: b }]));
    };

  return {
    'Unhealthy devices [stat]/A': { by: [], expect: (s) => total(s, (n, r) => unhealthy(n, r).length) },
    'Allocated devices/A': { by: [], expect: (s) => total(s, (n, r) => allocatedOn(kubelet(n), r)) },
    'Allocatable devices/A': {
      by: [],
      expect: (s) => total(s, (n, r) => kubelet(n).resources[r]!.allocatable),
    },
    'Resources not registered/A': { by: [], expect: (s) => total(s, () => 0) },
    'Active simulated faults/A': {
      by: [],
      expect: (s) => total(s, (n, r) => known.faults.get(key(n, r))?.length ?? 0),
    },
    'Kubelet restarts (1h)/A': {
      by: [],
      expect: (s) => new Map([['', { exact: s.reduce((sum, n) => sum + restarts(n), 0) }]]),
    },
    'Capacity vs allocatable: kubelet and API server/A': {
      by: ['node', 'resource'],
      expect: (s) => perResource(s, (n, r) => kubelet(n).resources[r]!.allocatable),
    },
    'Capacity vs allocatable: kubelet and API server/B': {
      by: ['node', 'resource'],
      expect: (s) => perResource(s, (n, r) => kubelet(n).resources[r]!.allocatable),
    },
    'Capacity vs allocatable: kubelet and API server/C': {
      by: ['node', 'resource'],
      expect: (s) => perResource(s, (n, r) => kubelet(n).resources[r]!.capacity),
    },
    'Unhealthy devices [timeseries]/A': {
      by: ['node', 'resource'],
      expect: (s) => perResource(s, (n, r) => unhealthy(n, r).length),
    },
    'Allocations by namespace/A': {
      by: ['namespace', 'resource'],
      expect: (s) => {
        const sums = new Map<string, number>();
        for (const n of s) {
          for (const p of kubelet(n).pods) {
            for (const c of p.containers) {
              for (const [r, ids] of Object.entries(c.devices)) {
                if (ids.length > 0)
                  sums.set(key(p.namespace, r), (sums.get(key(p.namespace, r)) ?? 0) + ids.length);
              }
            }
          }
        }
        return new Map([...sums].map(([k, v]): [string, Expected] => [k, { exact: v }]));
      },
    },
    'Unhealthy devices now/A': {
      by: ['node', 'resource', 'device'],
      expect: (s) =>
        new Map(
          s
            .flatMap((n) => [GPU, NIC].flatMap((r) => unhealthy(n, r)))
            .map((d): [string, Expected] => [d, { exact: 0 }]),
        ),
    },
    'Allocate latency/A': {
      by: ['resource'],
      expect: quantile(0.5, 'plugboard_device_plugin_allocate_duration_seconds', 'resource', allocated),
    },
    'Allocate latency/B': {
      by: ['resource'],
      expect: quantile(0.99, 'plugboard_device_plugin_allocate_duration_seconds', 'resource', allocated),
    },
    // Resources whose plugin answered GetPreferredAllocation in the window (the kubelet asks on admission).
    'Preferred allocation latency/A': {
      by: ['resource'],
      expect: quantile(
        0.99,
        'plugboard_device_plugin_preferred_allocation_duration_seconds',
        'resource',
        (s) => observedResources(state, s, 'plugboard_device_plugin_preferred_allocation_duration_seconds'),
      ),
    },
    'Registrations and kubelet restarts/A': {
      by: ['node', 'resource'],
      expect: (s) => grown(s, 'plugboard_device_plugin_registrations_total', ['node', 'resource']),
    },
    'Registrations and kubelet restarts/B': {
      by: ['node', 'resource'],
      expect: (s) => grown(s, 'plugboard_device_plugin_registration_errors_total', ['node', 'resource']),
    },
    'Registrations and kubelet restarts/C': {
      by: ['node'],
      expect: (s) => new Map(s.map((n): [string, Expected] => [n, { increase: restarts(n) }])),
    },
    'PodResources polling/A': {
      by: ['node', 'method', 'code'],
      expect: (s) =>
        grown(s, 'plugboard_pod_resources_poll_errors_total', ['node', 'method', 'code'], 'rate'),
    },
    'PodResources polling/B': {
      by: ['node'],
      expect: quantile(0.99, 'plugboard_pod_resources_poll_duration_seconds', 'node', (s) => new Set(s)),
    },
    'Dashboard stream/A': {
      by: ['node', 'view'],
      // The test closed its stream clients; nothing else connects.
      expect: (s) =>
        new Map(
          s.flatMap((n) => ['full', 'summary'].map((v): [string, Expected] => [key(n, v), { exact: 0 }])),
        ),
    },
    'Dashboard stream/B': {
      by: ['node', 'reason'],
      expect: (s) => grown(s, 'plugboard_gateway_stream_dropped_clients_total', ['node', 'reason']),
    },
    'Faults injected/A': {
      by: ['node', 'resource'],
      expect: (s) => {
        const want = grown(s, 'plugboard_gateway_faults_injected_total', ['node', 'resource']);
        // The three drills of node A, counted by the gateway as the test made them.
        if (s.includes(NODE_A)) assert.deepEqual(want.get(key(NODE_A, GPU)), { increase: 3 });
        return want;
      },
    },
  };

  function allocated(nodesSel: NodeName[]): Set<string> {
    return new Set(nodesSel.flatMap((n) => [...known.allocatedResources.get(n)!]));
  }
}

function counter(samples: (Sample & { name: string })[], name: string, labels: Labels): number {
  return samples.find((s) => s.name === name && matches(s.metric, labels))?.value ?? 0;
}

function observedResources(state: Settled, nodesSel: NodeName[], histogram: string): Set<string> {
  return new Set(
    nodesSel.flatMap((n) =>
      state.metrics
        .get(n)!
        .filter(
          (s) => s.name === `${histogram}_count` && s.value > counter(baseline.get(n)!, s.name, s.metric),
        )
        .map((s) => s.metric.resource!),
    ),
  );
}

/**
 * For each value of `by`: the bucket [lower, upper] the q-quantile falls in, found in TypeScript
 * from each selected series' own rate() (what the panel sums), not with sum or histogram_quantile.
 * Groups without observations are left out (histogram_quantile gives NaN, which the panels drop).
 */
async function quantileBuckets(
  q: number,
  histogram: string,
  by: string,
  nodesSel: NodeName[],
  time: number,
): Promise<Map<string, [number, number]>> {
  const rates = await prom.query(
    `rate(${histogram}_bucket{node=~"${nodesSel.join('|')}"}[${RATE_WINDOW}])`,
    time,
  );
  const groups = new Map<string, Map<number, number>>();
  for (const series of rates) {
    const le = Number(series.metric.le === '+Inf' ? Infinity : series.metric.le);
    const group = groups.get(series.metric[by]!) ?? new Map<number, number>();
    group.set(le, (group.get(le) ?? 0) + series.value);
    groups.set(series.metric[by]!, group);
  }
  const out = new Map<string, [number, number]>();
  for (const [k, buckets] of groups) {
    const sorted = [...buckets].sort((x, y) => x[0] - y[0]);
    const count = sorted.at(-1)![1];
    if (count === 0) continue;
    const i = sorted.findIndex(([, n]) => n >= q * count);
    const upper = sorted[i]![0];
    const lower = i === 0 ? 0 : sorted[i - 1]![0];
    out.set(k, upper === Infinity ? [lower, lower] : [lower, upper]);
  }
  return out;
}
