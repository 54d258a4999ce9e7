// The node's bounded in-memory history: per resource the kubelet-view counts (capacity,
// allocatable, allocated, unhealthy) in downsampling tiers, per device its health transitions; and
// the same for DRA: per driver its counts (published, usable, allocated, free, unhealthy, tainted,
// as snapshot.dra defines them), per DRA device its health and strongest-taint transitions.
//
// Every tier is fed the same samples and keeps a fixed ring of retention / resolution buckets, so
// memory is bounded by configuration alone (docs/GATEWAY.md "History"). A bucket holds the state at
// its end plus the minimum allocatable and maximum unhealthy seen in it: these compose exactly, so a
// coarse bucket equals the merge of the fine buckets it spans, and a short fault stays visible after
// downsampling (for DRA: the fewest usable and the most unhealthy and tainted devices). Samples
// arrive with every model change (exact extremes, no polling); `tick()` closes buckets whose time is
// up and carries the last state forward, so every series has one point per bucket even when nothing
// changes.
import type {
  DraDeviceCounts,
  DraDeviceState,
  DraDriverPoint,
  DraHealthTransition,
  DraTaintView,
  Health,
  JsonPatchOp,
  NodeSnapshot,
  ResourceCounts,
  HealthTransition,
  HistoryMessage,
  HistoryTier,
  NodeHistory,
  ResourcePoint,
} from '@plugboard/api';

export interface HistoryOptions {
  nodeName: string;
  /** Finest first; each resolution a multiple of the previous one. */
  tiers: readonly HistoryTier[];
  /** Transitions kept per device (oldest dropped first). */
  maxTransitionsPerDevice: number;
  now?: () => number;
}

type Counts = Pick<ResourceCounts, 'capacity' | 'allocatable' | 'allocated' | 'unhealthy'>;

/**
 * Bounded ring: push is O(1), the oldest entry is overwritten when full. Storage grows with use
 * (a device that never changes holds one entry, not `capacity` empty slots).
 */
class Ring<T> {
  private readonly items: T[] = [];
  private start = 0;
  length = 0;
  constructor(readonly capacity: number) {}
  push(item: T): void {
    if (this.length < this.capacity) {
      // Not full yet: start is 0 and the array is exactly `length` long.
      this.items.push(item);
      this.length++;
    } else {
      this.items[this.start] = item;
      this.start = (this.start + 1) % this.capacity;
    }
  }
  at(i: number): T {
    return this.items[(this.start + i) % this.capacity]!;
  }
  /** Entries with `key(e) >= min`, oldest first (binary search: entries are ordered by key). */
  since(min: number, key: (e: T) => number): T[] {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (key(this.at(mid)) < min) lo = mid + 1;
      else hi = mid;
    }
    const out: T[] = [];
    for (let i = lo; i < this.length; i++) out.push(this.at(i));
    return out;
  }
}

/** A closed bucket: its start and width. */
interface Bucketed {
  t: number;
  step: number;
}

/**
 * How one kind of series turns samples into points: the extremes a bucket starts with, how a
 * sample within it folds into them, and the closed point (the state at its end plus the extremes).
 */
interface PointKind<C, X, P extends Bucketed> {
  extremes(c: C): X;
  fold(x: X, c: C): void;
  point(t: number, step: number, c: C, x: X): P;
}

interface ResourceExtremes {
  minAllocatable: number;
  maxUnhealthy: number;
}

const RESOURCE_POINTS: PointKind<Counts, ResourceExtremes, ResourcePoint> = {
  extremes: (c) => ({ minAllocatable: c.allocatable, maxUnhealthy: c.unhealthy }),
  fold(x, c) {
    x.minAllocatable = Math.min(x.minAllocatable, c.allocatable);
    x.maxUnhealthy = Math.max(x.maxUnhealthy, c.unhealthy);
  },
  // Field by field: the caller's counts object may carry more (the snapshot's free, healthy).
  point: (t, step, c, x) => ({
    t,
    step,
    capacity: c.capacity,
    allocatable: c.allocatable,
    allocated: c.allocated,
    unhealthy: c.unhealthy,
    minAllocatable: x.minAllocatable,
    maxUnhealthy: x.maxUnhealthy,
  }),
};

interface DraExtremes {
  minUsable: number;
  maxUnhealthy: number;
  maxTainted: number;
}

