// The gateway with device plugins AND a DRA driver from one config, against kubelet-sim (the
// kubelet, its plugin watcher and the control plane's DRA parts) over real Unix sockets and the
// real API slice: snapshot.dra (the driver, its pool and devices, claims and their pods, each
// claimed device's status.devices entry the driver wrote), a fault
// through REST travelling the DRA path (health stream → allocatedResourcesStatus; with a NoExecute
// taint → eviction), the pod's blast-radius flag and the device's history (health and taint
// transitions), the stream's patches, a claim nothing fits, a scenario on the driver, the DRA
// metrics and a DeviceTaintRule.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fastJsonPatch from 'fast-json-patch';
import { pino } from 'pino';
import { KubeConfig, KubernetesObjectApi, ResourceV1Api } from '@kubernetes/client-node';
import type { KubeletSim } from '@plugboard/kubelet-sim';
import {
  gatewayClient,
  gatewayDocument,
  simNode,
  type GatewayClient,
  type SimNode,
} from '@plugboard/testbed';
import type {
  DraDeviceCounts,
  DraDeviceState,
  FaultState,
  NodeHistory,
  NodeSnapshot,
  NodeSummary,
} from '@plugboard/api';
import { parseGatewayConfig, startGateway, type Gateway } from '../src/index.js';
import { connectStream, waitFor, type StreamClient } from './helpers.js';

const { applyPatch } = fastJsonPatch;
const DRIVER = 'gpu.plugboard.example';
const GPU = 'plugboard.example/gpu';
const NODE = 'dra-node';
const TOKEN = 'test-token-0123456789abcdef';
const silent = pino({ level: 'silent' });

let dir: string;
let node: SimNode;
let sim: KubeletSim;
let gw: Gateway;
let client: GatewayClient;
let resource: ResourceV1Api;
let objects: KubernetesObjectApi;
let stream: StreamClient;
let doc: NodeSnapshot;

const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const snapshot = (): Promise<NodeSnapshot> => client.snapshot();
const deviceKey = (name: string): string => `${DRIVER}/${NODE}/${name}`;
/** The driver's counts: four devices published, all usable and free, but for `changes`. */
const counts = (changes: Partial<DraDeviceCounts> = {}): DraDeviceCounts => ({
  published: 4,
  usable: 4,
  allocated: 0,
  free: 4,
  unhealthy: 0,
  tainted: 0,
  ...changes,
});

async function post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function del(path: string): Promise<number> {
  const res = await fetch(`${gw.url}${path}`, { method: 'DELETE', headers });
  await res.arrayBuffer();
  return res.status;
}

const history = async (query: string): Promise<NodeHistory> => {
  const res = await fetch(`${gw.url}/api/v1/history${query}`);
  assert.equal(res.status, 200);
  return (await res.json()) as NodeHistory;
};

/** Waits for a snapshot satisfying `pred` (on the gateway's stream) and answers it. */
const until = (what: string, pred: (s: NodeSnapshot) => unknown, timeoutMs = 15_000): Promise<NodeSnapshot> =>
  client.waitForSnapshot((s) => Boolean(pred(s)), what, timeoutMs);

