// The parts of Kubernetes' CEL base environment (k8s.io/apiserver/pkg/cel/environment/base.go, 1.37)
// that @marcbachmann/cel-js does not bring itself, added on it for DRA device selectors:
//
// - library.Lists (k8s.io/apiserver/pkg/cel/library/lists.go, ListsVersion(1) from 1.37): isSorted,
//   sum, min, max, indexOf, lastIndexOf and includes — the same `includes` DRA's compile.go declares
//   for list-type attributes (KEP-5491);
// - ext.Strings(StringsVersion(2)) (cel-go ext/strings.go): charAt, replace and strings.quote (the
//   library has indexOf, lastIndexOf, lowerAscii, upperAscii, split, substring, trim and join);
// - ext.Lists(ListsVersion(3)) (cel-go ext/lists.go): slice, flatten, distinct, reverse, sort, first,
//   last and lists.range;
// - ext.Sets (cel-go ext/sets.go): sets.contains, sets.equivalent, sets.intersects;
// - library.Regex (k8s.io/apiserver/pkg/cel/library/regex.go): find, findAll.
//
// Not provided (see compile.ts's header): strings' format(), ext.Lists' sortBy macro, two-variable
// comprehensions (ext.TwoVarComprehensions), and the URL, IP, CIDR, format and authz libraries, none
// of which has a use in a device selector.

import { Optional, type Environment } from '@marcbachmann/cel-js';
import { Quantity } from '@plugboard/apimachinery';
import { Semver } from './semver.js';

type Fail = (message: string) => never;

/** CEL equality for the values a selector sees (heterogeneous numbers compare by value). */
export function celEquals(a: unknown, b: unknown): boolean {
  if (typeof a === 'bigint' || typeof a === 'number') {
    if (typeof b !== 'bigint' && typeof b !== 'number') return false;
    if (typeof a === typeof b) return a === b;
    const [int, dbl] = typeof a === 'bigint' ? [a, b as number] : [b as bigint, a];
    return Number.isInteger(dbl) && BigInt(dbl) === int;
  }
  if (a instanceof Quantity) return b instanceof Quantity && a.cmp(b) === 0;
  if (a instanceof Semver) return b instanceof Semver && a.compare(b) === 0;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => celEquals(v, b[i]));
  }
  if (a instanceof Map) {
    if (!(b instanceof Map) || a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !celEquals(v, b.get(k))) return false;
    return true;
  }
  return a === b;
}

function compare(a: unknown, b: unknown): number {
  if (a instanceof Quantity && b instanceof Quantity) return a.cmp(b);
  if (a instanceof Semver && b instanceof Semver) return a.compare(b);
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    const x = typeof a === 'bigint' && typeof b === 'number' ? Number(a) : a;
    const y = typeof b === 'bigint' && typeof a === 'number' ? Number(b) : b;
    return (x as number) < (y as number) ? -1 : (x as number) > (y as number) ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return a === b ? 0 : a ? 1 : -1;
  throw new TypeError('no such overload');
}

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

/** Namespace values for `strings.quote`, `lists.range` and `sets.*`, as the library does for `optional`. */
class StringsNamespace {}
class ListsNamespace {}
class SetsNamespace {}

function registerLists(env: Environment, fail: Fail): void {
  for (const t of ['int', 'double', 'string', 'bool']) {
    env.registerFunction(`list<${t}>.isSorted(): bool`, (list: unknown[]) => {
      for (let i = 1; i < list.length; i++) if (compare(list[i - 1], list[i]) === 1) return false;
      return true;
    });
    for (const [name, prefer] of [
      ['min', 1],
      ['max', -1],
    ] as const) {
      env.registerFunction(`list<${t}>.${name}(): ${t}`, (list: unknown[]) => {
        if (list.length === 0) return fail(`${name} called on empty list`);
        let result = list[0];
        for (const v of list.slice(1)) if (compare(result, v) === prefer) result = v;
        return result;
      });
    }
  }
  env
    .registerFunction('list<int>.sum(): int', (list: bigint[]) => {
      let acc = 0n;
      for (const v of list) {
        acc += v;
        if (acc > INT64_MAX || acc < INT64_MIN) return fail('integer overflow');
      }
      return acc;
    })
    .registerFunction('list<double>.sum(): double', (list: number[]) => list.reduce((a, b) => a + b, 0))
    .registerFunction('list<A>.indexOf(A): int', (list: unknown[], item: unknown) =>
      BigInt(list.findIndex((v) => celEquals(v, item))),
    )
    .registerFunction('list<A>.lastIndexOf(A): int', (list: unknown[], item: unknown) =>
      BigInt(list.findLastIndex((v) => celEquals(v, item))),
    )
    // DRA's compile.go and library.Lists v1: a list includes an element, a scalar includes itself.
    .registerFunction('dyn.includes(dyn): bool', (target: unknown, arg: unknown) => {
      if (Array.isArray(target)) {
        if (target.length > 48)
          return fail("'includes' function cannot be applied to lists longer than 48 values");
        return target.some((v) => celEquals(v, arg));
      }
      return celEquals(target, arg);
    });

  // ext.Lists v3.
  env
    .registerFunction('list<A>.slice(int, int): list<A>', (list: unknown[], start: bigint, end: bigint) => {
      if (start < 0n || end < 0n)
        return fail(`cannot slice(${start}, ${end}), negative indexes not supported`);
      if (start > end)
        return fail(`cannot slice(${start}, ${end}), start index must be less than or equal to end index`);
      if (end > BigInt(list.length))
        return fail(`cannot slice(${start}, ${end}), list is length ${list.length}`);
      return list.slice(Number(start), Number(end));
    })
    .registerFunction('list<dyn>.flatten(): list<dyn>', (list: unknown[]) =>
      list.flatMap((v) => (Array.isArray(v) ? (v as unknown[]) : [v])),
    )
    .registerFunction('list<dyn>.flatten(int): list<dyn>', (list: unknown[], depth: bigint) => {
      if (depth < 0n) return fail('level must be non-negative');
      return list.flat(Number(depth));
    })
    .registerFunction('list<A>.distinct(): list<A>', (list: unknown[]) => {
      const out: unknown[] = [];
      for (const v of list) if (!out.some((o) => celEquals(o, v))) out.push(v);
      return out;
    })
    .registerFunction('list<A>.reverse(): list<A>', (list: unknown[]) => [...list].reverse())
    .registerFunction('list<A>.sort(): list<A>', (list: unknown[]) => {
      try {
        return [...list].sort(compare);
      } catch {
        return fail('list elements must be comparable');
      }
    })
    .registerFunction('list<A>.first(): optional<A>', (list: unknown[]) =>
      list.length > 0 ? Optional.of(list[0]) : Optional.none(),
    )
    .registerFunction('list<A>.last(): optional<A>', (list: unknown[]) =>
      list.length > 0 ? Optional.of(list[list.length - 1]) : Optional.none(),
    )
    .registerType('ListsNamespace', ListsNamespace)
    .registerConstant('lists', 'ListsNamespace', new ListsNamespace())
    .registerFunction('ListsNamespace.range(int): list<int>', (_: ListsNamespace, n: bigint) =>
      Array.from({ length: Math.max(0, Number(n)) }, (_v, i) => BigInt(i)),
    );
}

