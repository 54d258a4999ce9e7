import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkTiers, NodeHistoryStore, pointsPerResource } from './history.js';
import type {
  DraDeviceCounts,
  DraHealthTransition,
  DraTaintView,
  HistoryTier,
  NodeSnapshot,
} from '@plugboard/api';

const R = 'plugboard.example/gpu';
const TIERS: HistoryTier[] = [
  { resolutionMs: 10, retentionMs: 100 },
  { resolutionMs: 50, retentionMs: 1000 },
];

function store(tiers = TIERS, maxTransitionsPerDevice = 4) {
  let now = 0;
  const s = new NodeHistoryStore({ nodeName: 'n', tiers, maxTransitionsPerDevice, now: () => now });
  return { s, at: (t: number) => (now = t) };
}

const counts = (allocatable: number, unhealthy = 8 - allocatable, allocated = 0) => ({
  capacity: 8,
  allocatable,
  allocated,
  unhealthy,
});

test('tiers are validated: finest first, multiples, growing retention', () => {
  const cases: [HistoryTier[], RegExp | null][] = [
    [TIERS, null],
    [[], /at least one/],
    [[{ resolutionMs: 10, retentionMs: 5 }], /at least resolutionMs/],
    [
      [
        { resolutionMs: 10, retentionMs: 100 },
        { resolutionMs: 15, retentionMs: 1000 },
      ],
      /larger multiple/,
    ],
    [
      [
        { resolutionMs: 10, retentionMs: 100 },
        { resolutionMs: 20, retentionMs: 100 },
      ],
      /longer than/,
    ],
  ];
  for (const [tiers, want] of cases) {
    const got = checkTiers(tiers);
    if (want) assert.match(got ?? '', want);
    else assert.equal(got, null);
  }
  assert.throws(() => store([]), /history tiers/);
});

test('one point per bucket, state carried forward when nothing changes', () => {
  const { s, at } = store();
  s.recordResource(R, counts(8), at(3));
  const out = s.tick(at(41));
  assert.deepEqual(
    out?.points.map((p) => [p.t, p.step, p.allocatable]),
    [
      [0, 10, 8],
      [10, 10, 8],
      [20, 10, 8],
      [30, 10, 8],
    ],
  );
  assert.equal(out?.points[0]?.resource, R);
  assert.equal(s.tick(at(45)), null, 'nothing new inside the open bucket');
});

test('a dip shorter than a bucket survives in minAllocatable / maxUnhealthy at every tier', () => {
  const { s, at } = store();
  s.recordResource(R, counts(8), at(0));
  s.recordResource(R, counts(6), at(52));
  s.recordResource(R, counts(8), at(55));
  s.tick(at(100));
  const h = s.query();
  const fine = h.resources[R]!.filter((p) => p.step === 10);
  const dip = fine.find((p) => p.t === 50)!;
  assert.deepEqual([dip.allocatable, dip.minAllocatable, dip.maxUnhealthy], [8, 6, 2]);
  // The coarse bucket [50, 100) merges the same samples: extremes compose.
  const { s: coarseOnly, at: at2 } = store([{ resolutionMs: 50, retentionMs: 1000 }]);
  coarseOnly.recordResource(R, counts(8), at2(0));
  coarseOnly.recordResource(R, counts(6), at2(52));
  coarseOnly.recordResource(R, counts(8), at2(55));
  coarseOnly.tick(at2(200));
  const coarse = coarseOnly.query().resources[R]!.find((p) => p.t === 50)!;
  assert.deepEqual([coarse.allocatable, coarse.minAllocatable, coarse.maxUnhealthy], [8, 6, 2]);
});

test('bounded: each tier holds retention / resolution points, older data only downsampled', () => {
  const { s, at } = store();
  s.recordResource(R, counts(8), at(0));
  for (let t = 0; t <= 5000; t += 7) {
    s.recordResource(R, counts(t % 2 ? 7 : 8), at(t));
    s.tick(at(t));
  }
  const points = s.query().resources[R]!;
  assert.ok(points.length <= pointsPerResource(TIERS), `${points.length} points`);
  const fine = points.filter((p) => p.step === 10);
  const coarse = points.filter((p) => p.step === 50);
  assert.equal(fine.length, 10);
  assert.ok(coarse.length > 0 && coarse.length <= 20);
  // Oldest first, coarse before fine, no overlap between tiers.
  for (let i = 1; i < points.length; i++) {
    assert.ok(points[i]!.t >= points[i - 1]!.t + points[i - 1]!.step, `overlap at ${i}`);
  }
  assert.ok(points[0]!.t >= 5000 - 1000 - 50, 'nothing older than the longest retention');
});