/** Applies every patch the stream has delivered so far to the stream's document. */
function applyStream(): NodeSnapshot {
  for (const m of stream.messages.splice(0)) {
    if (m.type === 'patch') doc = applyPatch(structuredClone(doc), m.ops, false, false).newDocument;
  }
  return doc;
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pb-gw-dra-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  node = await simNode(dir, NODE, {
    sim: { listen: '127.0.0.1:0', podResourcesRateLimit: false, syncFrequencyMs: 200 },
  });
  sim = node.sim;
  const kc = new KubeConfig();
  kc.loadFromFile(node.kubeconfig);
  resource = kc.makeApiClient(ResourceV1Api);
  objects = KubernetesObjectApi.makeApiClient(kc);
  await resource.createDeviceClass({
    body: {
      metadata: { name: DRIVER },
      spec: { selectors: [{ cel: { expression: `device.driver == "${DRIVER}"` } }] },
    },
  });
  await resource.createNamespacedResourceClaimTemplate({
    namespace: 'default',
    body: {
      metadata: { name: 'gpu', namespace: 'default' },
      spec: { spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: DRIVER } }] } } },
    },
  });
  const config = parseGatewayConfig(
    gatewayDocument(node, {
      resources: [{ name: GPU, simulated: { count: 2, numaNodes: [0, 1] } }],
      dra: [
        {
          driver: DRIVER,
          simulated: { count: 4, numaNodes: [0, 1] },
          attributes: { model: { string: 'PB-100' }, serial: { string: 'sn-{{id}}' } },
          capacity: { memory: '80Gi' },
          deviceStatus: true,
        },
      ],
      stateDir: join(dir, 'gateway-state'),
      tokenFile,
      gateway: { podResources: { pollIntervalMs: 200, maxBackoffMs: 400 } },
    }),
  );
  gw = await startGateway(config, { logger: silent });
  client = gatewayClient(gw.url, { token: TOKEN, name: NODE });
  stream = await connectStream(gw.url.replace('http', 'ws') + '/api/v1/stream');
  const first = await stream.next((m) => m.type === 'snapshot', 'the stream snapshot');
  assert.ok(first.type === 'snapshot');
  doc = first.node;
});

after(async () => {
  await stream?.close();
  await gw?.stop();
  await node?.remove();
  rmSync(dir, { recursive: true, force: true });
});

test('snapshot.dra: the driver registered, its pool and devices as published, beside the device plugin', async () => {
  const s = await until(
    'the driver registered, its four devices published and the kubelet sent their health',
    (s) =>
      s.dra?.drivers[DRIVER]?.registration?.phase === 'registered' &&
      s.dra.drivers[DRIVER].counts.published === 4 &&
      Object.values(s.dra.devices).every((d) => d.kubeletHealth === 'Healthy') &&
      s.resources[GPU]?.registration.phase === 'registered',
  );
  const driver = s.dra!.drivers[DRIVER]!;
  assert.equal(driver.inProcess, true);
  assert.equal(driver.healthStreams, 1);
  assert.equal(driver.publication?.error, null);
  assert.ok((driver.publication?.slices ?? 0) >= 1);
  assert.deepEqual(Object.keys(driver.pools), [NODE]);
  const pool = driver.pools[NODE]!;
  assert.deepEqual(
    pool.deviceKeys,
    [0, 1, 2, 3].map((i) => deviceKey(`gpu-${i}`)),
  );
  assert.ok(pool.slices.length >= 1 && pool.generation >= 1);
  assert.deepEqual(driver.counts, counts());
  const gpu1 = s.dra!.devices[deviceKey('gpu-1')]!;
  assert.deepEqual({ ...gpu1, since: typeof gpu1.since }, {
    key: deviceKey('gpu-1'),
    driver: DRIVER,
    pool: NODE,
    name: 'gpu-1',
    sourceId: 'gpu-1',
    attributes: {
      id: { string: 'gpu-1' },
      'resource.kubernetes.io/numaNode': { int: 0 },
      model: { string: 'PB-100' },
      serial: { string: 'sn-gpu-1' },
    },
    capacity: { memory: '80Gi' },
    numaNodes: [0],
    published: true,
    health: 'Healthy',
    reason: null,
    since: 'string',
    kubeletHealth: 'Healthy',
    taints: [],
    fault: null,
    allocations: [],
    // A whole device no claims share: no counters consumed, no shared capacity (the keys are absent).
  } satisfies Omit<
    Record<keyof DraDeviceState, unknown>,
    'consumesCounters' | 'allowMultipleAllocations' | 'capacityRequestPolicy' | 'sharedCapacity'
  >);
  // The simulated source puts gpu-0 and gpu-1 on NUMA node 0, gpu-2 and gpu-3 on node 1.
  assert.deepEqual(s.dra!.devices[deviceKey('gpu-3')]!.numaNodes, [1]);
  assert.deepEqual(s.dra!.devices[deviceKey('gpu-3')]!.attributes['resource.kubernetes.io/numaNode'], {
    int: 1,
  });
  // The device plugin beside it is unchanged.
  assert.equal(s.resources[GPU]!.kubelet.capacity, 2);
  const summary = (await (await fetch(`${gw.url}/api/v1/summary`)).json()) as NodeSummary;
  assert.deepEqual(summary.dra?.drivers[DRIVER], driver.counts);
});

