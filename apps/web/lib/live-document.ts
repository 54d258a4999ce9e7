// The seq guard between a stream and the query cache. A live document is the last snapshot plus
// every patch applied in order; a message is applied only when it is the next one (the stream's one
// sequence check, @plugboard/api's checkSequence), so a lost, duplicated or reordered message can
// never corrupt the cached view — it asks for a resync instead.
import { type JsonPatchOp, applyPatchImmutable, checkSequence, PatchError } from '@plugboard/api';

export interface LiveDocument<T> {
  /** Sequence number of the last applied message; null when the data did not come from a stream. */
  seq: number | null;
  data: T;
  /** When the stream last proved to be alive (message or heartbeat), epoch ms. */
  receivedAt: number;
}

export type LiveMessage<T> =
  | { type: 'snapshot'; seq: number; node: T }
  | { type: 'patch'; seq: number; ops: JsonPatchOp[] }
  | { type: 'heartbeat'; seq: number; at: string }
  | { type: 'error'; status: number; title: string; detail: string };

export type ApplyResult<T> =
  | { kind: 'applied'; doc: LiveDocument<T> }
  /** Already seen (duplicate or older): ignore. */
  | { kind: 'ignored' }
  /** A message is missing or the patch does not fit: reconnect with `since` or take a fresh snapshot. */
  | { kind: 'resync'; reason: string }
  | { kind: 'error'; status: number; title: string; detail: string };

export function applyLiveMessage<T>(
  current: LiveDocument<T> | undefined,
  msg: LiveMessage<T>,
  now: number = Date.now(),
): ApplyResult<T> {
  if (msg.type === 'error')
    return { kind: 'error', status: msg.status, title: msg.title, detail: msg.detail };
  const check = checkSequence(current?.seq ?? null, msg);
  if (check.kind === 'skip') return { kind: 'ignored' };
  if (check.kind === 'gap') return { kind: 'resync', reason: check.reason };
  switch (msg.type) {
    case 'snapshot':
      // A snapshot always wins unless it is older than what we already applied.
      return { kind: 'applied', doc: { seq: msg.seq, data: msg.node, receivedAt: now } };
    case 'patch': {
      try {
        return {
          kind: 'applied',
          doc: { seq: msg.seq, data: applyPatchImmutable(current!.data, msg.ops), receivedAt: now },
        };
      } catch (err) {
        if (err instanceof PatchError)
          return { kind: 'resync', reason: `patch ${msg.seq} does not apply: ${err.message}` };
        throw err;
      }
    }
    case 'heartbeat':
      // In step with us (a heartbeat ahead of us was a gap: a lost patch).
      return { kind: 'applied', doc: { ...current!, receivedAt: now } };
  }
}