const DRA_DRIVER_POINTS: PointKind<DraDeviceCounts, DraExtremes, DraDriverPoint> = {
  extremes: (c) => ({ minUsable: c.usable, maxUnhealthy: c.unhealthy, maxTainted: c.tainted }),
  fold(x, c) {
    x.minUsable = Math.min(x.minUsable, c.usable);
    x.maxUnhealthy = Math.max(x.maxUnhealthy, c.unhealthy);
    x.maxTainted = Math.max(x.maxTainted, c.tainted);
  },
  point: (t, step, c, x) => ({
    t,
    step,
    published: c.published,
    usable: c.usable,
    allocated: c.allocated,
    free: c.free,
    unhealthy: c.unhealthy,
    tainted: c.tainted,
    minUsable: x.minUsable,
    maxUnhealthy: x.maxUnhealthy,
    maxTainted: x.maxTainted,
  }),
};

interface OpenBucket<C, X> {
  t: number;
  /** The last sample: the state at the bucket's end so far. */
  state: C;
  extremes: X;
}

class TierSeries<C, X, P extends Bucketed> {
  readonly points: Ring<P>;
  open: OpenBucket<C, X> | null = null;
  constructor(
    readonly tier: HistoryTier,
    private readonly kind: PointKind<C, X, P>,
  ) {
    this.points = new Ring(Math.max(1, Math.floor(tier.retentionMs / tier.resolutionMs)));
  }

  private bucket(t: number, state: C): OpenBucket<C, X> {
    return { t, state, extremes: this.kind.extremes(state) };
  }

  /** Closes every bucket that ended by `t`; returns the closed points. */
  roll(t: number, live: boolean): P[] {
    const step = this.tier.resolutionMs;
    const closed: P[] = [];
    let open = this.open;
    // After a long stall, buckets older than the ring's reach would be overwritten anyway.
    let budget = this.points.capacity + 1;
    while (open && open.t + step <= t && budget-- > 0) {
      const point = this.kind.point(open.t, step, open.state, open.extremes);
      this.points.push(point);
      closed.push(point);
      // A removed series stops here; a live one carries its state into the next bucket.
      open = live ? this.bucket(open.t + step, open.state) : null;
    }
    if (open && open.t + step <= t) open = this.bucket(Math.floor(t / step) * step, open.state);
    this.open = open;
    return closed;
  }

  sample(t: number, counts: C): void {
    const step = this.tier.resolutionMs;
    const start = Math.floor(t / step) * step;
    if (!this.open || this.open.t !== start) {
      this.open = this.bucket(start, counts);
      return;
    }
    this.open.state = counts;
    this.kind.fold(this.open.extremes, counts);
  }
}

/**
 * Every series of one kind (resources, or DRA drivers), each in every tier. Closed buckets of the
 * finest tier wait in `pending` for the next stream message.
 */
class SeriesTable<C, X, P extends Bucketed> {
  private readonly series = new Map<string, { tiers: TierSeries<C, X, P>[]; live: boolean }>();
  pending: [string, P][] = [];

  constructor(
    private readonly tiers: readonly HistoryTier[],
    private readonly kind: PointKind<C, X, P>,
  ) {}

  record(name: string, counts: C, t: number): void {
    let s = this.series.get(name);
    if (!s) {
      s = { tiers: this.tiers.map((tier) => new TierSeries(tier, this.kind)), live: true };
      this.series.set(name, s);
    }
    s.live = true;
    for (const tier of s.tiers) {
      this.collect(name, tier, tier.roll(t, true));
      tier.sample(t, counts);
    }
  }

  /** The series is gone: its open buckets close and nothing is carried forward. */
  remove(name: string): void {
    const s = this.series.get(name);
    if (s) s.live = false;
  }

  has(name: string): boolean {
    return this.series.has(name);
  }

  names(): IterableIterator<string> {
    return this.series.keys();
  }

  roll(t: number): void {
    for (const [name, s] of this.series) {
      for (const tier of s.tiers) this.collect(name, tier, tier.roll(t, s.live));
    }
  }

  /** Drops series that went away and whose newest point is older than `horizon`. */
  forget(horizon: number): void {
    for (const [name, s] of this.series) {
      if (s.live || s.tiers.some((tier) => tier.open)) continue;
      const newest = Math.max(
        ...s.tiers.map((tier) => (tier.points.length ? tier.points.at(tier.points.length - 1).t : -Infinity)),
      );
      if (newest < horizon) this.series.delete(name);
    }
  }

  query(since: number, only: string | undefined): Record<string, P[]> {
    const out: Record<string, P[]> = {};
    for (const [name, s] of this.series) {
      if (only !== undefined && name !== only) continue;
      out[name] = mergeTiers(s.tiers, since);
    }
    return out;
  }