let claimKey: string;
let claimDevice: string;

test('a pod with a device-plugin device and a template claim: claim prepared, device allocation names claim/request/pod', async () => {
  await sim.admitPod({
    metadata: { name: 'infer', namespace: 'default' },
    spec: {
      resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'gpu' }],
      containers: [{ name: 'main', resources: { claims: [{ name: 'gpu' }], limits: { [GPU]: '1' } } }],
    },
  });
  const s = await until(
    'the claim prepared and healthy in the pod status, its device status reported',
    (s) => {
      const ref = s.pods['default/infer']?.claims?.[0]?.claim;
      const claim = ref ? s.dra?.claims[ref] : undefined;
      return claim?.phase === 'prepared' && claim.health === 'Healthy' && claim.devices[0]?.status;
    },
  );
  const pod = s.pods['default/infer']!;
  claimKey = pod.claims![0]!.claim!;
  assert.deepEqual(pod.claims, [{ name: 'gpu', claim: claimKey, fromTemplate: true }]);
  assert.match(claimKey, /^default\/infer-gpu-/);
  assert.equal(pod.containers[0]!.devices[GPU]?.length, 1, 'the device-plugin device too');
  const claim = s.dra!.claims[claimKey]!;
  assert.equal(claim.devices.length, 1);
  claimDevice = claim.devices[0]!.deviceKey;
  assert.deepEqual(claim.owner, { pod: 'default/infer', podClaimName: 'gpu' });
  assert.deepEqual(claim.reservedFor, ['default/infer']);
  assert.deepEqual(
    claim.requests.map((r) => [r.name, r.deviceClassName, r.allocationMode, r.count]),
    [['gpu', DRIVER, 'ExactCount', 1]],
  );
  // deviceStatus: the driver wrote the claim's status.devices entry (KEP-4817) when it prepared it.
  const status = claim.devices[0]!.status!;
  assert.match(status.conditions[0]?.lastTransitionTime ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.deepEqual(status, {
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'Prepared',
        message: `prepared by ${DRIVER} on ${NODE}`,
        lastTransitionTime: status.conditions[0]!.lastTransitionTime,
      },
    ],
    data: null,
    networkData: null,
  });
  assert.deepEqual(claim.devices[0], {
    request: 'gpu',
    driver: DRIVER,
    pool: NODE,
    device: claimDevice.split('/').at(-1),
    deviceKey: claimDevice,
    adminAccess: false,
    status,
  });
  assert.equal(claim.pendingReason, null);
  assert.deepEqual(s.dra!.devices[claimDevice]!.allocations, [
    { claim: claimKey, request: 'gpu', adminAccess: false, pods: ['default/infer'], status },
  ]);
  assert.deepEqual(s.dra!.drivers[DRIVER]!.counts, counts({ allocated: 1, free: 3 }));
  const dynamic = pod.containers[0]!.dynamicResources;
  assert.equal(dynamic[0]?.claimName, claimKey.split('/')[1]);
  // The ring event follows the change that shows the claim (one model update later).
  await until('a claim event', (s) =>
    s.events.some((e) => e.kind === 'claim' && e.message.includes(claimKey)),
  );
});

