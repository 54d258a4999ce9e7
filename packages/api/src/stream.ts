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

/**
 * Where a stream message stands against the last seq a client applied — the one sequence check of
 * every stream client (the dashboard's live documents, its server's cluster hub, kubectl plugboard
 * watch):
 *
 * - `apply`: a snapshot not older than what the client holds (it replaces the document), the next
 *   patch (seq + 1), or a heartbeat at or behind the client's seq (the document is current);
 * - `skip`: already seen (a duplicate or older patch, an older snapshot), or a heartbeat before any
 *   snapshot: nothing to do;
 * - `gap`: something was missed — a patch before any snapshot, a patch past seq + 1, a heartbeat
 *   ahead of the client: resume with `?since=<seq>` (the server replays or sends a snapshot).
 *
 * A gateway's seq starts at its start time in microseconds, so it only grows, across restarts too.
 */
export type SequenceCheck = { kind: 'apply' } | { kind: 'skip' } | { kind: 'gap'; reason: string };

const APPLY: SequenceCheck = { kind: 'apply' };
const SKIP: SequenceCheck = { kind: 'skip' };

export function checkSequence(
  applied: number | null,
  msg: { type: 'snapshot' | 'patch' | 'heartbeat'; seq: number },
): SequenceCheck {
  switch (msg.type) {
    case 'snapshot':
      return applied !== null && msg.seq < applied ? SKIP : APPLY;
    case 'patch':
      if (applied === null) return { kind: 'gap', reason: 'patch before snapshot' };
      if (msg.seq <= applied) return SKIP;
      if (msg.seq !== applied + 1)
        return { kind: 'gap', reason: `gap: expected seq ${applied + 1}, got ${msg.seq}` };
      return APPLY;
    case 'heartbeat':
      if (applied === null) return SKIP;
      if (msg.seq > applied) return { kind: 'gap', reason: `heartbeat at seq ${msg.seq}, have ${applied}` };
      return APPLY;
  }
}
