// An observed outcome made comparable across the two kinds of node: what differs by construction
// (names with random suffixes, UIDs, timestamps, the node's and namespace's names, the work
// directory, how many other nodes the real cluster has) is replaced by a placeholder; lists are
// sorted; then the whole is flattened to leaf fields (`path → value`), which compare.ts diffs.

export interface NormaliseContext {
  node: string;
  namespace: string;
  work: string;
  /** Names the API server generated (`<prefix>-<5 random>`, e.g. a pod's claim): the suffix goes. */
  generated?: readonly string[];
}

export type Leaf = string | number | boolean | null;

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)/g;
// The scheduler's verdict counts every node of the cluster; the real cluster has others (other
// suites' nodes, and nodes this scenario did not select): only the verdicts on this node compare.
const NODE_COUNT = /\b0\/\d+ nodes are available/g;
const OTHER_NODES = /,? ?\d+ node\(s\) didn't match Pod's node affinity\/selector,?/g;
const PREEMPTION_COUNT =
  /preemption: 0\/\d+ nodes are available: \d+ Preemption is not helpful for scheduling\./g;

function replaceAll(s: string, find: string, by: string): string {
  return find === '' ? s : s.split(find).join(by);
}

/** A string with the run's own names and random parts replaced. */
export function normaliseString(s: string, ctx: NormaliseContext): string {
  // Longest first, so that a name containing another is replaced whole.
  const names = (
    [
      ...(ctx.generated ?? []).map((g) => [g, `${g.slice(0, -5)}<suffix>`] as const),
      [ctx.work, '<work>'],
      [ctx.node, '<node>'],
      [ctx.namespace, '<ns>'],
    ] as const
  )
    .filter(([n]) => n !== '')
    .sort((a, b) => b[0].length - a[0].length);
  let out = s;
  for (const [find, by] of names) out = replaceAll(out, find, by);
  return out
    .replace(UUID, '<uid>')
    .replace(TIME, '<time>')
    .replace(PREEMPTION_COUNT, 'preemption: <not helpful>.')
    .replace(NODE_COUNT, '0/<n> nodes are available')
    .replace(OTHER_NODES, (m) => (m.startsWith(',') && m.endsWith(',') ? ',' : ''))
    .replace(/: ,/g, ':')
    .replace(/,\./g, '.');
}

function stable(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );
}

/** The value with every string (and key) normalised and every list sorted. */
export function normalise(value: unknown, ctx: NormaliseContext): unknown {
  if (typeof value === 'string') return normaliseString(value, ctx);
  if (Array.isArray(value)) {
    const items = value.map((v) => normalise(v, ctx));
    return items
      .map((v) => [stable(v), v] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, v]) => v);
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      out[normaliseString(k, ctx)] = normalise(v, ctx);
    }
    return out;
  }
  return value ?? null;
}

/**
 * The leaf fields of a normalised value: `a.b.c → value`. A list of plain values is one field (its
 * sorted JSON); a list of objects is a field per item and key (`a[0].b`); an empty object or list
 * is a field of its own, so that "nothing" compares with "something".
 */
export function flatten(value: unknown, prefix = ''): Map<string, Leaf> {
  const out = new Map<string, Leaf>();
  const walk = (v: unknown, path: string): void => {
    if (Array.isArray(v)) {
      if (v.length === 0 || v.every((x) => x === null || typeof x !== 'object')) {
        out.set(path, JSON.stringify(v));
        return;
      }
      v.forEach((x, i) => walk(x, `${path}[${i}]`));
      return;
    }
    if (v && typeof v === 'object') {
      const entries = Object.entries(v);
      if (entries.length === 0) {
        out.set(path, '{}');
        return;
      }
      for (const [k, x] of entries) walk(x, path ? `${path}.${k}` : k);
      return;
    }
    out.set(path, (v ?? null) as Leaf);
  };
  walk(value, prefix);
  return out;
}
