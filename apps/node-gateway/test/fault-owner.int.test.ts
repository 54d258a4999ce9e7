// A fault has one owner and outlives its device: a `paths` resource over temp files, real plugins
// registered with kubelet-sim over real Unix sockets, the gateway's REST API. What the kubelet was
// told is read from kubelet-sim itself (every ListAndWatch list it processed, every Node status it
// published), so "never allocatable in between" is checked on the kubelet's side, not the gateway's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { KubeletSim } from '@plugboard/kubelet-sim';
import { gatewayDocument, simNode, type SimNode } from '@plugboard/testbed';
import { parseGatewayConfig, startGateway, type Gateway } from '../src/index.js';
import type { FaultState, NodeSnapshot } from '@plugboard/api';
import { waitFor } from './helpers.js';

const SERIAL = 'plugboard.example/serial';
const OTHER = 'plugboard.example/other';
const silent = pino({ level: 'silent' });

let dir: string;
let devDir: string;
let node: SimNode;
let sim: KubeletSim;
let gw: Gateway | null = null;
/** Every ListAndWatch list kubelet-sim processed for SERIAL: device ID → health. */
const kubeletLists: Map<string, string>[] = [];
/** Every Node status kubelet-sim published: SERIAL's [capacity, allocatable]. */
const nodeStatus: [number, number][] = [];

function startConfig(resources: Record<string, unknown>[]) {
  return parseGatewayConfig(
    gatewayDocument(node, {
      resources,
      stateDir: join(dir, 'gateway-state'),
      gateway: { podResources: { pollIntervalMs: 100, maxBackoffMs: 400 }, kube: { mode: 'disabled' } },
    }),
  );
}

/** The `paths` resource over `devDir` (set in `before`). */
const serial = { name: SERIAL, paths: { patterns: [] as string[], pollIntervalMs: 50 } };

async function startGw(resources: Record<string, unknown>[] = [serial]): Promise<Gateway> {
  const started = await startGateway(startConfig(resources), { logger: silent });
  try {
    // The last /readyz answer names what it waits for, should it never come.
    await waitFor(
      'registered',
      async () => {
        const res = await fetch(`${started.url}/readyz`);
        const body = await res.text();
        return res.status === 200 || Promise.reject(new Error(`/readyz ${res.status}: ${body}`));
      },
      // 10 s ran out once in a fresh-clone npm test beside two busy loops and other builds (load 18).
      30_000,
    );
  } catch (err) {
    // A gateway left running would keep the test file from ever ending.
    await started.stop();
    throw err;
  }
  return started;
}

const plug = (id: string): void => writeFileSync(join(devDir, id), '');
const unplug = (id: string): void => unlinkSync(join(devDir, id));

async function get<T>(path: string): Promise<T> {
  const res = await fetch(`${gw!.url}${path}`);
  assert.equal(res.status, 200, `GET ${path}`);
  return (await res.json()) as T;
}
const snapshot = () => get<NodeSnapshot>('/api/v1/node');
const faults = async () => (await get<{ items: FaultState[] }>('/api/v1/faults')).items;