  drain(): [string, P][] {
    const out = this.pending;
    this.pending = [];
    return out;
  }

  private collect(name: string, tier: TierSeries<C, X, P>, closed: P[]): void {
    // Only the finest tier streams: coarser tiers are the same data, downsampled.
    if (tier.tier !== this.tiers[0]) return;
    for (const p of closed) this.pending.push([name, p]);
  }
}

/**
 * Transitions of every device of one kind, at most `max` per device. A sample that `same` finds
 * equal to the device's last transition is not one.
 */
class TransitionTable<T extends { t: number }> {
  private readonly entries = new Map<
    string,
    {
      ring: Ring<T>;
      last: T;
      /** When the device stopped being listed (null while it is); forgotten a retention later. */
      removedAt: number | null;
    }
  >();
  pending: [string, T][] = [];

  constructor(
    private readonly max: number,
    private readonly same: (a: T, b: T) => boolean,
  ) {}

  record(key: string, transition: T): void {
    const d = this.entries.get(key);
    if (d) d.removedAt = null;
    if (d && this.same(d.last, transition)) return;
    if (d) {
      d.last = transition;
      d.ring.push(transition);
    } else {
      const ring = new Ring<T>(this.max);
      ring.push(transition);
      this.entries.set(key, { ring, last: transition, removedAt: null });
    }
    this.pending.push([key, transition]);
  }

  /** The device is no longer listed: its history stays until it ages out. */
  remove(key: string, t: number): void {
    const d = this.entries.get(key);
    if (d) d.removedAt ??= t;
  }

  keys(): IterableIterator<string> {
    return this.entries.keys();
  }

  forget(horizon: number): void {
    for (const [key, d] of this.entries) {
      if (d.removedAt !== null && d.removedAt < horizon) this.entries.delete(key);
    }
  }

  query(since: number, prefix: string | null): Record<string, T[]> {
    const out: Record<string, T[]> = {};
    for (const [key, d] of this.entries) {
      if (prefix && !key.startsWith(prefix)) continue;
      const ring = d.ring;
      const recent = ring.since(since, (e) => e.t);
      // The state in force at `since` leads, so a strip can be drawn from its left edge.
      const before = ring.length - recent.length - 1;
      out[key] = before >= 0 ? [ring.at(before), ...recent] : recent;
    }
    return out;
  }

  drain(): [string, T][] {
    const out = this.pending;
    this.pending = [];
    return out;
  }
}

/** The strongest scheduling taint of a DRA device (None-effect taints do not count). */
export function strongestTaint(taints: readonly DraTaintView[]): DraHealthTransition['taint'] {
  let out: DraHealthTransition['taint'] = null;
  for (const t of taints) {
    if (t.effect === 'NoExecute') return 'NoExecute';
    if (t.effect === 'NoSchedule') out = 'NoSchedule';
  }
  return out;
}

/** Validates tiers: finest first, resolutions multiples of each other, retention growing. */
export function checkTiers(tiers: readonly HistoryTier[]): string | null {
  if (tiers.length === 0) return 'at least one tier is needed';
  for (let i = 0; i < tiers.length; i++) {
    const t = tiers[i]!;
    if (t.retentionMs < t.resolutionMs) return `tiers[${i}]: retentionMs must be at least resolutionMs`;
    const prev = tiers[i - 1];
    if (!prev) continue;
    if (t.resolutionMs <= prev.resolutionMs || t.resolutionMs % prev.resolutionMs !== 0)
      return `tiers[${i}]: resolutionMs must be a larger multiple of tiers[${i - 1}].resolutionMs`;
    if (t.retentionMs <= prev.retentionMs)
      return `tiers[${i}]: retentionMs must be longer than tiers[${i - 1}].retentionMs`;
  }
  return null;
}

/** Upper bound of points held per resource (for the memory estimate in the docs and tests). */
export function pointsPerResource(tiers: readonly HistoryTier[]): number {
  return tiers.reduce((n, t) => n + Math.max(1, Math.floor(t.retentionMs / t.resolutionMs)), 0);
}

export interface HistoryQuery {
  /** A resource or a DRA driver (default: all). */
  resource?: string;
  /** Epoch ms; default: everything held. */
  since?: number;
}

type HistoryDelta = Omit<HistoryMessage, 'seq' | 'type'> &
  Required<Pick<HistoryMessage, 'draPoints' | 'draTransitions'>>;

