// The WebSocket stream's contract (GET /api/v1/stream on a gateway, /api/nodes/{node}/stream and
// /api/cluster/stream on the dashboard's server): message shapes and the close codes both servers
// use, so clients tell "reconnect later" from "you were too slow" from "no such node".
import type { Timestamp } from './common.ts';
import type { JsonPatchOp } from './json-patch.ts';
import type { NodeSnapshot } from './node.ts';

/** Which document a stream carries: the whole node snapshot, or the counts-only summary. */
export type StreamView = 'full' | 'summary';

/** Messages on GET /api/v1/stream. */
export type StreamMessage<T = NodeSnapshot> =
  | { type: 'snapshot'; seq: number; node: T }
  | { type: 'patch'; seq: number; ops: JsonPatchOp[] }
  | { type: 'heartbeat'; seq: number; at: Timestamp }
  | { type: 'error'; status: number; title: string; detail: string };

/** Standard close codes (RFC 6455). */
export const CLOSE_GOING_AWAY = 1001;
export const CLOSE_POLICY = 1008;
export const CLOSE_TRY_AGAIN_LATER = 1013;
/** The client read too slowly: its queue passed the byte bound. Reconnect and re-sync. */
export const CLOSE_SLOW_CONSUMER = 4008;
/** The dashboard's server: no gateway is known for the node asked for. */
export const CLOSE_UNKNOWN_NODE = 4404;
/** The dashboard's server: the node's gateway cannot be reached. */
export const CLOSE_GATEWAY_UNREACHABLE = 4502;