async function inject(deviceId: string, extra: Record<string, unknown> = {}): Promise<FaultState> {
  const res = await fetch(`${gw!.url}/api/v1/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ resource: SERIAL, deviceId, reason: 'drill', ...extra }),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { fault: FaultState }).fault;
}

async function faultState(id: string, state: FaultState['state']): Promise<FaultState> {
  return waitFor(`fault ${id} ${state}`, async () =>
    (await faults()).find((f) => f.id === id && f.state === state),
  );
}

const kubeletAllocatable = () => {
  const { allocatable, capacity } = sim.state().resources[SERIAL] ?? { allocatable: -1, capacity: -1 };
  return [capacity, allocatable];
};

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pb-fault-owner-'));
  devDir = join(dir, 'dev');
  mkdirSync(devDir);
  serial.paths.patterns = [join(devDir, 'ttyUSB*')];
  for (let i = 0; i < 4; i++) plug(`ttyUSB${i}`);
  node = await simNode(dir, 'fault-owner', { sim: { listen: '127.0.0.1:0', podResourcesRateLimit: false } });
  sim = node.sim;
  sim.on('devices', (e) => {
    if (e.resource === SERIAL) kubeletLists.push(new Map(e.devices.map((d) => [d.id, d.health])));
  });
  sim.on('node', (node) => {
    const status = (
      node as { status?: { capacity?: Record<string, string>; allocatable?: Record<string, string> } }
    ).status;
    const capacity = status?.capacity?.[SERIAL];
    if (capacity !== undefined)
      nodeStatus.push([Number(capacity), Number(status?.allocatable?.[SERIAL] ?? 0)]);
  });
  gw = await startGw();
});

after(async () => {
  await gw?.stop();
  await node?.remove();
  rmSync(dir, { recursive: true, force: true });
});

/** From `from` on, every list the kubelet processed that carries `id` carried it Unhealthy. */
function neverHealthySince(from: number, id: string): void {
  const told = kubeletLists.slice(from).filter((l) => l.has(id));
  assert.ok(told.length > 0, `the kubelet was told about ${id}`);
  assert.deepEqual(
    told.map((l) => l.get(id)),
    told.map(() => 'Unhealthy'),
    `${id} was listed Healthy to the kubelet while the fault held it`,
  );
}

test('unplug and replug a faulted device: the fault holds it, and allocatable never comes back', async () => {
  const fault = await inject('ttyUSB3');
  assert.equal(fault.state, 'active', 'the POST answers once the kubelet was told');
  await waitFor('kubelet allocatable 3 of 4', () => kubeletAllocatable().join() === '4,3');
  const lists = kubeletLists.length;
  const statuses = nodeStatus.length;

  unplug('ttyUSB3');
  const absent = await faultState(fault.id, 'device-absent');
  assert.match(absent.stateReason!, /does not list ttyUSB3 now/);
  await waitFor('kubelet capacity 3', () => kubeletAllocatable().join() === '3,3');
  let snap = await snapshot();
  assert.equal(snap.devices[`${SERIAL}/ttyUSB3`], undefined, 'an absent device is not shown as a device');
  assert.equal(snap.faults[fault.id]!.state, 'device-absent');

  plug('ttyUSB3');
  await faultState(fault.id, 'active');
  snap = await snapshot();
  const device = snap.devices[`${SERIAL}/ttyUSB3`]!;
  assert.deepEqual(
    [device.health, device.kubeletHealth, device.fault, device.faulted],
    ['Unhealthy', 'Unhealthy', 'active', true],
  );
  await waitFor('kubelet capacity 4, allocatable 3', () => kubeletAllocatable().join() === '4,3');
  neverHealthySince(lists, 'ttyUSB3');
  const allocatable = nodeStatus.slice(statuses).map(([, a]) => a);
  assert.ok(allocatable.length >= 2, 'the Node status followed the unplug and the replug');
  assert.ok(
    allocatable.every((a) => a <= 3),
    `allocatable stays reduced throughout: ${allocatable.join(' → ')}`,
  );

  const res = await fetch(`${gw!.url}/api/v1/faults/${fault.id}`, { method: 'DELETE' });
  assert.equal(res.status, 204);
  await waitFor('healed in the kubelet', () => kubeletAllocatable().join() === '4,4');
});

test('a kubelet restart: the new kubelet is told the faulted device is Unhealthy in its first list', async () => {
  const fault = await inject('ttyUSB0');
  assert.equal(fault.state, 'active');
  const lists = kubeletLists.length;
  await sim.restart();
  await waitFor(
    're-registered after the kubelet restart',
    async () => {
      const snap = await snapshot();
      return (
        snap.resources[SERIAL]!.registration.kubeletRestartsSeen > 0 &&
        snap.faults[fault.id]?.state === 'active'
      );
    },
    10_000,
  );
  await waitFor('kubelet allocatable 3 of 4 again', () => kubeletAllocatable().join() === '4,3');
  neverHealthySince(lists, 'ttyUSB0');
  const res = await fetch(`${gw!.url}/api/v1/faults/${fault.id}`, { method: 'DELETE' });
  assert.equal(res.status, 204);
  await waitFor('healed in the kubelet', () => kubeletAllocatable().join() === '4,4');
});

test('a fault whose device is absent expires on time; the device comes back Healthy', async () => {
  const fault = await inject('ttyUSB1', { ttlSeconds: 1 });
  await faultState(fault.id, 'active');
  unplug('ttyUSB1');
  await faultState(fault.id, 'device-absent');
  await waitFor(
    'the TTL expired while the device was absent',
    async () => (await faults()).length === 0,
    5000,
  );
  const events = (await snapshot()).events.filter((e) => e.kind === 'fault-cleared');
  assert.match(events.at(-1)!.message, /ttyUSB1 cleared \(expired\)/);
  const lists = kubeletLists.length;
  plug('ttyUSB1');
  await waitFor('back and Healthy in the kubelet', () => kubeletAllocatable().join() === '4,4');
  assert.equal(
    kubeletLists
      .slice(lists)
      .filter((l) => l.has('ttyUSB1'))
      .at(-1)!
      .get('ttyUSB1'),
    'Healthy',
  );
  const device = (await snapshot()).devices[`${SERIAL}/ttyUSB1`]!;
  assert.deepEqual([device.health, device.fault, device.faulted], ['Healthy', null, false]);
});

test('fault, device unplugged, gateway and plugins restart, device back: still Unhealthy to the kubelet', async () => {
  const fault = await inject('ttyUSB2');
  await faultState(fault.id, 'active');
  unplug('ttyUSB2');
  await faultState(fault.id, 'device-absent');
  await gw!.stop();
  gw = null;
  const lists = kubeletLists.length;

  gw = await startGw();
  const restored = await faultState(fault.id, 'device-absent');
  assert.equal(restored.reason, 'drill');
  plug('ttyUSB2');
  await faultState(fault.id, 'active');
  await waitFor('kubelet capacity 4, allocatable 3', () => kubeletAllocatable().join() === '4,3');
  neverHealthySince(lists, 'ttyUSB2');

  // Restarted without the resource: the restored fault is kept and says why it holds nothing.
  await gw.stop();
  gw = await startGw([{ name: OTHER, simulated: { count: 1 } }]);
  const failed = await faultState(fault.id, 'failed');
  assert.match(
    failed.stateReason!,
    /could not be restored: resource plugboard.example\/serial is not served/,
  );
  const res = await fetch(`${gw.url}/api/v1/faults/${fault.id}`, { method: 'DELETE' });
  assert.equal(res.status, 204, 'a failed fault can be cleared');
  await gw.stop();
  gw = await startGw();
});

test('one request clears every fault of a device (DELETE /api/v1/faults?resource&deviceId), or all of them', async () => {
  const a = await inject('ttyUSB0');
  const b = await inject('ttyUSB0', { reason: 'second' });
  const c = await inject('ttyUSB1');
  const del = (query: string) => fetch(`${gw!.url}/api/v1/faults${query}`, { method: 'DELETE' });

  for (const id of ['valueOf', 'constructor', '__proto__', 'hasOwnProperty']) {
    const res = await fetch(`${gw!.url}/api/v1/faults/${id}`);
    assert.equal(res.status, 404, `GET /api/v1/faults/${id} is no fault, not an Object member`);
  }
  const bad = await del('?deviceId=ttyUSB0');
  assert.equal(bad.status, 400);
  assert.match(((await bad.json()) as { detail: string }).detail, /deviceId needs resource/);
  assert.equal((await faults()).length, 3, 'a refused request clears nothing');

  const one = await del(`?resource=${encodeURIComponent(SERIAL)}&deviceId=ttyUSB0`);
  assert.equal(one.status, 200);
  assert.deepEqual(
    ((await one.json()) as { items: { id: string }[] }).items.map((f) => f.id).sort(),
    [a.id, b.id].sort(),
  );
  assert.deepEqual(
    (await faults()).map((f) => f.id),
    [c.id],
  );
  const all = await del('');
  assert.deepEqual(
    ((await all.json()) as { items: { id: string }[] }).items.map((f) => f.id),
    [c.id],
  );
  await waitFor('healed in the kubelet', () => kubeletAllocatable().join() === '4,4');
});
