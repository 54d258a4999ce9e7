// The Kubernetes CEL semver library (k8s.io/apiserver/pkg/cel/library/semverlib.go, SemverVersion(1)
// as the 1.33+ base environment enables it) over a port of github.com/blang/semver/v4's Parse and
// Compare, which is what both the library and DRA's `version` attributes use (cel/compile.go parses
// every version attribute with semver.Parse). Error messages are blang's, word for word.

import type { Environment } from '@marcbachmann/cel-js';

const UINT64_MAX = (1n << 64n) - 1n;
const NUMBERS = /^[0-9]*$/;
const ALPHANUM = /^[0-9A-Za-z-]*$/;

export class SemverError extends Error {
  override readonly name = 'SemverError';
}

type PRVersion = { isNum: true; num: bigint } | { isNum: false; str: string };

/** strconv.ParseUint(s, 10, 64) with Go's error text. */
function parseUint(s: string): bigint {
  if (s.length === 0 || !/^\d+$/.test(s))
    throw new SemverError(`strconv.ParseUint: parsing "${s}": invalid syntax`);
  const v = BigInt(s);
  if (v > UINT64_MAX) throw new SemverError(`strconv.ParseUint: parsing "${s}": value out of range`);
  return v;
}

const hasLeadingZeroes = (s: string): boolean => s.length > 1 && s[0] === '0';

export class Semver {
  constructor(
    readonly major: bigint,
    readonly minor: bigint,
    readonly patch: bigint,
    readonly pre: readonly PRVersion[] = [],
    readonly build: readonly string[] = [],
  ) {}

  /** semver.Parse (blang/semver/v4). */
  static parse(s: string): Semver {
    if (s.length === 0) throw new SemverError('Version string empty');
    const parts = splitN(s, '.', 3);
    if (parts.length !== 3) throw new SemverError('No Major.Minor.Patch elements found');
    const [majorStr, minorStr, rest] = parts as [string, string, string];
    if (!NUMBERS.test(majorStr))
      throw new SemverError(`Invalid character(s) found in major number ${quote(majorStr)}`);
    if (hasLeadingZeroes(majorStr))
      throw new SemverError(`Major number must not contain leading zeroes ${quote(majorStr)}`);
    const major = parseUint(majorStr);
    if (!NUMBERS.test(minorStr))
      throw new SemverError(`Invalid character(s) found in minor number ${quote(minorStr)}`);
    if (hasLeadingZeroes(minorStr))
      throw new SemverError(`Minor number must not contain leading zeroes ${quote(minorStr)}`);
    const minor = parseUint(minorStr);

    let patchStr = rest;
    let build: string[] = [];
    let prerelease: string[] = [];
    const buildIndex = patchStr.indexOf('+');
    if (buildIndex !== -1) {
      build = patchStr.slice(buildIndex + 1).split('.');
      patchStr = patchStr.slice(0, buildIndex);
    }
    const preIndex = patchStr.indexOf('-');
    if (preIndex !== -1) {
      prerelease = patchStr.slice(preIndex + 1).split('.');
      patchStr = patchStr.slice(0, preIndex);
    }
    if (!NUMBERS.test(patchStr))
      throw new SemverError(`Invalid character(s) found in patch number ${quote(patchStr)}`);
    if (hasLeadingZeroes(patchStr))
      throw new SemverError(`Patch number must not contain leading zeroes ${quote(patchStr)}`);
    const patch = parseUint(patchStr);

    const pre = prerelease.map(newPRVersion);
    for (const b of build) {
      if (b.length === 0) throw new SemverError('Build meta data is empty');
      if (!ALPHANUM.test(b))
        throw new SemverError(`Invalid character(s) found in build meta data ${quote(b)}`);
    }
    return new Semver(major, minor, patch, pre, build);
  }

  /** normalizeAndParse from semverlib.go: no "v" prefix, missing minor/patch filled, leading zeros removed. */
  static parseNormalized(input: string): Semver {
    const s = input.startsWith('v') ? input.slice(1) : input;
    const parts = splitN(s, '.', 3).map((p) => {
      if (p.length <= 1) return p;
      const trimmed = p.replace(/^0+/, '');
      return trimmed.length === 0 || !/[0-9]/.test(trimmed[0] ?? '') ? `0${trimmed}` : trimmed;
    });
    if (parts.length < 3) {
      if (/[+-]/.test(parts[parts.length - 1] ?? ''))
        throw new SemverError('short version cannot contain PreRelease/Build meta data');
      while (parts.length < 3) parts.push('0');
    }
    return Semver.parse(parts.join('.'));
  }

