// Shapes the gateway's history (GET /api/v1/history, the stream's `history` messages) for the
// charts and their text equivalents: a bounded client-side window that live messages extend,
// uPlot's column data, change-only table rows and device health segments. Pure functions, tested
// in history.test.ts.
import type {
  HealthTransition,
  HistoryMessage,
  NodeHistory,
  ResourceCounts,
  ResourcePoint,
} from '@plugboard/api';

/** What the cache holds for one node and window. */
export interface HistoryView {
  windowMs: number;
  /** Finest step the gateway uses (for gap detection). */
  stepMs: number;
  resources: Record<string, ResourcePoint[]>;
  devices: Record<string, HealthTransition[]>;
}

/** Transitions kept per device on the client (the gateway bounds its own). */
const MAX_TRANSITIONS = 256;

export const HISTORY_WINDOWS = [
  { label: 'Last 15 minutes', ms: 15 * 60_000, since: '15m' },
  { label: 'Last hour', ms: 3_600_000, since: '1h' },
  { label: 'Last 6 hours', ms: 6 * 3_600_000, since: '6h' },
  { label: 'Last 24 hours', ms: 24 * 3_600_000, since: '24h' },
] as const;

export function fromResponse(h: NodeHistory, windowMs: number): HistoryView {
  return {
    windowMs,
    stepMs: h.tiers[0]?.resolutionMs ?? 10_000,
    resources: h.resources,
    devices: h.devices,
  };
}

/**
 * Appends a stream `history` message. Points already held (same or older `t`) are ignored, points
 * older than the window are dropped; `gap` says a bucket went missing (reconnect, lost message)
 * so the caller refetches over REST.
 */
export function appendHistory(
  view: HistoryView,
  msg: Pick<HistoryMessage, 'points' | 'transitions'>,
  now: number,
): { view: HistoryView; gap: boolean } {
  let gap = false;
  const floor = now - view.windowMs;
  const resources = { ...view.resources };
  for (const p of msg.points) {
    const prev = resources[p.resource] ?? [];
    const last = prev.at(-1);
    if (last && p.t <= last.t) continue;
    if (last && last.step === p.step && p.t > last.t + last.step) gap = true;
    const { resource, ...point } = p;
    let start = 0;
    while (start < prev.length && prev[start]!.t < floor) start++;
    resources[resource] = [...prev.slice(start), point];
  }
  let devices = view.devices;
  if (msg.transitions.length) {
    devices = { ...view.devices };
    for (const { device, ...tr } of msg.transitions) {
      const prev = devices[device] ?? [];
      const last = prev.at(-1);
      if (last && (tr.t < last.t || (tr.t === last.t && tr.health === last.health))) continue;
      devices[device] = [...prev, tr].slice(-MAX_TRANSITIONS);
    }
  }
  return { view: { ...view, resources, devices }, gap };
}

type Counts = Pick<ResourceCounts, 'capacity' | 'allocatable' | 'allocated'>;

/**
 * uPlot's AlignedData (x in seconds): one column each for capacity, allocatable, allocated. When
 * the live counts are given the series ends now with them, so the chart reaches the present.
 */
export function toChartData(
  points: readonly ResourcePoint[],
  live: Counts | null,
  now: number,
): [number[], number[], number[], number[]] {
  const x: number[] = [];
  const capacity: number[] = [];
  const allocatable: number[] = [];
  const allocated: number[] = [];
  for (const p of points) {
    x.push(p.t / 1000);
    capacity.push(p.capacity);
    // The dip, not the end state: a fault shorter than a bucket must stay visible.
    allocatable.push(p.minAllocatable);
    allocated.push(p.allocated);
  }
  if (live && (x.length === 0 || now / 1000 > x.at(-1)!)) {
    x.push(now / 1000);
    capacity.push(live.capacity);
    allocatable.push(live.allocatable);
    allocated.push(live.allocated);
  }
  return [x, capacity, allocatable, allocated];
}

/** One row of a chart's text equivalent: consecutive buckets with the same counts, merged. */
export interface HistoryRow {
  from: number;
  to: number;
  capacity: number;
  allocatable: number;
  minAllocatable: number;
  allocated: number;
  unhealthy: number;
}

/** Change-only rows, newest first, at most `max` (a screen reader should not read 360 equal rows). */
export function historyRows(points: readonly ResourcePoint[], max = 30): HistoryRow[] {
  const rows: HistoryRow[] = [];
  for (const p of points) {
    const last = rows.at(-1);
    if (
      last &&
      last.capacity === p.capacity &&
      last.allocatable === p.allocatable &&
      last.minAllocatable === p.minAllocatable &&
      last.allocated === p.allocated &&
      last.unhealthy === p.unhealthy &&
      last.to === p.t
    ) {
      last.to = p.t + p.step;
      continue;
    }
    rows.push({
      from: p.t,
      to: p.t + p.step,
      capacity: p.capacity,
      allocatable: p.allocatable,
      minAllocatable: p.minAllocatable,
      allocated: p.allocated,
      unhealthy: p.unhealthy,
    });
  }
  return rows.reverse().slice(0, max);
}

/** One sentence for the chart's caption (and its accessible name). */
export function historySummary(points: readonly ResourcePoint[], windowLabel: string): string {
  if (points.length === 0) return `${windowLabel}: no history recorded yet.`;
  let min = Infinity;
  let max = -Infinity;
  let peakAllocated = 0;
  for (const p of points) {
    min = Math.min(min, p.minAllocatable);
    max = Math.max(max, p.allocatable);
    peakAllocated = Math.max(peakAllocated, p.allocated);
  }
  const last = points.at(-1)!;
  const range = min === max ? `stayed at ${min}` : `ranged from ${min} to ${max}`;
  return `${windowLabel}: allocatable ${range} of capacity ${last.capacity}; at most ${peakAllocated} allocated.`;
}

export interface HealthSegment {
  from: number;
  to: number;
  health: HealthTransition['health'];
  reason: string | null;
}

/** The device's health over [from, to] as segments (before its first transition: unknown, omitted). */
export function healthSegments(
  transitions: readonly HealthTransition[],
  from: number,
  to: number,
): HealthSegment[] {
  const out: HealthSegment[] = [];
  for (let i = 0; i < transitions.length; i++) {
    const tr = transitions[i]!;
    const start = Math.max(tr.t, from);
    const end = Math.min(transitions[i + 1]?.t ?? to, to);
    if (end <= start) continue;
    const last = out.at(-1);
    if (last && last.health === tr.health && last.to === start) {
      last.to = end;
      last.reason = tr.reason ?? last.reason;
    } else out.push({ from: start, to: end, health: tr.health, reason: tr.reason });
  }
  return out;
}
