// The node's bounded in-memory history: per resource the kubelet-view counts (capacity,
// allocatable, allocated, unhealthy) in downsampling tiers, per device its health transitions.
//
// Every tier is fed the same samples and keeps a fixed ring of retention / resolution buckets, so
// memory is bounded by configuration alone (docs/GATEWAY.md "History"). A bucket holds the state at
// its end plus the minimum allocatable and maximum unhealthy seen in it: these compose exactly, so a
// coarse bucket equals the merge of the fine buckets it spans, and a short fault stays visible after
// downsampling. Samples arrive with every model change (exact extremes, no polling); `tick()` closes
// buckets whose time is up and carries the last state forward, so every resource has one point per
// bucket even when nothing changes.
import type {
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

interface OpenBucket extends Counts {
  t: number;
  minAllocatable: number;
  maxUnhealthy: number;
}

class TierSeries {
  readonly points: Ring<ResourcePoint>;
  open: OpenBucket | null = null;
  constructor(readonly tier: HistoryTier) {
    this.points = new Ring(Math.max(1, Math.floor(tier.retentionMs / tier.resolutionMs)));
  }

  /** Closes every bucket that ended by `t`; returns the closed points. */
  roll(t: number, live: boolean): ResourcePoint[] {
    const step = this.tier.resolutionMs;
    const closed: ResourcePoint[] = [];
    let open = this.open;
    // After a long stall, buckets older than the ring's reach would be overwritten anyway.
    let budget = this.points.capacity + 1;
    while (open && open.t + step <= t && budget-- > 0) {
      const point: ResourcePoint = {
        t: open.t,
        step,
        capacity: open.capacity,
        allocatable: open.allocatable,
        allocated: open.allocated,
        unhealthy: open.unhealthy,
        minAllocatable: open.minAllocatable,
        maxUnhealthy: open.maxUnhealthy,
      };
      this.points.push(point);
      closed.push(point);
      // A removed resource stops here; a live one carries its state into the next bucket.
      open = live ? bucket(open.t + step, open) : null;
    }
    if (open && open.t + step <= t) open = bucket(Math.floor(t / step) * step, open);
    this.open = open;
    return closed;
  }

  sample(t: number, counts: Counts): void {
    const step = this.tier.resolutionMs;
    const start = Math.floor(t / step) * step;
    if (!this.open || this.open.t !== start) {
      this.open = bucket(start, counts);
      return;
    }
    const o = this.open;
    o.capacity = counts.capacity;
    o.allocatable = counts.allocatable;
    o.allocated = counts.allocated;
    o.unhealthy = counts.unhealthy;
    o.minAllocatable = Math.min(o.minAllocatable, counts.allocatable);
    o.maxUnhealthy = Math.max(o.maxUnhealthy, counts.unhealthy);
  }
}

function bucket(t: number, c: Counts): OpenBucket {
  return {
    t,
    capacity: c.capacity,
    allocatable: c.allocatable,
    allocated: c.allocated,
    unhealthy: c.unhealthy,
    minAllocatable: c.allocatable,
    maxUnhealthy: c.unhealthy,
  };
}

interface ResourceSeries {
  tiers: TierSeries[];
  live: boolean;
  last: Counts;
}

interface DeviceSeries {
  transitions: Ring<HealthTransition>;
  health: Health;
  /** When the device stopped being advertised (null while it is); forgotten a retention later. */
  removedAt: number | null;
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
  resource?: string;
  /** Epoch ms; default: everything held. */
  since?: number;
}

export class NodeHistoryStore {
  private readonly now: () => number;
  private readonly resources = new Map<string, ResourceSeries>();
  private readonly devices = new Map<string, DeviceSeries>();
  private pendingPoints: HistoryMessage['points'] = [];
  private pendingTransitions: HistoryMessage['transitions'] = [];

  constructor(private readonly options: HistoryOptions) {
    const problem = checkTiers(options.tiers);
    if (problem) throw new RangeError(`history tiers: ${problem}`);
    this.now = options.now ?? Date.now;
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
    let s = this.resources.get(name);
    if (!s) {
      s = { tiers: this.options.tiers.map((tier) => new TierSeries(tier)), live: true, last: counts };
      this.resources.set(name, s);
    }
    s.live = true;
    s.last = counts;
    for (const tier of s.tiers) {
      this.collect(name, tier, tier.roll(t, true));
      tier.sample(t, counts);
    }
  }

  /** The resource is gone: its open buckets close and nothing is carried forward. */
  removeResource(name: string): void {
    const s = this.resources.get(name);
    if (s) s.live = false;
  }

  /** Records a device's health; only changes are kept. */
  recordHealth(key: string, health: Health, reason: string | null, t = this.now()): void {
    const d = this.devices.get(key);
    if (d) d.removedAt = null;
    if (d && d.health === health) return;
    const transition: HealthTransition = { t, health, reason };
    if (d) {
      d.health = health;
      d.transitions.push(transition);
    } else {
      const ring = new Ring<HealthTransition>(this.options.maxTransitionsPerDevice);
      ring.push(transition);
      this.devices.set(key, { transitions: ring, health, removedAt: null });
    }
    this.pendingTransitions.push({ device: key, ...transition });
  }

  /**
   * Follows a model change: samples resources whose counts may have changed and records device
   * health changes. Looks only at what the patch touched, so a quiet node costs nothing.
   */
  observe(snapshot: NodeSnapshot, ops: readonly JsonPatchOp[], t = this.now()): void {
    const resources = new Set<string>();
    const devices = new Set<string>();
    let all = false;
    for (const op of ops) {
      const [, top, key] = op.path.split('/', 3);
      if (top === '' || top === undefined) all = true;
      else if (top !== 'resources' && top !== 'devices') continue;
      else if (key === undefined) all = true;
      else (top === 'resources' ? resources : devices).add(unescape(key));
    }
    if (all) this.observeAll(snapshot, t);
    for (const name of resources) {
      const r = snapshot.resources[name];
      if (r) this.recordResource(name, r.kubelet, t);
      else this.removeResource(name);
    }
    for (const key of devices) {
      const d = snapshot.devices[key];
      if (d) this.recordHealth(key, d.health, d.reason, t);
      else this.removeDevice(key, t);
    }
  }

  /** Records every resource and device of a snapshot (the first one, or after a root replace). */
  observeAll(snapshot: NodeSnapshot, t = this.now()): void {
    for (const [name, r] of Object.entries(snapshot.resources)) this.recordResource(name, r.kubelet, t);
    for (const name of this.resources.keys()) if (!snapshot.resources[name]) this.removeResource(name);
    for (const [key, d] of Object.entries(snapshot.devices)) this.recordHealth(key, d.health, d.reason, t);
    for (const key of this.devices.keys()) if (!snapshot.devices[key]) this.removeDevice(key, t);
  }

  /** The device is no longer advertised: its history stays until it ages out. */
  removeDevice(key: string, t = this.now()): void {
    const d = this.devices.get(key);
    if (d) d.removedAt ??= t;
  }

  /**
   * Closes buckets whose time is up. Returns what the stream should send — the finest tier's new
   * points and the transitions since the last call — or null when there is nothing.
   */
  tick(t = this.now()): Omit<HistoryMessage, 'seq' | 'type'> | null {
    for (const [name, s] of this.resources) {
      for (const tier of s.tiers) this.collect(name, tier, tier.roll(t, s.live));
    }
    this.forgetAgedOut(t);
    if (this.pendingPoints.length === 0 && this.pendingTransitions.length === 0) return null;
    const out = { points: this.pendingPoints, transitions: this.pendingTransitions };
    this.pendingPoints = [];
    this.pendingTransitions = [];
    return out;
  }

  query(q: HistoryQuery = {}): NodeHistory {
    const now = this.now();
    const longest = this.options.tiers.at(-1)!.retentionMs;
    const since = Math.max(q.since ?? 0, now - longest);
    const resources: NodeHistory['resources'] = {};
    for (const [name, s] of this.resources) {
      if (q.resource !== undefined && name !== q.resource) continue;
      resources[name] = mergeTiers(s.tiers, since);
    }
    const devices: NodeHistory['devices'] = {};
    const prefix = q.resource === undefined ? null : `${q.resource}/`;
    for (const [key, d] of this.devices) {
      if (prefix && !key.startsWith(prefix)) continue;
      const ring = d.transitions;
      const recent = ring.since(since, (e) => e.t);
      // The state in force at `since` leads, so a strip can be drawn from its left edge.
      const before = ring.length - recent.length - 1;
      devices[key] = before >= 0 ? [ring.at(before), ...recent] : recent;
    }
    return {
      schema: 1,
      nodeName: this.options.nodeName,
      now,
      since,
      tiers: [...this.options.tiers],
      resources,
      devices,
    };
  }

  /** Drops resources and devices that went away longer than the longest retention ago. */
  private forgetAgedOut(t: number): void {
    const horizon = t - this.options.tiers.at(-1)!.retentionMs;
    for (const [name, s] of this.resources) {
      if (s.live || s.tiers.some((tier) => tier.open)) continue;
      const newest = Math.max(
        ...s.tiers.map((tier) => (tier.points.length ? tier.points.at(tier.points.length - 1).t : -Infinity)),
      );
      if (newest < horizon) this.resources.delete(name);
    }
    for (const [key, d] of this.devices) {
      if (d.removedAt !== null && d.removedAt < horizon) this.devices.delete(key);
    }
  }

  /** Whether the store holds (or held) this resource. */
  hasResource(name: string): boolean {
    return this.resources.has(name);
  }

  private collect(name: string, tier: TierSeries, closed: ResourcePoint[]): void {
    // Only the finest tier streams: coarser tiers are the same data, downsampled.
    if (tier.tier !== this.options.tiers[0]) return;
    for (const p of closed) this.pendingPoints.push({ resource: name, ...p });
  }
}

/** Coarse tiers for the past the finer ones no longer reach, then the finer ones. */
function mergeTiers(tiers: readonly TierSeries[], since: number): ResourcePoint[] {
  const parts: ResourcePoint[][] = [];
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