  /** Version.Compare: build metadata is ignored. */
  compare(o: Semver): number {
    if (this.major !== o.major) return this.major > o.major ? 1 : -1;
    if (this.minor !== o.minor) return this.minor > o.minor ? 1 : -1;
    if (this.patch !== o.patch) return this.patch > o.patch ? 1 : -1;
    if (this.pre.length === 0 && o.pre.length === 0) return 0;
    if (this.pre.length === 0) return 1;
    if (o.pre.length === 0) return -1;
    let i = 0;
    for (; i < this.pre.length && i < o.pre.length; i++) {
      const c = comparePR(this.pre[i]!, o.pre[i]!);
      if (c !== 0) return c;
    }
    if (i === this.pre.length && i === o.pre.length) return 0;
    return i === this.pre.length ? -1 : 1;
  }

  toString(): string {
    let s = `${this.major}.${this.minor}.${this.patch}`;
    if (this.pre.length > 0) s += `-${this.pre.map((p) => (p.isNum ? p.num.toString() : p.str)).join('.')}`;
    if (this.build.length > 0) s += `+${this.build.join('.')}`;
    return s;
  }
}

/** strings.SplitN(s, sep, n). */
function splitN(s: string, sep: string, n: number): string[] {
  const parts = s.split(sep);
  if (parts.length <= n) return parts;
  return [...parts.slice(0, n - 1), parts.slice(n - 1).join(sep)];
}

/** Go's %q for the ASCII strings these messages carry. */
function quote(s: string): string {
  return JSON.stringify(s);
}

function newPRVersion(s: string): PRVersion {
  if (s.length === 0) throw new SemverError('Prerelease is empty');
  if (NUMBERS.test(s)) {
    if (hasLeadingZeroes(s))
      throw new SemverError(`Numeric PreRelease version must not contain leading zeroes ${quote(s)}`);
    return { isNum: true, num: parseUint(s) };
  }
  if (ALPHANUM.test(s)) return { isNum: false, str: s };
  throw new SemverError(`Invalid character(s) found in prerelease ${quote(s)}`);
}

function comparePR(v: PRVersion, o: PRVersion): number {
  if (v.isNum && !o.isNum) return -1;
  if (!v.isNum && o.isNum) return 1;
  if (v.isNum && o.isNum) return v.num === o.num ? 0 : v.num > o.num ? 1 : -1;
  const a = (v as { str: string }).str;
  const b = (o as { str: string }).str;
  return a === b ? 0 : a > b ? 1 : -1;
}

/** The CEL type name of Semver values, as apiservercel.SemverType declares it. */
export const SEMVER_TYPE = 'kubernetes.Semver';

/** Registers `semver()`, `isSemver()` (both with the 1.33 normalize flag) and the Semver members. */
export function registerSemverLibrary(env: Environment, fail: (message: string) => never): void {
  const t = SEMVER_TYPE;
  const parse = (s: string, normalize: boolean): Semver => {
    try {
      return normalize ? Semver.parseNormalized(s) : Semver.parse(s);
    } catch (err) {
      return fail(err instanceof Error ? err.message : String(err));
    }
  };
  const isSemver = (s: string, normalize: boolean): boolean => {
    try {
      if (normalize) Semver.parseNormalized(s);
      else Semver.parse(s);
      return true;
    } catch {
      return false;
    }
  };
  env
    .registerType(t, Semver)
    .registerFunction(`semver(string): ${t}`, (s: string) => parse(s, false))
    .registerFunction(`semver(string, bool): ${t}`, (s: string, n: boolean) => parse(s, n))
    .registerFunction('isSemver(string): bool', (s: string) => isSemver(s, false))
    .registerFunction('isSemver(string, bool): bool', (s: string, n: boolean) => isSemver(s, n))
    .registerFunction(`${t}.isGreaterThan(${t}): bool`, (a: Semver, b: Semver) => a.compare(b) === 1)
    .registerFunction(`${t}.isLessThan(${t}): bool`, (a: Semver, b: Semver) => a.compare(b) === -1)
    .registerFunction(`${t}.compareTo(${t}): int`, (a: Semver, b: Semver) => BigInt(a.compare(b)))
    .registerFunction(`${t}.major(): int`, (a: Semver) => BigInt.asIntN(64, a.major))
    .registerFunction(`${t}.minor(): int`, (a: Semver) => BigInt.asIntN(64, a.minor))
    .registerFunction(`${t}.patch(): int`, (a: Semver) => BigInt.asIntN(64, a.patch))
    // apiservercel.Semver.Equal: Version.EQ, i.e. Compare == 0.
    .registerOperator(`${t} == ${t}`, (a: Semver, b: Semver) => a.compare(b) === 0);
}