export class NodeHistoryStore {
  private readonly now: () => number;
  private readonly resources: SeriesTable<Counts, ResourceExtremes, ResourcePoint>;
  private readonly devices: TransitionTable<HealthTransition>;
  private readonly draDrivers: SeriesTable<DraDeviceCounts, DraExtremes, DraDriverPoint>;
  private readonly draDevices: TransitionTable<DraHealthTransition>;

  constructor(private readonly options: HistoryOptions) {
    const problem = checkTiers(options.tiers);
    if (problem) throw new RangeError(`history tiers: ${problem}`);
    this.now = options.now ?? Date.now;
    const max = options.maxTransitionsPerDevice;
    this.resources = new SeriesTable(options.tiers, RESOURCE_POINTS);
    this.draDrivers = new SeriesTable(options.tiers, DRA_DRIVER_POINTS);
    this.devices = new TransitionTable(max, (a, b) => a.health === b.health);
    this.draDevices = new TransitionTable(max, (a, b) => a.health === b.health && a.taint === b.taint);
  }

  /** The store's clock (epoch ms), for relative queries such as `since=15m`. */
  clock(): number {
    return this.now();
  }

  get tiers(): readonly HistoryTier[] {
    return this.options.tiers;
  }

  /** Records a resource's current counts (call on every change; unchanged values cost little). */
  recordResource(name: string, counts: Counts, t = this.now()): void {
    this.resources.record(name, counts, t);
  }

  /** The resource is gone: its open buckets close and nothing is carried forward. */
  removeResource(name: string): void {
    this.resources.remove(name);
  }

  /** Records a device's health; only changes are kept. */
  recordHealth(key: string, health: Health, reason: string | null, t = this.now()): void {
    this.devices.record(key, { t, health, reason });
  }

  /** The device is no longer advertised: its history stays until it ages out. */
  removeDevice(key: string, t = this.now()): void {
    this.devices.remove(key, t);
  }

  /** Records a DRA driver's counts (`dra.drivers[name].counts`). */
  recordDraDriver(name: string, counts: DraDeviceCounts, t = this.now()): void {
    this.draDrivers.record(name, counts, t);
  }

  /** The driver has no slices and no in-process instance any more. */
  removeDraDriver(name: string): void {
    this.draDrivers.remove(name);
  }

  /** Records a DRA device's health and strongest taint; only changes of either are kept. */
  recordDraDevice(
    key: string,
    d: Pick<DraDeviceState, 'health' | 'reason' | 'taints'>,
    t = this.now(),
  ): void {
    this.draDevices.record(key, { t, health: d.health, reason: d.reason, taint: strongestTaint(d.taints) });
  }

  /** The DRA device left this node's slices: its history stays until it ages out. */
  removeDraDevice(key: string, t = this.now()): void {
    this.draDevices.remove(key, t);
  }

  /**
   * Follows a model change: samples resources and DRA drivers whose counts may have changed and
   * records device health (and DRA taint) changes. Looks only at what the patch touched, so a quiet
   * node costs nothing.
   */
  observe(snapshot: NodeSnapshot, ops: readonly JsonPatchOp[], t = this.now()): void {
    const touched = {
      resources: new Set<string>(),
      devices: new Set<string>(),
      draDrivers: new Set<string>(),
      draDevices: new Set<string>(),
    };
    let all = false;
    let allDra = false;
    for (const op of ops) {
      const [, top, second, third] = op.path.split('/', 4);
      if (top === '' || top === undefined) all = true;
      else if (top === 'resources' || top === 'devices') {
        if (second === undefined) all = true;
        else touched[top].add(unescape(second));
      } else if (top === 'dra') {
        if (second === undefined) allDra = true;
        else if (second !== 'drivers' && second !== 'devices') continue;
        else if (third === undefined) allDra = true;
        else touched[second === 'drivers' ? 'draDrivers' : 'draDevices'].add(unescape(third));
      }
    }
    if (all) {
      this.observeAll(snapshot, t);
      return;
    }
    if (allDra) this.observeDra(snapshot, t);
    for (const name of touched.resources) {
      const r = snapshot.resources[name];
      if (r) this.recordResource(name, r.kubelet, t);
      else this.removeResource(name);
    }
    for (const key of touched.devices) {
      const d = snapshot.devices[key];
      if (d) this.recordHealth(key, d.health, d.reason, t);
      else this.removeDevice(key, t);
    }
    if (allDra) return;
    for (const name of touched.draDrivers) {
      const d = snapshot.dra?.drivers[name];
      if (d) this.recordDraDriver(name, d.counts, t);
      else this.removeDraDriver(name);
    }
    for (const key of touched.draDevices) {
      const d = snapshot.dra?.devices[key];
      if (d) this.recordDraDevice(key, d, t);
      else this.removeDraDevice(key, t);
    }
  }