test('since filters points (bucket start) and keeps the device state in force at since', () => {
  const { s, at } = store();
  s.recordResource(R, counts(8), at(0));
  s.recordHealth(`${R}/gpu-0`, 'Healthy', null, at(0));
  s.recordHealth(`${R}/gpu-0`, 'Unhealthy', 'xid 79', at(25));
  s.recordHealth(`${R}/gpu-0`, 'Unhealthy', 'again', at(30)); // no change: not a transition
  s.recordHealth(`${R}/gpu-0`, 'Healthy', 'healed', at(70));
  s.tick(at(95));
  const h = s.query({ since: 40 });
  assert.equal(h.since, 40);
  assert.deepEqual(
    h.resources[R]!.map((p) => p.t),
    [40, 50, 60, 70, 80],
  );
  assert.deepEqual(
    h.devices[`${R}/gpu-0`]!.map((e) => [e.t, e.health, e.reason]),
    [
      [25, 'Unhealthy', 'xid 79'],
      [70, 'Healthy', 'healed'],
    ],
  );
  assert.deepEqual(s.query({ since: 1000 }).resources[R], []);
  assert.deepEqual(Object.keys(s.query({ resource: 'other' }).resources), []);
  assert.deepEqual(Object.keys(s.query({ resource: 'other' }).devices), []);
});

test('device transitions are bounded per device', () => {
  const { s, at } = store(TIERS, 3);
  for (let i = 0; i < 10; i++) s.recordHealth('r/d', i % 2 ? 'Unhealthy' : 'Healthy', null, at(i));
  const got = s.query().devices['r/d']!;
  assert.deepEqual(
    got.map((e) => e.t),
    [7, 8, 9],
  );
});

test('observe follows only what a patch touched; a removed resource stops growing', () => {
  const { s, at } = store();
  const snap = {
    resources: { [R]: { kubelet: { ...counts(8), free: 8, healthy: 8 } } },
    devices: { [`${R}/gpu-0`]: { health: 'Healthy', reason: null } },
  } as unknown as NodeSnapshot;
  s.observeAll(snap, at(0));
  const faulted = {
    resources: { [R]: { kubelet: { ...counts(7), free: 7, healthy: 7 } } },
    devices: { [`${R}/gpu-0`]: { health: 'Unhealthy', reason: 'fault' } },
  } as unknown as NodeSnapshot;
  s.observe(
    faulted,
    [
      { op: 'replace', path: '/resources/plugboard.example~1gpu/kubelet/allocatable', value: 7 },
      { op: 'replace', path: '/devices/plugboard.example~1gpu~1gpu-0/health', value: 'Unhealthy' },
    ],
    at(12),
  );
  const out = s.tick(at(20))!;
  assert.deepEqual(
    out.transitions.map((e) => [e.device, e.health]),
    [
      [`${R}/gpu-0`, 'Healthy'],
      [`${R}/gpu-0`, 'Unhealthy'],
    ],
  );
  assert.deepEqual(
    out.points.map((p) => [p.t, p.allocatable, p.minAllocatable]),
    [
      [0, 8, 8],
      [10, 7, 7],
    ],
  );
  s.observe({ ...faulted, resources: {} }, [{ op: 'remove', path: '/resources/x' }], at(21));
  s.observe(
    { ...faulted, resources: {} },
    [{ op: 'remove', path: `/resources/plugboard.example~1gpu` }],
    at(22),
  );
  s.tick(at(80));
  const fine = s.query().resources[R]!.filter((p) => p.step === 10);
  assert.equal(fine.at(-1)!.t, 20, 'the bucket open at removal is the last one');
});

test('resources and devices that went away are forgotten once they age out of the longest retention', () => {
  const { s, at } = store();
  const snap = (withDevice: boolean) =>
    ({
      resources: withDevice ? { [R]: { kubelet: { ...counts(8), free: 8, healthy: 8 } } } : {},
      devices: withDevice ? { [`${R}/gpu-0`]: { health: 'Healthy', reason: null } } : {},
    }) as unknown as NodeSnapshot;
  s.observeAll(snap(true), at(0));
  s.tick(at(30));
  s.observeAll(snap(false), at(35));
  s.tick(at(500));
  assert.ok(s.hasResource(R), 'still within retention');
  assert.ok(s.query().devices[`${R}/gpu-0`]);
  s.tick(at(2000));
  assert.equal(s.hasResource(R), false);
  assert.equal(s.query().devices[`${R}/gpu-0`], undefined);
  // A device that comes back keeps being recorded.
  s.observeAll(snap(true), at(2100));
  assert.equal(s.query().devices[`${R}/gpu-0`]!.length, 1);
});

