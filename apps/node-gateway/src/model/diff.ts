// JSON Patch (RFC 6902) between two snapshots. fast-json-patch's `compare` handles the keyed maps;
// the event ring is diffed by sequence number instead, because an index-wise array compare would turn
// "drop the oldest, append one" into a replace of every element.
import fastJsonPatch from 'fast-json-patch';
import type { JsonPatchOp, NodeEvent } from './types.js';

const { compare } = fastJsonPatch;

/** Ops that turn `prev` into `next` for a ring of events ordered by strictly increasing seq. */
export function diffEventRing(prev: readonly NodeEvent[], next: readonly NodeEvent[], path = '/events'): JsonPatchOp[] {
  if (prev === next) return [];
  const firstNext = next[0]?.seq ?? Number.POSITIVE_INFINITY;
  const lastPrev = prev.at(-1)?.seq ?? Number.NEGATIVE_INFINITY;
  let dropped = 0;
  while (dropped < prev.length && prev[dropped]!.seq < firstNext) dropped++;
  const kept = prev.length - dropped;
  // The kept prefix of `next` must be exactly the tail of `prev`; otherwise fall back to a replace.
  for (let i = 0; i < kept; i++) {
    if (next[i]?.seq !== prev[dropped + i]!.seq) return [{ op: 'replace', path, value: next }];
  }
  const ops: JsonPatchOp[] = [];
  for (let i = 0; i < dropped; i++) ops.push({ op: 'remove', path: `${path}/0` });
  for (let i = kept; i < next.length; i++) {
    if (next[i]!.seq <= lastPrev) return [{ op: 'replace', path, value: next }];
    ops.push({ op: 'add', path: `${path}/-`, value: next[i] });
  }
  return ops;
}

/** Ops that turn one snapshot-shaped document into another; `events` (if present) is diffed as a ring. */
export function diffDocuments<T extends object>(prev: T, next: T): JsonPatchOp[] {
  const p = prev as Record<string, unknown>;
  const n = next as Record<string, unknown>;
  if (!('events' in p) || !('events' in n)) return compare(p, n) as JsonPatchOp[];
  const { events: pe, ...prest } = p;
  const { events: ne, ...nrest } = n;
  return [...(compare(prest, nrest) as JsonPatchOp[]), ...diffEventRing(pe as NodeEvent[], ne as NodeEvent[])];
}
