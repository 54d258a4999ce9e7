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

/**
 * Go's json.Marshal of `value`: plain objects are structs (keys in insertion order, `undefined`
 * members left out as with `omitempty`), GoMap instances are maps, `null` is a nil slice, map or
 * pointer.
 */
export function goJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goString(value);
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(goJson).join(',')}]`;
  if (value instanceof GoMap) {
    const keys = Object.keys(value.entries).sort();
    return `{${keys.map((k) => `${goString(k)}:${goJson(value.entries[k])}`).join(',')}}`;
  }
  const fields = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  return `{${fields.map(([k, v]) => `${goString(k)}:${goJson(v)}`).join(',')}}`;
}
