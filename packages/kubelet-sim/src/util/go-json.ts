// JSON text as Go's encoding/json writes it, for files a real kubelet must be able to read back
// byte for byte (checkpoints with checksums over their JSON): struct fields in declaration order
// (the caller builds objects in that order), map keys sorted, nil slices and maps as `null`, and
// strings with Go's HTML-safe escaping of `<`, `>`, `&`, U+2028 and U+2029.

/** A JSON value whose objects are Go maps: their keys are written sorted. */
export class GoMap {
  constructor(readonly entries: Record<string, unknown>) {}
}

const GO_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

export function goString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c]!);
}

/** A key JavaScript objects would order numerically, not by insertion (an array index). */
const INDEX_LIKE = /^(0|[1-9]\d*)$/;

/** The value as plain JSON data whose JSON.stringify output has Go's field and key order. */
function toPlain(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(toPlain);
  const entries =
    value instanceof GoMap
      ? Object.keys(value.entries)
          .sort()
          .map((k) => [k, value.entries[k]] as const)
      : Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) out[k] = toPlain(v);
  return out;
}

function hasIndexLikeKey(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(hasIndexLikeKey);
  const obj = value instanceof GoMap ? value.entries : (value as Record<string, unknown>);
  return Object.keys(obj).some((k) => INDEX_LIKE.test(k)) || Object.values(obj).some(hasIndexLikeKey);
}

/** The slow path: member by member (keeps the order of keys JavaScript objects would reorder). */
function goJsonSlow(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goString(value);
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(goJsonSlow).join(',')}]`;
  if (value instanceof GoMap) {
    const keys = Object.keys(value.entries).sort();
    return `{${keys.map((k) => `${goString(k)}:${goJsonSlow(value.entries[k])}`).join(',')}}`;
  }
  const fields = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  return `{${fields.map(([k, v]) => `${goString(k)}:${goJsonSlow(v)}`).join(',')}}`;
}

/**
 * Go's json.Marshal of `value`: plain objects are structs (keys in insertion order, `undefined`
 * members left out as with `omitempty`), GoMap instances are maps, `null` is a nil slice, map or
 * pointer. JSON.stringify does the work (Go's escaping of <, >, &, U+2028 and U+2029 applied to
 * its output: those characters only occur inside strings), unless a key looks like an array index.
 */
export function goJson(value: unknown): string {
  if (hasIndexLikeKey(value)) return goJsonSlow(value);
  return JSON.stringify(toPlain(value)).replace(/[<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c]!);
}
