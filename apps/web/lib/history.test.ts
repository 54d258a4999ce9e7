import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { DraDriverPoint, NodeHistory, ResourcePoint } from '@plugboard/api';
import {
  appendHistory,
  draHistoryRows,
  draHistorySummary,
  fromResponse,
  healthSegments,
  historyRows,
  historySummary,
  toChartData,
  toDraChartData,
  type HistoryView,
} from './history';
import { draPoint } from '../test/make-history';

const R = 'plugboard.example/gpu';
const pt = (t: number, allocatable: number, minAllocatable = allocatable, step = 10): ResourcePoint => ({
  t,
  step,
  capacity: 8,
  allocatable,
  allocated: 2,
  unhealthy: 8 - allocatable,
  minAllocatable,
  maxUnhealthy: 8 - minAllocatable,
});
const view = (points: ResourcePoint[], windowMs = 1000): HistoryView => ({
  windowMs,
  stepMs: 10,
  resources: { [R]: points },
  devices: {},
  draDrivers: {},
  draDevices: {},
  draRecorded: true,
});

const D = 'gpu.plugboard.example';
/** A DRA bucket of 10 ms: `minUsable` the fewest usable within it, the rest unhealthy. */
const dpt = (t: number, usable: number, minUsable = usable): DraDriverPoint =>
  draPoint(t, usable, { minUsable, maxUnhealthy: 8 - minUsable }, 10);

describe('appendHistory', () => {
  it('appends new buckets, ignores ones already held, trims to the window and keeps other resources', () => {
    const v = {
      ...view([pt(0, 8), pt(10, 8)], 25),
      resources: { [R]: [pt(0, 8), pt(10, 8)], other: [pt(0, 1)] },
    };
    const r = appendHistory(
      v,
      {
        points: [
          { resource: R, ...pt(10, 5) },
          { resource: R, ...pt(20, 7) },
        ],
        transitions: [],
      },
      35,
    );
    assert.equal(r.gap, false);
    // t=0 fell out of the 25 ms window; t=10 was already held (the stream's copy is ignored).
    assert.deepEqual(
      r.view.resources[R]!.map((p) => [p.t, p.allocatable]),
      [
        [10, 8],
        [20, 7],
      ],
    );
    assert.equal(r.view.resources.other, v.resources.other, 'untouched resources keep their array');
    assert.equal(v.resources[R].length, 2, 'the cached view is not mutated');
  });

  it('reports a gap when a bucket is missing, so the caller refetches', () => {
    const r = appendHistory(
      view([pt(0, 8)]),
      { points: [{ resource: R, ...pt(30, 8) }], transitions: [] },
      40,
    );
    assert.equal(r.gap, true);
  });

  it('appends device transitions in order, dropping duplicates and older ones', () => {
    const v: HistoryView = {
      ...view([]),
      devices: { [`${R}/gpu-0`]: [{ t: 5, health: 'Healthy', reason: null }] },
    };
    const r = appendHistory(
      v,
      {
        points: [],
        transitions: [
          { device: `${R}/gpu-0`, t: 3, health: 'Unhealthy', reason: 'stale' },
          { device: `${R}/gpu-0`, t: 12, health: 'Unhealthy', reason: 'xid 79' },
          { device: `${R}/gpu-1`, t: 12, health: 'Healthy', reason: null },
        ],
      },
      20,
    );
    assert.deepEqual(
      r.view.devices[`${R}/gpu-0`]!.map((e) => [e.t, e.health]),
      [
        [5, 'Healthy'],
        [12, 'Unhealthy'],
      ],
    );
    assert.equal(r.view.devices[`${R}/gpu-1`]!.length, 1);
  });
});

describe('chart data and text equivalents', () => {
  it('toChartData: seconds on x, the dip for allocatable, the live counts at now', () => {
    const [x, cap, alloc, used] = toChartData(
      [pt(0, 8), pt(10_000, 8, 6)],
      { capacity: 8, allocatable: 7, allocated: 3 },
      25_000,
    );
    assert.deepEqual(x, [0, 10, 25]);
    assert.deepEqual(cap, [8, 8, 8]);
    assert.deepEqual(alloc, [8, 6, 7]);
    assert.deepEqual(used, [2, 2, 3]);
    assert.equal(toChartData([], null, 5)[0].length, 0);
  });

  it('historyRows: equal consecutive buckets merge, newest first, bounded', () => {
    const rows = historyRows([pt(0, 8), pt(10, 8), pt(20, 7), pt(30, 7), pt(40, 8, 6), pt(60, 8)]);
    assert.deepEqual(
      rows.map((r) => [r.from, r.to, r.allocatable, r.minAllocatable]),
      [
        [60, 70, 8, 8],
        [40, 50, 8, 6],
        [20, 40, 7, 7],
        [0, 20, 8, 8],
      ],
      'a hole between buckets (50..60) starts a new row',
    );
    const many = Array.from({ length: 100 }, (_, i) => pt(i * 10, i % 2 ? 7 : 8));
    assert.equal(historyRows(many, 30).length, 30);
    assert.equal(historyRows(many, 30)[0]!.from, 990);
  });

  it('historySummary: range of allocatable including dips, and the peak allocation', () => {
    assert.equal(
      historySummary([pt(0, 8), pt(10, 8, 5)], 'Last hour'),
      'Last hour: allocatable ranged from 5 to 8 of capacity 8; at most 2 allocated.',
    );
    assert.equal(
      historySummary([pt(0, 8)], 'Last hour'),
      'Last hour: allocatable stayed at 8 of capacity 8; at most 2 allocated.',
    );
    assert.match(historySummary([], 'Last hour'), /no history recorded yet/);
  });

  it('healthSegments: clipped to the window, equal neighbours merged', () => {
    const segs = healthSegments(
      [
        { t: 0, health: 'Healthy', reason: null },
        { t: 50, health: 'Unhealthy', reason: 'xid 79' },
        { t: 70, health: 'Healthy', reason: 'healed' },
      ],
      20,
      100,
    );
    assert.deepEqual(
      segs.map((s) => [s.from, s.to, s.health]),
      [
        [20, 50, 'Healthy'],
        [50, 70, 'Unhealthy'],
        [70, 100, 'Healthy'],
      ],
    );
    assert.deepEqual(healthSegments([{ t: 200, health: 'Healthy', reason: null }], 0, 100), []);
  });
});