  /** Records every resource and device of a snapshot (the first one, or after a root replace). */
  observeAll(snapshot: NodeSnapshot, t = this.now()): void {
    for (const [name, r] of Object.entries(snapshot.resources)) this.recordResource(name, r.kubelet, t);
    for (const name of this.resources.names()) if (!snapshot.resources[name]) this.removeResource(name);
    for (const [key, d] of Object.entries(snapshot.devices)) this.recordHealth(key, d.health, d.reason, t);
    for (const key of this.devices.keys()) if (!snapshot.devices[key]) this.removeDevice(key, t);
    this.observeDra(snapshot, t);
  }

  /** Records every DRA driver and device of a snapshot. */
  private observeDra(snapshot: NodeSnapshot, t: number): void {
    const drivers = snapshot.dra?.drivers ?? {};
    const devices = snapshot.dra?.devices ?? {};
    for (const [name, d] of Object.entries(drivers)) this.recordDraDriver(name, d.counts, t);
    for (const name of this.draDrivers.names()) if (!drivers[name]) this.removeDraDriver(name);
    for (const [key, d] of Object.entries(devices)) this.recordDraDevice(key, d, t);
    for (const key of this.draDevices.keys()) if (!devices[key]) this.removeDraDevice(key, t);
  }

  /**
   * Closes buckets whose time is up. Returns what the stream should send — the finest tier's new
   * points and the transitions since the last call — or null when there is nothing.
   */
  tick(t = this.now()): HistoryDelta | null {
    this.resources.roll(t);
    this.draDrivers.roll(t);
    this.forgetAgedOut(t);
    const out: HistoryDelta = {
      points: this.resources.drain().map(([resource, p]) => ({ resource, ...p })),
      transitions: this.devices.drain().map(([device, tr]) => ({ device, ...tr })),
      draPoints: this.draDrivers.drain().map(([driver, p]) => ({ driver, ...p })),
      draTransitions: this.draDevices.drain().map(([device, tr]) => ({ device, ...tr })),
    };
    const empty =
      out.points.length + out.transitions.length + out.draPoints.length + out.draTransitions.length === 0;
    return empty ? null : out;
  }

  query(q: HistoryQuery = {}): NodeHistory {
    const now = this.now();
    const longest = this.options.tiers.at(-1)!.retentionMs;
    const since = Math.max(q.since ?? 0, now - longest);
    // A device's key starts with its resource or DRA driver name and a slash.
    const prefix = q.resource === undefined ? null : `${q.resource}/`;
    return {
      schema: 1,
      nodeName: this.options.nodeName,
      now,
      since,
      tiers: [...this.options.tiers],
      resources: this.resources.query(since, q.resource),
      devices: this.devices.query(since, prefix),
      draDrivers: this.draDrivers.query(since, q.resource),
      draDevices: this.draDevices.query(since, prefix),
    };
  }

  /** Drops series and devices that went away longer than the longest retention ago. */
  private forgetAgedOut(t: number): void {
    const horizon = t - this.options.tiers.at(-1)!.retentionMs;
    this.resources.forget(horizon);
    this.draDrivers.forget(horizon);
    this.devices.forget(horizon);
    this.draDevices.forget(horizon);
  }

  /** Whether the store holds (or held) this resource. */
  hasResource(name: string): boolean {
    return this.resources.has(name);
  }

  /** Whether the store holds (or held) this DRA driver. */
  hasDraDriver(name: string): boolean {
    return this.draDrivers.has(name);
  }
}

/** Coarse tiers for the past the finer ones no longer reach, then the finer ones. */
function mergeTiers<P extends Bucketed>(
  tiers: readonly TierSeries<unknown, unknown, P>[],
  since: number,
): P[] {
  const parts: P[][] = [];
  let end = Infinity;
  for (const tier of tiers) {
    const pts = tier.points.since(since, (p) => p.t).filter((p) => p.t + p.step <= end);
    if (pts.length) parts.unshift(pts);
    if (tier.points.length) end = Math.min(end, tier.points.at(0).t);
  }
  return parts.flat();
}

/** RFC 6901 unescaping of one JSON Pointer segment. */
function unescape(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}