// DRA: per driver its own counts (not the extended-resource shape), per device health and taint.
const DRIVER = 'gpu.example.com';
const DEV = `${DRIVER}/node-a/gpu-0`;
const dra = (usable: number, changes: Partial<DraDeviceCounts> = {}): DraDeviceCounts => ({
  published: 8,
  usable,
  allocated: 2,
  free: usable - 2,
  unhealthy: 8 - usable,
  tainted: 0,
  ...changes,
});

test('DRA driver points: the fewest usable and most unhealthy/tainted of a bucket survive, at every tier', () => {
  const feed = (s: NodeHistoryStore, at: (t: number) => number) => {
    s.recordDraDriver(DRIVER, dra(8), at(0));
    s.recordDraDriver(DRIVER, dra(6, { tainted: 1 }), at(52));
    s.recordDraDriver(DRIVER, dra(8), at(55));
  };
  const { s, at } = store();
  feed(s, at);
  s.tick(at(100));
  const fine = s.query().draDrivers![DRIVER]!.filter((p) => p.step === 10);
  const dip = fine.find((p) => p.t === 50)!;
  assert.deepEqual(dip, {
    t: 50,
    step: 10,
    ...dra(8),
    minUsable: 6,
    maxUnhealthy: 2,
    maxTainted: 1,
  });
  assert.deepEqual(
    fine.filter((p) => p.t !== 50).map((p) => [p.minUsable, p.maxUnhealthy, p.maxTainted]),
    fine.filter((p) => p.t !== 50).map(() => [8, 0, 0]),
    'the dip is in its own bucket only',
  );
  // A store with only the coarse tier sees the same samples: the extremes compose.
  const coarseOnly = store([{ resolutionMs: 50, retentionMs: 1000 }]);
  feed(coarseOnly.s, coarseOnly.at);
  coarseOnly.s.tick(coarseOnly.at(200));
  const coarse = coarseOnly.s.query().draDrivers![DRIVER]!.find((p) => p.t === 50)!;
  const merged = fine.filter((p) => p.t >= 50 && p.t < 100);
  assert.deepEqual(
    [coarse.usable, coarse.minUsable, coarse.maxUnhealthy, coarse.maxTainted],
    [
      merged.at(-1)!.usable,
      Math.min(...merged.map((p) => p.minUsable)),
      Math.max(...merged.map((p) => p.maxUnhealthy)),
      Math.max(...merged.map((p) => p.maxTainted)),
    ],
  );
  // Nothing of the DRA side leaks into the device-plugin series, nor the other way round.
  assert.deepEqual(s.query().resources, {});
});

test('DRA driver points are bounded like resources: retention / resolution per tier, no overlap', () => {
  const { s, at } = store();
  for (let t = 0; t <= 5000; t += 7) {
    s.recordDraDriver(DRIVER, dra(t % 2 ? 7 : 8), at(t));
    s.tick(at(t));
  }
  const points = s.query().draDrivers![DRIVER]!;
  assert.ok(points.length <= pointsPerResource(TIERS), `${points.length} points`);
  assert.equal(points.filter((p) => p.step === 10).length, 10);
  for (let i = 1; i < points.length; i++) {
    assert.ok(points[i]!.t >= points[i - 1]!.t + points[i - 1]!.step, `overlap at ${i}`);
  }
  assert.ok(points[0]!.t >= 5000 - 1000 - 50, 'nothing older than the longest retention');
});

test('DRA device transitions: health and the strongest taint, not the reason alone; bounded per device', () => {
  const { s, at } = store(TIERS, 4);
  const taint = (effect: DraTaintView['effect']): DraTaintView => ({
    key: 'k',
    value: null,
    effect,
    timeAdded: null,
    source: 'ResourceSlice',
  });
  const steps: [number, DraHealthTransition['health'], string | null, DraTaintView[]][] = [
    [0, 'Healthy', null, []],
    [1, 'Healthy', 'still fine', []], // reason only: not a transition
    [2, 'Unhealthy', 'xid 79', []],
    [3, 'Unhealthy', 'xid 79', [taint('None')]], // effect None does not count
    [4, 'Unhealthy', 'xid 79', [taint('None'), taint('NoSchedule')]],
    [5, 'Unhealthy', 'xid 79', [taint('NoSchedule'), taint('NoExecute')]],
    [6, 'Healthy', 'healed', []],
  ];
  for (const [t, health, reason, taints] of steps) s.recordDraDevice(DEV, { health, reason, taints }, at(t));
  assert.deepEqual(
    s.query().draDevices![DEV]!.map((e) => [e.t, e.health, e.reason, e.taint]),
    [
      // The first entry (t 0) was dropped: four kept.
      [2, 'Unhealthy', 'xid 79', null],
      [4, 'Unhealthy', 'xid 79', 'NoSchedule'],
      [5, 'Unhealthy', 'xid 79', 'NoExecute'],
      [6, 'Healthy', 'healed', null],
    ],
  );
  const out = s.tick(at(7))!;
  assert.deepEqual(
    out.draTransitions.map((e) => [e.device, e.t, e.taint]),
    [
      [DEV, 0, null],
      [DEV, 2, null],
      [DEV, 4, 'NoSchedule'],
      [DEV, 5, 'NoExecute'],
      [DEV, 6, null],
    ],
  );
  assert.deepEqual(out.transitions, [], 'DRA transitions are not device-plugin transitions');
  assert.equal(s.query().devices[DEV], undefined);
});

