import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourcePoint } from '@plugboard/api';
import {
  appendHistory,
  healthSegments,
  historyRows,
  historySummary,
  toChartData,
  type HistoryView,
} from './history';

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
});

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
