// Shapes the gateway's history (GET /api/v1/history, the stream's `history` messages) for the
// charts and their text equivalents: a bounded client-side window that live messages extend,
// uPlot's column data, change-only table rows and device health segments — for device-plugin
// resources and devices, and for DRA drivers (their own counts: published, usable, allocated,
// unhealthy, tainted) and DRA devices (health and taint). Pure functions, tested in history.test.ts.
import type {
  DraDeviceCounts,
  DraDriverPoint,
  DraHealth,
  DraHealthTransition,
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
  draDrivers: Record<string, DraDriverPoint[]>;
  draDevices: Record<string, DraHealthTransition[]>;
  /** Whether the gateway records DRA history at all (an older one sends no DRA fields). */
  draRecorded: boolean;
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
    draDrivers: h.draDrivers ?? {},
    draDevices: h.draDevices ?? {},
    draRecorded: h.draDevices !== undefined,
  };
}

/** A closed bucket: resource and DRA driver points alike. */
interface Bucketed {
  t: number;
  step: number;
}

/** Appends streamed points per series; `gap`: a bucket of the same step went missing. */
function appendPoints<P extends Bucketed>(
  held: Record<string, P[]>,
  incoming: readonly (readonly [string, P])[],
  floor: number,
): { series: Record<string, P[]>; gap: boolean } {
  if (incoming.length === 0) return { series: held, gap: false };
  let gap = false;
  const series = { ...held };
  for (const [name, p] of incoming) {
    const prev = series[name] ?? [];
    const last = prev.at(-1);
    if (last && p.t <= last.t) continue;
    if (last && last.step === p.step && p.t > last.t + last.step) gap = true;
    let start = 0;
    while (start < prev.length && prev[start]!.t < floor) start++;
    series[name] = [...prev.slice(start), p];
  }
  return { series, gap };
}

/** Appends streamed transitions per device, in order, dropping duplicates and older ones. */
function appendTransitions<T extends { t: number; health: string }>(
  held: Record<string, T[]>,
  incoming: readonly (readonly [string, T])[],
): Record<string, T[]> {
  if (incoming.length === 0) return held;
  const devices = { ...held };
  for (const [device, tr] of incoming) {
    const prev = devices[device] ?? [];
    const last = prev.at(-1);
    if (last && (tr.t < last.t || (tr.t === last.t && tr.health === last.health))) continue;
    devices[device] = [...prev, tr].slice(-MAX_TRANSITIONS);
  }
  return devices;
}

/**
 * Appends a stream `history` message. Points already held (same or older `t`) are ignored, points
 * older than the window are dropped; `gap` says a bucket went missing (reconnect, lost message)
 * so the caller refetches over REST.
 */
export function appendHistory(
  view: HistoryView,
  msg: Pick<HistoryMessage, 'points' | 'transitions' | 'draPoints' | 'draTransitions'>,
  now: number,
): { view: HistoryView; gap: boolean } {
  const floor = now - view.windowMs;
  const resources = appendPoints(
    view.resources,
    msg.points.map(({ resource, ...p }) => [resource, p] as const),
    floor,
  );
  const drivers = appendPoints(
    view.draDrivers,
    (msg.draPoints ?? []).map(({ driver, ...p }) => [driver, p] as const),
    floor,
  );
  return {
    view: {
      ...view,
      resources: resources.series,
      devices: appendTransitions(
        view.devices,
        msg.transitions.map(({ device, ...tr }) => [device, tr] as const),
      ),
      draDrivers: drivers.series,
      draDevices: appendTransitions(
        view.draDevices,
        (msg.draTransitions ?? []).map(({ device, ...tr }) => [device, tr] as const),
      ),
      draRecorded: view.draRecorded || msg.draPoints !== undefined,
    },
    gap: resources.gap || drivers.gap,
  };
}

/**
 * uPlot's AlignedData (x in seconds): one column per series `value`. When the live values are
 * given the series ends now with them, so the chart reaches the present.
 */
function chartData<P extends Bucketed>(
  points: readonly P[],
  columns: readonly ((p: P) => number)[],
  live: readonly number[] | null,
  now: number,
): number[][] {
  const out: number[][] = [[], ...columns.map(() => [])];
  for (const p of points) {
    out[0]!.push(p.t / 1000);
    columns.forEach((value, i) => out[i + 1]!.push(value(p)));
  }
  if (live && (points.length === 0 || now / 1000 > out[0]!.at(-1)!)) {
    out[0]!.push(now / 1000);
    live.forEach((v, i) => out[i + 1]!.push(v));
  }
  return out;
}

type Counts = Pick<ResourceCounts, 'capacity' | 'allocatable' | 'allocated'>;

/** Capacity, allocatable (the bucket's dip, not its end: a short fault stays visible), allocated. */
export function toChartData(
  points: readonly ResourcePoint[],
  live: Counts | null,
  now: number,
): [number[], number[], number[], number[]] {
  return chartData(
    points,
    [(p) => p.capacity, (p) => p.minAllocatable, (p) => p.allocated],
    live && [live.capacity, live.allocatable, live.allocated],
    now,
  ) as [number[], number[], number[], number[]];
}