test('a REST fault on the claimed device: Unhealthy to the kubelet, fault active, the claim Unhealthy; the stream follows; DELETE heals', async () => {
  const device = claimDevice.split('/').at(-1)!;
  const r = await post('/api/v1/faults', {
    resource: DRIVER,
    deviceId: device,
    reason: 'simulated: ECC errors',
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const id = r.body.id as string;
  assert.equal((r.body.fault as FaultState).resource, DRIVER);
  const s = await until(
    'the fault active and the claim Unhealthy from allocatedResourcesStatus',
    (s) => s.faults[id]?.state === 'active' && s.dra?.claims[claimKey]?.health === 'Unhealthy',
  );
  const d = s.dra!.devices[claimDevice]!;
  assert.deepEqual(
    [d.health, d.kubeletHealth, d.fault, d.reason],
    ['Unhealthy', 'Unhealthy', 'active', 'simulated: ECC errors'],
  );
  assert.deepEqual(d.taints, [], 'no taint unless asked for');
  assert.equal(s.dra!.drivers[DRIVER]!.counts.unhealthy, 1);
  assert.equal(s.dra!.drivers[DRIVER]!.counts.usable, 3);
  assert.equal(s.faults[id]!.taint, undefined);
  assert.ok(s.events.some((e) => e.kind === 'health' && e.resource === DRIVER && e.deviceIds[0] === device));
  assert.equal(s.pods['default/infer']!.affectedByUnhealthyDevice, true, 'the blast radius: its claim');
  // The history recorded the transition (transitions are kept as they happen, not per bucket).
  const h = await history(`?resource=${DRIVER}`);
  assert.deepEqual(h.draDevices?.[claimDevice]?.map((tr) => [tr.health, tr.reason, tr.taint]).at(-1), [
    'Unhealthy',
    'simulated: ECC errors',
    null,
  ]);
  assert.deepEqual([h.resources, h.devices], [{}, {}], 'resource= a driver: its history only');

  // The stream carried it: the patched document has what the REST snapshot has.
  await stream.next(
    (m) =>
      m.type === 'patch' &&
      m.ops.some((o) => o.path.startsWith('/dra/devices/') && o.path.endsWith('/health')),
    'a DRA health patch',
  );
  await waitFor('the streamed document caught up', () => applyStream().faults[id]?.state === 'active');

  assert.equal(await del(`/api/v1/faults/${id}`), 204);
  const healed = await until(
    'healed: Healthy to the kubelet and in the pod status',
    (s) =>
      s.dra?.devices[claimDevice]?.kubeletHealth === 'Healthy' &&
      s.dra.devices[claimDevice]?.fault === null &&
      s.dra.claims[claimKey]?.health === 'Healthy',
  );
  assert.equal(healed.pods['default/infer']!.affectedByUnhealthyDevice, false);
  assert.equal((await history('')).draDevices?.[claimDevice]?.at(-1)?.health, 'Healthy');
});

test('a fault with taint NoExecute: the taint shows on the device, the pod is evicted and its claim released; clearing heals', async () => {
  const device = claimDevice.split('/').at(-1)!;
  const r = await post('/api/v1/faults', {
    resource: DRIVER,
    deviceId: device,
    reason: 'simulated: fell off the bus',
    taint: 'NoExecute',
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const id = r.body.id as string;
  const s = await until(
    'the taint on the device, the pod gone and its claim released',
    (s) =>
      s.dra?.devices[claimDevice]?.taints.some((t) => t.effect === 'NoExecute') &&
      (s.pods['default/infer'] === undefined || s.pods['default/infer'].phase === 'Failed') &&
      s.dra.claims[claimKey] === undefined,
  );
  assert.deepEqual(
    s.dra!.devices[claimDevice]!.taints.map((t) => ({ ...t, timeAdded: typeof t.timeAdded })),
    [
      {
        key: `${DRIVER}/fault`,
        value: 'simulated',
        effect: 'NoExecute',
        timeAdded: 'string',
        source: 'ResourceSlice',
      },
    ],
  );
  assert.deepEqual(s.dra!.devices[claimDevice]!.allocations, []);
  assert.deepEqual(
    (await history('')).draDevices?.[claimDevice]?.map((tr) => [tr.health, tr.taint]).at(-1),
    ['Unhealthy', 'NoExecute'],
    'the taint is in the device history',
  );
  assert.equal(s.faults[id]!.taint, 'NoExecute');
  assert.equal(s.faults[id]!.state, 'active');
  assert.equal(s.dra!.drivers[DRIVER]!.counts.tainted, 1);
  await until('a taint event', (s) =>
    s.events.some((e) => e.kind === 'taint' && e.message.includes(`${DRIVER}/fault=simulated:NoExecute`)),
  );

  await waitFor('Kubernetes Events on the Node: the device Unhealthy, then tainted', async () => {
    const list = (await (await fetch(`${sim.url}/api/v1/namespaces/default/events`)).json()) as {
      items: { reason: string; message: string; involvedObject: { kind: string } }[];
    };
    const on = (reason: string, text: string) =>
      list.items.some(
        (e) => e.involvedObject.kind === 'Node' && e.reason === reason && e.message.includes(text),
      );
    return on('DeviceUnhealthy', claimDevice) && on('DeviceTainted', `${DRIVER}/fault=simulated:NoExecute`);
  });

  const listed = (await (
    await fetch(`${gw.url}/api/v1/faults?resource=${DRIVER}&deviceId=${device}`)
  ).json()) as { items: FaultState[] };
  assert.deepEqual(
    listed.items.map((f) => [f.id, f.taint, f.state]),
    [[id, 'NoExecute', 'active']],
  );
  assert.equal(await del(`/api/v1/faults?resource=${DRIVER}&deviceId=${device}`), 200);
  const healed = await until(
    'untainted and healthy again',
    (s) =>
      s.dra?.devices[claimDevice]?.taints.length === 0 &&
      s.dra.devices[claimDevice]?.kubeletHealth === 'Healthy',
  );
  assert.deepEqual(healed.dra!.drivers[DRIVER]!.counts, counts());
  await waitFor('the streamed document shows the taint gone', () =>
    applyStream().dra?.devices[claimDevice]?.taints.length === 0 ? true : null,
  );
});

test('a fault with taint None on a driver run here: a marker taint in the slice, not counted as tainted', async () => {
  const r = await post('/api/v1/faults', {
    resource: DRIVER,
    deviceId: 'gpu-3',
    reason: 'marker',
    taint: 'None',
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const key = deviceKey('gpu-3');
  const s = await until('the None taint in the slice', (s) =>
    s.dra?.devices[key]?.taints.some((t) => t.effect === 'None'),
  );
  assert.deepEqual(
    s.dra!.devices[key]!.taints.map((t) => [t.key, t.value, t.effect, t.source]),
    [[`${DRIVER}/fault`, 'simulated', 'None', 'ResourceSlice']],
  );
  assert.equal(s.faults[r.body.id as string]!.taint, 'None');
  assert.equal(
    s.faults[r.body.id as string]!.taintRule,
    undefined,
    'no DeviceTaintRule for a driver run here',
  );
  assert.equal(s.dra!.drivers[DRIVER]!.counts.tainted, 0);
  assert.equal(await del(`/api/v1/faults/${r.body.id as string}`), 204);
  await until('untainted and healthy again', (s) => s.dra?.devices[key]?.taints.length === 0);
});

test("a claim nothing fits is pending with the scheduler's message", async () => {
  await resource.createNamespacedResourceClaim({
    namespace: 'default',
    body: {
      metadata: { name: 'too-many', namespace: 'default' },
      spec: {
        devices: {
          requests: [
            { name: 'gpus', exactly: { deviceClassName: DRIVER, allocationMode: 'ExactCount', count: 5 } },
          ],
        },
      },
    },
  });
  await sim.admitPod({
    metadata: { name: 'greedy', namespace: 'default' },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': NODE },
      resourceClaims: [{ name: 'gpus', resourceClaimName: 'too-many' }],
      containers: [{ name: 'main', resources: { claims: [{ name: 'gpus' }] } }],
    },
  });
  const s = await until('the claim pending', (s) => s.dra?.claims['default/too-many']?.phase === 'pending');
  const claim = s.dra!.claims['default/too-many']!;
  assert.match(claim.pendingReason ?? '', /cannot allocate all claims/);
  assert.deepEqual(claim.devices, []);
  assert.equal(claim.owner, null);
  assert.equal(claim.requests[0]!.count, 5);
  const summary = (await (await fetch(`${gw.url}/api/v1/summary`)).json()) as NodeSummary;
  assert.deepEqual(summary.dra?.pendingClaims, ['default/too-many']);
  assert.equal(summary.dra?.deviceClasses[DRIVER]?.pendingClaims, 1);
  await sim.deletePod('default', 'greedy');
  await resource.deleteNamespacedResourceClaim({ namespace: 'default', name: 'too-many' });
  await until('the pending claim gone', (s) => s.dra?.claims['default/too-many'] === undefined);
});

test('a fail-devices scenario on the driver fails two devices with a NoSchedule taint; stopping it heals them', async () => {
  const r = await post('/api/v1/scenarios', {
    name: 'dra-two',
    seed: 7,
    steps: [{ at: 0, action: 'fail-devices', resource: DRIVER, count: 2, taint: 'NoSchedule' }],
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const s = await until(
    'two DRA devices faulted and tainted',
    (s) =>
      Object.values(s.dra?.devices ?? {}).filter(
        (d) => d.fault === 'active' && d.taints.some((t) => t.effect === 'NoSchedule'),
      ).length === 2,
  );
  const faults = Object.values(s.faults);
  assert.equal(faults.length, 2);
  assert.ok(
    faults.every((f) => f.resource === DRIVER && f.taint === 'NoSchedule' && f.scenarioId === r.body.id),
  );
  assert.deepEqual(s.dra!.drivers[DRIVER]!.counts, counts({ usable: 2, free: 2, unhealthy: 2, tainted: 2 }));

  // The DRA gauges while it runs.
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  const line = (re: RegExp): string => metrics.split('\n').find((l) => re.test(l)) ?? '';
  assert.match(line(/^plugboard_dra_driver_registered\{/), / 1$/);
  assert.match(line(new RegExp(`^plugboard_dra_devices\\{.*driver="${DRIVER}".*state="tainted"`)), / 2$/);
  assert.match(line(new RegExp(`^plugboard_dra_devices\\{.*driver="${DRIVER}".*state="usable"`)), / 2$/);
  assert.equal(metrics.split('\n').filter((l) => /^plugboard_dra_device_faulted\{.* 1$/.test(l)).length, 2);
  assert.equal(metrics.split('\n').filter((l) => /^plugboard_dra_device_tainted\{.* 1$/.test(l)).length, 2);
  assert.equal(metrics.split('\n').filter((l) => /^plugboard_dra_device_healthy\{.* 0$/.test(l)).length, 2);
  assert.match(line(/^plugboard_dra_claims\{.*phase="pending"/), / 0$/);
  assert.match(
    line(new RegExp(`^plugboard_gateway_faults_active\\{resource="${DRIVER}",state="active"`)),
    / 2$/,
  );

  assert.equal(await del(`/api/v1/scenarios/${r.body.id as string}`), 204);
  await until(
    'healed and untainted',
    (s) =>
      Object.keys(s.faults).length === 0 &&
      Object.values(s.dra?.devices ?? {}).every(
        (d) => d.kubeletHealth === 'Healthy' && d.taints.length === 0,
      ),
  );
});

test('a DeviceTaintRule selecting a device shows among its taints with the rule as source, until deleted', async () => {
  const rule = {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'DeviceTaintRule',
    metadata: { name: 'maintenance' },
    spec: {
      deviceSelector: { driver: DRIVER, pool: NODE, device: 'gpu-2' },
      taint: { key: 'example.com/maintenance', value: 'planned', effect: 'NoSchedule' },
    },
  };
  await objects.create(rule);
  const s = await until(
    'the rule on gpu-2',
    (s) => (s.dra?.devices[deviceKey('gpu-2')]?.taints.length ?? 0) > 0,
  );
  assert.deepEqual(
    s.dra!.devices[deviceKey('gpu-2')]!.taints.map((t) => ({ ...t, timeAdded: typeof t.timeAdded })),
    [
      {
        key: 'example.com/maintenance',
        value: 'planned',
        effect: 'NoSchedule',
        timeAdded: 'string',
        source: 'DeviceTaintRule maintenance',
      },
    ],
  );
  assert.equal(s.dra!.drivers[DRIVER]!.counts.tainted, 1);
  assert.equal(s.dra!.devices[deviceKey('gpu-2')]!.health, 'Healthy', 'a taint is not a health change');
  await objects.delete(rule);
  await until('the rule gone', (s) => s.dra?.devices[deviceKey('gpu-2')]?.taints.length === 0);
});

test('the stream delivered every DRA change as patches: the patched document equals the snapshot', async () => {
  const s = await snapshot();
  await waitFor('the stream caught up', () => (applyStream().updatedAt >= s.updatedAt ? true : null));
  const latest = await snapshot();
  const streamed = applyStream();
  assert.deepEqual(streamed.dra, latest.dra);
});