describe('DRA drivers and devices', () => {
  it('fromResponse: a gateway without DRA history says so; one with it fills the DRA series', () => {
    const base: NodeHistory = {
      schema: 1,
      nodeName: 'n',
      now: 0,
      since: 0,
      tiers: [],
      resources: {},
      devices: {},
    };
    assert.deepEqual(
      [fromResponse(base, 1000).draRecorded, fromResponse(base, 1000).draDrivers],
      [false, {}],
    );
    const withDra = fromResponse({ ...base, draDrivers: { [D]: [dpt(0, 8)] }, draDevices: {} }, 1000);
    assert.equal(withDra.draRecorded, true);
    assert.equal(withDra.draDrivers[D]!.length, 1);
  });

  it('appendHistory extends DRA drivers and devices beside resources; a missing DRA bucket is a gap', () => {
    const v = { ...view([pt(0, 8)]), draDrivers: { [D]: [dpt(0, 8)] } };
    const r = appendHistory(
      v,
      {
        points: [{ resource: R, ...pt(10, 8) }],
        transitions: [],
        draPoints: [{ driver: D, ...dpt(10, 7, 6) }],
        draTransitions: [
          { device: `${D}/n/gpu-1`, t: 12, health: 'Unhealthy', reason: 'xid 79', taint: 'NoExecute' },
        ],
      },
      20,
    );
    assert.equal(r.gap, false);
    assert.deepEqual(
      r.view.draDrivers[D]!.map((p) => [p.t, p.usable, p.minUsable]),
      [
        [0, 8, 8],
        [10, 7, 6],
      ],
    );
    assert.deepEqual(
      r.view.draDevices[`${D}/n/gpu-1`]!.map((e) => [e.health, e.taint]),
      [['Unhealthy', 'NoExecute']],
    );
    assert.equal(r.view.resources[R]!.length, 2);
    const gap = appendHistory(
      v,
      { points: [], transitions: [], draPoints: [{ driver: D, ...dpt(30, 8) }] },
      40,
    );
    assert.equal(gap.gap, true, 'the DRA series lost the bucket at 10 and 20');
    // An older gateway's message has no DRA fields: nothing changes on the DRA side.
    const old = appendHistory(v, { points: [], transitions: [] }, 20);
    assert.equal(old.view.draDrivers, v.draDrivers);
  });

  it('toDraChartData: published, the fewest usable, allocated, the most unhealthy, then the live counts', () => {
    const [x, published, usable, allocated, unhealthy] = toDraChartData(
      [dpt(0, 8), dpt(10_000, 8, 6)],
      { published: 8, usable: 7, allocated: 3, free: 4, unhealthy: 1, tainted: 1 },
      25_000,
    );
    assert.deepEqual(x, [0, 10, 25]);
    assert.deepEqual(published, [8, 8, 8]);
    assert.deepEqual(usable, [8, 6, 7]);
    assert.deepEqual(allocated, [2, 2, 3]);
    assert.deepEqual(unhealthy, [0, 2, 1]);
  });

  it('draHistoryRows merge equal buckets and keep a dip; draHistorySummary says usable of published', () => {
    const rows = draHistoryRows([dpt(0, 8), dpt(10, 8), dpt(20, 8, 6), dpt(30, 8)]);
    assert.deepEqual(
      rows.map((r) => [r.from, r.to, r.usable, r.minUsable, r.maxUnhealthy]),
      [
        [30, 40, 8, 8, 0],
        [20, 30, 8, 6, 2],
        [0, 20, 8, 8, 0],
      ],
    );
    assert.equal(
      draHistorySummary([dpt(0, 8), dpt(10, 8, 6)], 'Last hour'),
      'Last hour: usable ranged from 6 to 8 of 8 published; at most 2 allocated, at most 2 unhealthy.',
    );
    assert.equal(
      draHistorySummary([{ ...dpt(0, 7), maxTainted: 1 }], 'Last hour'),
      'Last hour: usable stayed at 7 of 8 published; at most 2 allocated, at most 1 unhealthy, at most 1 tainted.',
    );
    assert.match(draHistorySummary([], 'Last hour'), /no history recorded yet/);
  });

  it('healthSegments: a DRA taint starts a segment of its own; Unknown is a state', () => {
    const segs = healthSegments(
      [
        { t: 0, health: 'Unknown', reason: null, taint: null },
        { t: 10, health: 'Healthy', reason: null, taint: null },
        { t: 30, health: 'Healthy', reason: null, taint: 'NoSchedule' },
        { t: 60, health: 'Healthy', reason: null, taint: null },
      ],
      0,
      100,
    );
    assert.deepEqual(
      segs.map((s) => [s.from, s.to, s.health, s.taint]),
      [
        [0, 10, 'Unknown', null],
        [10, 30, 'Healthy', null],
        [30, 60, 'Healthy', 'NoSchedule'],
        [60, 100, 'Healthy', null],
      ],
    );
  });
});