/** A DRA driver: published, usable (the bucket's fewest), allocated, unhealthy (the bucket's most). */
export function toDraChartData(
  points: readonly DraDriverPoint[],
  live: DraDeviceCounts | null,
  now: number,
): [number[], number[], number[], number[], number[]] {
  return chartData(
    points,
    [(p) => p.published, (p) => p.minUsable, (p) => p.allocated, (p) => p.maxUnhealthy],
    live && [live.published, live.usable, live.allocated, live.unhealthy],
    now,
  ) as [number[], number[], number[], number[], number[]];
}

/** One row of a chart's text equivalent: consecutive buckets with the same values, merged. */
export type HistoryRow<P extends Bucketed> = P & { from: number; to: number };

/** Change-only rows, newest first, at most `max` (a screen reader should not read 360 equal rows). */
function changeRows<P extends Bucketed>(
  points: readonly P[],
  fields: readonly (keyof P)[],
  max: number,
): HistoryRow<P>[] {
  const rows: HistoryRow<P>[] = [];
  for (const p of points) {
    const last = rows.at(-1);
    if (last && last.to === p.t && fields.every((f) => last[f] === p[f])) {
      last.to = p.t + p.step;
      continue;
    }
    rows.push({ ...p, from: p.t, to: p.t + p.step });
  }
  return rows.reverse().slice(0, max);
}

export const historyRows = (points: readonly ResourcePoint[], max = 30): HistoryRow<ResourcePoint>[] =>
  changeRows(points, ['capacity', 'allocatable', 'minAllocatable', 'allocated', 'unhealthy'], max);

export const draHistoryRows = (points: readonly DraDriverPoint[], max = 30): HistoryRow<DraDriverPoint>[] =>
  changeRows(
    points,
    ['published', 'usable', 'minUsable', 'allocated', 'unhealthy', 'maxUnhealthy', 'tainted', 'maxTainted'],
    max,
  );

/** "stayed at n" or "ranged from the lowest `low` to the highest `high`" over the points. */
function rangeText<P>(points: readonly P[], low: (p: P) => number, high: (p: P) => number): string {
  let min = Infinity;
  let max = -Infinity;
  for (const p of points) {
    min = Math.min(min, low(p));
    max = Math.max(max, high(p));
  }
  return min === max ? `stayed at ${min}` : `ranged from ${min} to ${max}`;
}

const peak = <P>(points: readonly P[], value: (p: P) => number): number =>
  points.reduce((m, p) => Math.max(m, value(p)), 0);

/** One sentence for the chart's caption (and its accessible name). */
export function historySummary(points: readonly ResourcePoint[], windowLabel: string): string {
  if (points.length === 0) return `${windowLabel}: no history recorded yet.`;
  const range = rangeText(
    points,
    (p) => p.minAllocatable,
    (p) => p.allocatable,
  );
  return `${windowLabel}: allocatable ${range} of capacity ${points.at(-1)!.capacity}; at most ${peak(points, (p) => p.allocated)} allocated.`;
}

/** The DRA driver's sentence: usable against published, and the peaks of allocated and unhealthy. */
export function draHistorySummary(points: readonly DraDriverPoint[], windowLabel: string): string {
  if (points.length === 0) return `${windowLabel}: no history recorded yet.`;
  const range = rangeText(
    points,
    (p) => p.minUsable,
    (p) => p.usable,
  );
  const tainted = peak(points, (p) => p.maxTainted);
  return `${windowLabel}: usable ${range} of ${points.at(-1)!.published} published; at most ${peak(points, (p) => p.allocated)} allocated, at most ${peak(points, (p) => p.maxUnhealthy)} unhealthy${tainted ? `, at most ${tainted} tainted` : ''}.`;
}

export interface HealthSegment {
  from: number;
  to: number;
  health: DraHealth;
  reason: string | null;
  /** A DRA device's strongest scheduling taint over the span (null: none, or a device plugin). */
  taint: DraHealthTransition['taint'];
}

/**
 * The device's health over [from, to] as segments (before its first transition: unknown, omitted).
 * Device-plugin and DRA transitions alike; a DRA device's taint starts a segment of its own.
 */
export function healthSegments(
  transitions: readonly (HealthTransition | DraHealthTransition)[],
  from: number,
  to: number,
): HealthSegment[] {
  const out: HealthSegment[] = [];
  for (let i = 0; i < transitions.length; i++) {
    const tr = transitions[i]!;
    const taint = 'taint' in tr ? tr.taint : null;
    const start = Math.max(tr.t, from);
    const end = Math.min(transitions[i + 1]?.t ?? to, to);
    if (end <= start) continue;
    const last = out.at(-1);
    if (last && last.health === tr.health && last.taint === taint && last.to === start) {
      last.to = end;
      last.reason = tr.reason ?? last.reason;
    } else out.push({ from: start, to: end, health: tr.health, reason: tr.reason, taint });
  }
  return out;
}