/** cel-go's strings.quote: a double-quoted CEL string literal. */
function quote(s: string): string {
  const escapes: Record<string, string> = {
    '\x07': '\\a',
    '\b': '\\b',
    '\f': '\\f',
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
    '\v': '\\v',
    '\\': '\\\\',
    '"': '\\"',
  };
  return `"${[...s].map((c) => escapes[c] ?? c).join('')}"`;
}

function registerStrings(env: Environment, fail: Fail): void {
  env
    .registerFunction('string.charAt(int): string', (s: string, i: bigint) => {
      const chars = [...s];
      if (i < 0n || i > BigInt(chars.length)) return fail(`index out of range: ${i}`);
      return chars[Number(i)] ?? '';
    })
    .registerFunction('string.replace(string, string): string', (s: string, from: string, to: string) =>
      s.split(from).join(to),
    )
    .registerFunction(
      'string.replace(string, string, int): string',
      (s: string, from: string, to: string, n: bigint) => {
        if (n < 0n) return s.split(from).join(to);
        let out = s;
        let pos = 0;
        for (let k = 0n; k < n; k++) {
          const at = out.indexOf(from, pos);
          if (at < 0) break;
          out = out.slice(0, at) + to + out.slice(at + from.length);
          pos = at + to.length + (from.length === 0 ? 1 : 0);
        }
        return out;
      },
    )
    .registerType('StringsNamespace', StringsNamespace)
    .registerConstant('strings', 'StringsNamespace', new StringsNamespace())
    .registerFunction('StringsNamespace.quote(string): string', (_: StringsNamespace, s: string) => quote(s));
}

function registerSets(env: Environment): void {
  const contains = (list: unknown[], sub: unknown[]): boolean =>
    sub.every((v) => list.some((w) => celEquals(v, w)));
  env
    .registerType('SetsNamespace', SetsNamespace)
    .registerConstant('sets', 'SetsNamespace', new SetsNamespace())
    .registerFunction(
      'SetsNamespace.contains(list<A>, list<A>): bool',
      (_: SetsNamespace, a: unknown[], b: unknown[]) => contains(a, b),
    )
    .registerFunction(
      'SetsNamespace.equivalent(list<A>, list<A>): bool',
      (_: SetsNamespace, a: unknown[], b: unknown[]) => contains(a, b) && contains(b, a),
    )
    .registerFunction(
      'SetsNamespace.intersects(list<A>, list<A>): bool',
      (_: SetsNamespace, a: unknown[], b: unknown[]) => a.some((v) => b.some((w) => celEquals(v, w))),
    );
}

function registerRegex(env: Environment, fail: Fail): void {
  const compile = (pattern: string): RegExp => {
    try {
      return new RegExp(pattern, 'gu');
    } catch (err) {
      return fail(`error parsing regexp: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  env
    .registerFunction('string.find(string): string', (s: string, pattern: string) => {
      const m = compile(pattern).exec(s);
      return m ? m[0] : '';
    })
    .registerFunction('string.findAll(string): list<string>', (s: string, pattern: string) =>
      [...s.matchAll(compile(pattern))].map((m) => m[0]),
    )
    .registerFunction(
      'string.findAll(string, int): list<string>',
      (s: string, pattern: string, n: bigint) => {
        const all = [...s.matchAll(compile(pattern))].map((m) => m[0]);
        return n < 0n ? all : all.slice(0, Number(n));
      },
    );
}

/** Registers every extension above on `env`. */
export function registerExtensions(env: Environment, fail: Fail): void {
  registerLists(env, fail);
  registerStrings(env, fail);
  registerSets(env);
  registerRegex(env, fail);
}
