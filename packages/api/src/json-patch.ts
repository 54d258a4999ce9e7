// The one JSON Patch application of the stream's clients (the dashboard's cache, its server's
// cluster hub, `kubectl plugboard watch`): immutable RFC 6902 with structural sharing.
// fast-json-patch either mutates the document or deep-clones all of it; neither works for a React
// cache: mutation hides changes from memoised components, a deep clone re-renders every one of the
// 1,024 device tiles. Here only the objects on the path of an op are copied, so a one-device
// `replace` yields a new root, a new `devices` map and one new device, and every other object keeps
// its identity (and its memoised tile skips rendering).

/** One RFC 6902 operation, as the gateway's stream sends them. */
export type JsonPatchOp =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

export class PatchError extends Error {
  constructor(
    message: string,
    readonly op: JsonPatchOp,
  ) {
    super(message);
    this.name = 'PatchError';
  }
}

type Container = Record<string, unknown> | unknown[];

function parsePointer(pointer: string, op: JsonPatchOp): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PatchError(`invalid JSON pointer "${pointer}"`, op);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function isContainer(v: unknown): v is Container {
  return typeof v === 'object' && v !== null;
}

function arrayIndex(arr: unknown[], token: string, forInsert: boolean, op: JsonPatchOp): number {
  if (forInsert && token === '-') return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new PatchError(`invalid array index "${token}"`, op);
  const i = Number(token);
  if (i > arr.length || (!forInsert && i === arr.length))
    throw new PatchError(`array index ${i} out of bounds`, op);
  return i;
}

function getAt(doc: unknown, tokens: string[], op: JsonPatchOp): unknown {
  let cur = doc;
  for (const t of tokens) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(cur, t, false, op)];
    else if (isContainer(cur) && Object.prototype.hasOwnProperty.call(cur, t))
      cur = (cur as Record<string, unknown>)[t];
    else throw new PatchError(`path "/${tokens.join('/')}" does not exist`, op);
  }
  return cur;
}

/** Returns a copy of `doc` with `edit` applied to the parent container of `tokens`, copying only the path. */
function editParent(
  doc: unknown,
  tokens: string[],
  op: JsonPatchOp,
  edit: (parent: Container, last: string) => void,
): unknown {
  if (tokens.length === 0) throw new PatchError('cannot edit the parent of the root', op);
  const walk = (node: unknown, depth: number): unknown => {
    if (!isContainer(node))
      throw new PatchError(`path "/${tokens.slice(0, depth).join('/')}" is not a container`, op);
    const copy: Container = Array.isArray(node) ? node.slice() : { ...node };
    const token = tokens[depth]!;
    if (depth === tokens.length - 1) {
      edit(copy, token);
      return copy;
    }
    if (Array.isArray(copy)) {
      const i = arrayIndex(copy, token, false, op);
      copy[i] = walk(copy[i], depth + 1);
    } else {
      if (!Object.prototype.hasOwnProperty.call(copy, token)) {
        throw new PatchError(`path "/${tokens.slice(0, depth + 1).join('/')}" does not exist`, op);
      }
      copy[token] = walk(copy[token], depth + 1);
    }
    return copy;
  };
  return walk(doc, 0);
}

function addAt(doc: unknown, tokens: string[], value: unknown, op: JsonPatchOp): unknown {
  if (tokens.length === 0) return value;
  return editParent(doc, tokens, op, (parent, last) => {
    if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, true, op), 0, value);
    else parent[last] = value;
  });
}

function removeAt(doc: unknown, tokens: string[], op: JsonPatchOp): unknown {
  getAt(doc, tokens, op); // throws when missing
  return editParent(doc, tokens, op, (parent, last) => {
    if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, false, op), 1);
    else delete parent[last];
  });
}

function replaceAt(doc: unknown, tokens: string[], value: unknown, op: JsonPatchOp): unknown {
  if (tokens.length === 0) return value;
  getAt(doc, tokens, op);
  return editParent(doc, tokens, op, (parent, last) => {
    if (Array.isArray(parent)) parent[arrayIndex(parent, last, false, op)] = value;
    else parent[last] = value;
  });
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!isContainer(a) || !isContainer(b) || Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** Applies `ops` in order; throws PatchError (and leaves `doc` untouched) when any op fails. */
export function applyPatchImmutable<T>(doc: T, ops: readonly JsonPatchOp[]): T {
  let cur: unknown = doc;
  for (const op of ops) {
    const path = parsePointer(op.path, op);
    switch (op.op) {
      case 'add':
        cur = addAt(cur, path, op.value, op);
        break;
      case 'remove':
        cur = removeAt(cur, path, op);
        break;
      case 'replace':
        cur = replaceAt(cur, path, op.value, op);
        break;
      case 'test':
        if (!deepEqual(getAt(cur, path, op), op.value))
          throw new PatchError(`test failed at "${op.path}"`, op);
        break;
      case 'move': {
        const from = parsePointer(op.from, op);
        const value = getAt(cur, from, op);
        cur = addAt(removeAt(cur, from, op), path, value, op);
        break;
      }
      case 'copy':
        cur = addAt(cur, path, structuredClone(getAt(cur, parsePointer(op.from, op), op)), op);
        break;
    }
  }
  return cur as T;
}

/** Escapes one JSON pointer token (RFC 6901). */
export function pointerToken(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}
