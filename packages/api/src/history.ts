// Types of the gateway's bounded in-memory history (GET /api/v1/history and the stream's opt-in
// `history` messages). Pure types, no runtime code. Documented in docs/API.md ("History").
import type { Health } from './common.ts';

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
}
