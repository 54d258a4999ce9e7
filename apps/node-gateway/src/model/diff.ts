// JSON Patch (RFC 6902) between two snapshots, with structural sharing: the walk returns the new
// document built from the previous one's objects wherever nothing changed, so identical subtrees
// are skipped by reference on the next diff and a one-device change costs O(changed), not O(node).
// (fast-json-patch's `compare` walks and deep-clones every subtree: 8–30 ms per diff at 1,024
// devices and 250 pods, against well under a millisecond here; clients still apply the ops with
// any RFC 6902 library, e.g. fast-json-patch's `applyPatch`, which the tests use.)
// The event ring is diffed by sequence number, because an index-wise array diff would turn
// "drop the oldest, append one" into a replace of every element.
import type { JsonPatchOp, NodeEvent } from '@plugboard/api';

/** Ops that turn `prev` into `next` for a ring of events ordered by strictly increasing seq. */
export function diffEventRing(
  prev: readonly NodeEvent[],
  next: readonly NodeEvent[],
  path = '/events',
): JsonPatchOp[] {
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

/** RFC 6901 escaping of one path segment. */
export const escapePointer = (key: string): string =>
  key.includes('~') || key.includes('/') ? key.replace(/~/g, '~0').replace(/\//g, '~1') : key;

/** Plain assignment, except for a "__proto__" key, which must stay an own data property. */
function set(out: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__')
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  else out[k] = v;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keys of the path being walked; joined into a pointer only when an op is emitted. */
type PathStack = (string | number)[];

const pointer = (stack: PathStack, last?: string | number): string => {
  let out = '';
  for (const k of stack) out += `/${typeof k === 'number' ? k : escapePointer(k)}`;
  if (last !== undefined) out += `/${typeof last === 'number' ? last : escapePointer(last)}`;
  return out;
};

/**
 * Appends to `ops` what turns `a` into `b` and returns the value to keep: `a` itself when equal,
 * else `b` rebuilt from `a`'s unchanged parts. Arrays of equal length are diffed per index; arrays
 * whose length changed are replaced whole (the model's arrays are short, except the event ring).
 * Allocation-free while nothing differs: paths and copies are made only for changes.
 */
function walk(a: unknown, b: unknown, stack: PathStack, ops: JsonPatchOp[]): unknown {
  if (a === b) return a;
  if (isObject(a) && isObject(b)) {
    let out: Record<string, unknown> | null = null;
    let common = 0;
    for (const k in b) {
      const bv = b[k];
      let v: unknown;
      if (!Object.hasOwn(a, k)) {
        ops.push({ op: 'add', path: pointer(stack, k), value: bv });
        v = bv;
      } else {
        common++;
        stack.push(k);
        v = walk(a[k], bv, stack, ops);
        stack.pop();
      }
      if (out === null && v !== a[k]) {
        // First difference: copy the keys already walked (all unchanged, so a's values).
        out = {};
        for (const j in b) {
          if (j === k) break;
          set(out, j, a[j]);
        }
      }
      if (out !== null) set(out, k, v);
    }
    let aKeys = 0;
    for (const k in a) if (k !== undefined) aKeys++;
    if (aKeys > common) {
      for (const k in a) if (!Object.hasOwn(b, k)) ops.push({ op: 'remove', path: pointer(stack, k) });
      if (out === null) {
        out = {};
        for (const j in b) set(out, j, a[j]);
      }
    }
    return out ?? a;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) {
      ops.push({ op: 'replace', path: pointer(stack), value: b });
      return b;
    }
    let out: unknown[] | null = null;
    for (let i = 0; i < b.length; i++) {
      stack.push(i);
      const v = walk(a[i], b[i], stack, ops);
      stack.pop();
      if (out === null && v !== a[i]) out = a.slice(0, i);
      if (out !== null) out.push(v);
    }
    return out ?? a;
  }
  if (typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b)) return a;
  ops.push({ op: 'replace', path: pointer(stack), value: b });
  return b;
}

/**
 * Ops that turn one snapshot-shaped document into another, and `next` rebuilt to share every
 * unchanged object with `prev`. A top-level `events` array is diffed as a ring.
 */
export function diffAndShare<T extends object>(prev: T, next: T): { ops: JsonPatchOp[]; document: T } {
  const ops: JsonPatchOp[] = [];
  const p = prev as Record<string, unknown>;
  const n = next as Record<string, unknown>;
  if (!Array.isArray(p.events) || !Array.isArray(n.events)) {
    return { ops, document: walk(prev, next, [], ops) as T };
  }
  const { events: pe, ...prest } = p;
  const { events: ne, ...nrest } = n;
  const rest = walk(prest, nrest, [], ops) as Record<string, unknown>;
  const eventOps = diffEventRing(pe as NodeEvent[], ne as NodeEvent[]);
  ops.push(...eventOps);
  if (ops.length === 0) return { ops, document: prev };
  return { ops, document: { ...rest, events: eventOps.length ? ne : pe } as T };
}

/** Ops only (see diffAndShare). */
export function diffDocuments<T extends object>(prev: T, next: T): JsonPatchOp[] {
  return diffAndShare(prev, next).ops;
}