test('observe follows the DRA paths a patch touched; the stream message and a driver query carry them', () => {
  const { s, at } = store();
  const device = (health: DraHealthTransition['health'], effect?: DraTaintView['effect']) => ({
    health,
    reason: health === 'Unhealthy' ? 'fault' : null,
    taints: effect ? [{ key: 'k', value: null, effect, timeAdded: null, source: 'ResourceSlice' }] : [],
  });
  const snap = (counts: DraDeviceCounts, d: ReturnType<typeof device>, withDra = true) =>
    ({
      resources: { [R]: { kubelet: { ...counts8, free: 8, healthy: 8 } } },
      devices: { [`${R}/gpu-0`]: { health: 'Healthy', reason: null } },
      ...(withDra ? { dra: { drivers: { [DRIVER]: { counts } }, devices: { [DEV]: d }, claims: {} } } : {}),
    }) as unknown as NodeSnapshot;
  const counts8 = counts(8);
  s.observeAll(snap(dra(8), device('Healthy')), at(0));
  // A claim-only change touches no driver or device: nothing is recorded for it.
  s.observe(snap(dra(8), device('Healthy')), [{ op: 'add', path: '/dra/claims/ns~1c', value: {} }], at(3));
  s.observe(
    snap(dra(7, { tainted: 1 }), device('Unhealthy', 'NoExecute')),
    [
      { op: 'replace', path: `/dra/drivers/${DRIVER}/counts/usable`, value: 7 },
      { op: 'replace', path: `/dra/devices/${DEV.replaceAll('/', '~1')}/health`, value: 'Unhealthy' },
    ],
    at(12),
  );
  const out = s.tick(at(20))!;
  assert.deepEqual(
    out.draPoints.map((p) => [p.driver, p.t, p.usable, p.minUsable, p.maxTainted]),
    [
      [DRIVER, 0, 8, 8, 0],
      [DRIVER, 10, 7, 7, 1],
    ],
  );
  assert.deepEqual(
    out.draTransitions.map((e) => [e.device, e.t, e.health, e.taint]),
    [
      [DEV, 0, 'Healthy', null],
      [DEV, 12, 'Unhealthy', 'NoExecute'],
    ],
  );
  assert.deepEqual(
    out.points.map((p) => p.resource),
    [R, R],
    'the device plugin beside it',
  );
  // `resource` may name a DRA driver: its points and devices only.
  const byDriver = s.query({ resource: DRIVER });
  assert.deepEqual(Object.keys(byDriver.draDrivers!), [DRIVER]);
  assert.deepEqual(Object.keys(byDriver.draDevices!), [DEV]);
  assert.deepEqual([byDriver.resources, byDriver.devices], [{}, {}]);
  const byResource = s.query({ resource: R });
  assert.deepEqual([byResource.draDrivers, byResource.draDevices], [{}, {}]);
  assert.ok(s.hasDraDriver(DRIVER));

  // `/dra` replaced as a whole (e.g. the section went away): the driver stops growing, the
  // device's transitions stay until they age out.
  s.observe(snap(dra(7), device('Unhealthy'), false), [{ op: 'remove', path: '/dra' }], at(21));
  s.tick(at(80));
  const fine = s.query().draDrivers![DRIVER]!.filter((p) => p.step === 10);
  assert.equal(fine.at(-1)!.t, 20, 'the bucket open at removal is the last one');
  assert.equal(s.query().draDevices![DEV]!.length, 2);
  s.tick(at(2000));
  assert.equal(s.hasDraDriver(DRIVER), false);
  assert.equal(s.query().draDevices![DEV], undefined);
});
