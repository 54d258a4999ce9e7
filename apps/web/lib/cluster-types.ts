// The cluster document the web server aggregates from every gateway's `view=summary` stream and
// serves on GET /api/cluster and WS /api/cluster/stream (snapshot + JSON Patch, like a gateway).
import type { NodeSummary, Timestamp } from '@plugboard/api';

export type GatewayLinkStatus =
  /** First connection attempt in progress. */
  | 'connecting'
  /** Streaming. */
  | 'live'
  /** Was live, lost the stream, retrying; `summary` is the last known (stale) state. */
  | 'reconnecting'
  /** Never reached. */
  | 'unreachable';

export interface ClusterNode {
  name: string;
  status: GatewayLinkStatus;
  /** When `status` last changed. */
  since: Timestamp;
  /** Why the link is not live (connection error, close reason), else null. */
  error: string | null;
  summary: NodeSummary | null;
}

export interface ClusterDocument {
  discovery: { mode: 'static' | 'kubernetes'; source: string; error: string | null };
  /** Keyed by node name. */
  nodes: Record<string, ClusterNode>;
}
