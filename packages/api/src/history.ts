// Types of the gateway's bounded in-memory history (GET /api/v1/history and the stream's opt-in
// `history` messages). Pure types, no runtime code. Documented in docs/API.md ("History").
//
// Device plugins and DRA drivers have their own point types: a DRA driver has no capacity or
// allocatable (dra.ts), so its points carry the counts the snapshot's `dra.drivers[*].counts` define,
// with the same "extremes within the bucket" fields that keep a short dip visible after downsampling.
// The DRA fields are optional so that clients of older gateways keep working.
import type { Health } from './common.ts';
import type { DraDeviceCounts, DraHealth } from './dra.ts';

/** One downsampling tier: buckets of `resolutionMs`, kept for `retentionMs`. */
export interface HistoryTier {
  resolutionMs: number;
  retentionMs: number;
}

/**
 * One closed bucket of a resource's kubelet-view counts. `t` is the bucket start (epoch ms, aligned
 * to a multiple of `step`); the counts are the state at the end of the bucket, and `minAllocatable` /
 * `maxUnhealthy` keep a dip that lasted less than one bucket visible after downsampling.
 */
export interface ResourcePoint {
  t: number;
  /** Bucket width in ms (the tier's resolution). */
  step: number;
  capacity: number;
  allocatable: number;
  allocated: number;
  unhealthy: number;
  minAllocatable: number;
  maxUnhealthy: number;
}

/** A device health transition (the first one of a device is when the gateway first saw it). */
export interface HealthTransition {
  /** Epoch ms. */
  t: number;
  health: Health;
  reason: string | null;
}

/**
 * One closed bucket of a DRA driver's counts (`dra.drivers[driver].counts`, DraDeviceCounts): the
 * state at the end of the bucket, plus the fewest usable and the most unhealthy and tainted devices
 * seen within it, so that a fault shorter than a bucket stays visible after downsampling.
 */
export interface DraDriverPoint extends DraDeviceCounts {
  t: number;
  /** Bucket width in ms (the tier's resolution). */
  step: number;
  minUsable: number;
  maxUnhealthy: number;
  maxTainted: number;
}

/**
 * A DRA device's transition: its health in the driver's view (`dra.devices[key].health`) or its
 * strongest scheduling taint changed. The first one of a device is when the gateway first saw it.
 */
export interface DraHealthTransition {
  /** Epoch ms. */
  t: number;
  health: DraHealth;
  /** The device's `reason` at that moment (the driver's reason for its health). */
  reason: string | null;
  /**
   * The strongest NoSchedule/NoExecute taint on the device from then on (slice or DeviceTaintRule),
   * null when it has none. A taint with effect None does not count, as in the driver's counts.
   */
  taint: 'NoSchedule' | 'NoExecute' | null;
}

/** GET /api/v1/history */
export interface NodeHistory {
  schema: 1;
  nodeName: string;
  /** When the answer was made (epoch ms). */
  now: number;
  /** The effective lower bound (epoch ms): points with `t >= since`. */
  since: number;
  tiers: HistoryTier[];
  /** Closed buckets per resource, oldest first, coarse tiers first then finer ones. */
  resources: Record<string, ResourcePoint[]>;
  /**
   * Health transitions per device key (`${resource}/${id}`), oldest first. The first entry may be
   * older than `since`: it is the state in force at `since`.
   */
  devices: Record<string, HealthTransition[]>;
  /** Closed buckets per DRA driver, ordered as `resources` (absent from gateways without DRA history). */
  draDrivers?: Record<string, DraDriverPoint[]>;
  /**
   * Transitions per DRA device key (`${driver}/${pool}/${device}`), ordered as `devices`; absent
   * from gateways without DRA history.
   */
  draDevices?: Record<string, DraHealthTransition[]>;
}

/**
 * Stream message for clients that opened the stream with `?history=true`: the finest tier's
 * buckets closed since the previous message and the device transitions seen meanwhile. It is not
 * part of the patch sequence: `seq` is the channel's current seq (like a heartbeat). A client that
 * reconnects fills the gap with GET /api/v1/history?since=<last t + 1>.
 */
export interface HistoryMessage {
  type: 'history';
  seq: number;
  points: (ResourcePoint & { resource: string })[];
  transitions: (HealthTransition & { device: string })[];
  /** The finest tier's DRA driver buckets closed since the previous message. */
  draPoints?: (DraDriverPoint & { driver: string })[];
  /** DRA device transitions seen meanwhile (not sent to `view=summary`). */
  draTransitions?: (DraHealthTransition & { device: string })[];
}
