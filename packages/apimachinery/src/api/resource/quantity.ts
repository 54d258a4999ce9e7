// resource.Quantity (k8s.io/apimachinery/pkg/api/resource/quantity.go, amount.go and math.go, v0.37):
// the one exact quantity parser. kubelet-sim's CEL library, @plugboard/topology's numeric views and
// the gateway's extended-resource counts all read quantities through it.
//
// Values are exact: unscaled × 10^scale with a bigint unscaled. Like apimachinery, a Quantity remembers
// whether it is held as an int64Amount (the fast path of ParseQuantity and of int64 arithmetic) or as
// an inf.Dec, because that decides what isInteger()/asInteger() answer: apimachinery's AsInt64 refuses
// an inf.Dec, and an int64Amount with a negative scale, even when the value is whole ("1000m" is not
// an integer there, and neither is "1.5Gi").

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);
/** resource.Nano: values are rounded up to 10^-9. */
const NANO = -9;

export const ERR_FORMAT_WRONG =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
export const ERR_NUMERIC = 'unable to parse numeric part of quantity';
export const ERR_SUFFIX = "unable to parse quantity's suffix";

export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

const DECIMAL_SUFFIXES: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

export class QuantityError extends Error {
  override readonly name = 'QuantityError';
}

const fitsInt64 = (v: bigint): boolean => v >= INT64_MIN && v <= INT64_MAX;
const pow10 = (n: number): bigint => 10n ** BigInt(n);

/** A resource.Quantity. Immutable; arithmetic returns new values. */
export class Quantity {
  constructor(
    /** The value is unscaled × 10^scale. */
    readonly unscaled: bigint,
    readonly scale: number,
    /** Held as an inf.Dec in apimachinery (else as an int64Amount). */
    readonly dec: boolean,
    readonly format: QuantityFormat,
  ) {}

  /** resource.ParseQuantity; throws a QuantityError with apimachinery's message. */
  static parse(str: string): Quantity {
    if (str.length === 0) throw new QuantityError(ERR_FORMAT_WRONG);
    if (str === '0') return new Quantity(0n, 0, false, 'DecimalSI');
    const { positive, value, num, denom, suffix } = parseQuantityString(str);
    const interpreted = interpretSuffix(suffix);
    if (!interpreted) throw new QuantityError(ERR_SUFFIX);
    const { base, exponent } = interpreted;
    let { format } = interpreted;

    let precision = 0;
    let scale = 0;
    let mantissa = 1n;
    if (format === 'BinarySI') {
      if (exponent >= 0 && denom.length === 0) {
        mantissa = 1n << BigInt(exponent);
        precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
      } else {
        precision = -1;
      }
    } else {
      scale = exponent;
      precision = 18 - (num.length + denom.length);
    }

    if (precision >= 0) {
      scale -= denom.length;
      if (scale >= NANO) {
        const result = BigInt(num + denom) * mantissa;
        if (fitsInt64(result)) return new Quantity(positive ? result : -result, scale, false, format);
      }
    }

    // The slow path: an inf.Dec from the numeric part, the suffix applied, rounded up to 1n.
    const match = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(value);
    if (!match) throw new QuantityError(ERR_NUMERIC);
    const digits = (match[2] ?? '') + (match[3] ?? '');
    if (digits.length === 0) throw new QuantityError(ERR_NUMERIC);
    let magnitude = BigInt(digits);
    let amountScale = -(match[3]?.length ?? 0);
    const negative = match[1] === '-';
    if (base === 10) amountScale += exponent;
    else magnitude *= 1n << BigInt(exponent);
    if (magnitude !== 0n && amountScale < NANO) {
      const divisor = pow10(NANO - amountScale);
      const rounded = magnitude / divisor + (magnitude % divisor === 0n ? 0n : 1n);
      magnitude = rounded;
      amountScale = NANO;
    }
    if (format === 'BinarySI' && compareExact(magnitude, amountScale, INT64_MAX, 0) > 0) {
      magnitude = INT64_MAX;
      amountScale = 0;
    }
    if (format === 'BinarySI' && magnitude !== 0n && compareExact(magnitude, amountScale, 1n, 0) < 0) {
      format = 'DecimalSI';
    }
    return new Quantity(negative ? -magnitude : magnitude, amountScale, true, format);
  }

  /** resource.Quantity's UnmarshalJSON: a JSON string (quotes already removed) or number. */
  static fromJSON(value: string | number): Quantity {
    return Quantity.parse(String(value).trim());
  }

  /** resource.NewQuantity(value, DecimalExponent). */
  static fromInt(value: bigint): Quantity {
    return new Quantity(value, 0, false, 'DecimalExponent');
  }

  /** Cmp: -1, 0 or 1. */
  cmp(other: Quantity): number {
    return compareExact(this.unscaled, this.scale, other.unscaled, other.scale);
  }

  sign(): number {
    return this.unscaled === 0n ? 0 : this.unscaled > 0n ? 1 : -1;
  }

  /** AsInt64: refuses an inf.Dec and a negative scale, checks for int64 overflow. */
  asInt64(): bigint | undefined {
    if (this.dec) return undefined;
    if (this.scale === 0) return this.unscaled;
    if (this.scale < 0) return undefined;
    const v = this.unscaled * pow10(this.scale);
    return fitsInt64(v) ? v : undefined;
  }

  /**
   * ScaledValue: ceil(q / 10^scale) as apimachinery computes it — a fraction rounds away from zero
   * (int64Amount.AsScaledInt64); exact in a bigint where Go would overflow its int64.
   */
  scaledValue(scale: number): bigint {
    const shift = this.scale - scale;
    if (shift >= 0) return this.unscaled * pow10(shift);
    const divisor = pow10(-shift);
    const quotient = this.unscaled / divisor;
    if (this.unscaled % divisor === 0n) return quotient;
    return this.unscaled > 0n ? quotient + 1n : quotient - 1n;
  }

  /** Value: the quantity in whole units, a fraction rounded up ("1.5" → 2, "100m" → 1). */
  value(): bigint {
    return this.scaledValue(0);
  }

  /** MilliValue: ceil(q × 1000) ("0.1" → 100, "1n" → 1). */
  milliValue(): bigint {
    return this.scaledValue(-3);
  }

  /**
   * The value as the nearest JavaScript number: the exact decimal (toString) rounded once, so a
   * value up to 2^53 with at most nine decimals ("1.5", "16Gi", "100m") comes out exact.
   */
  toNumber(): number {
    return Number(this.toString());
  }

  /** AsApproximateFloat64: base × 10^exponent in float64, as apimachinery computes it. */
  asApproximateFloat64(): number {
    const base = Number(this.unscaled);
    if (this.scale === 0) return base;
    return this.scale > 0 ? base * 10 ** this.scale : base * (1 / 10 ** -this.scale);
  }

  add(y: Quantity): Quantity {
    const format = this.unscaled === 0n ? y.format : this.format;
    if (!this.dec && !y.dec) {
      const sum = int64AmountAdd(this.unscaled, this.scale, y.unscaled, y.scale);
      if (sum) return new Quantity(sum.value, sum.scale, false, format);
    }
    return exactSum(this, y, 1n, format);
  }

  sub(y: Quantity): Quantity {
    const format = this.unscaled === 0n ? y.format : this.format;
    if (!this.dec && !y.dec) {
      const diff = int64AmountAdd(this.unscaled, this.scale, -y.unscaled, y.scale);
      if (diff) return new Quantity(diff.value, diff.scale, false, format);
    }
    return exactSum(this, y, -1n, format);
  }

  /**
   * String(): the canonical form the API server writes back (CanonicalizeBytes): "20Gi", "1500m",
   * "2k", "1e3" (DecimalExponent). BinarySI falls back to DecimalSI below 1024 in magnitude or for a
   * fraction; the decimal forms move factors of ten into an exponent that is a multiple of three.
   */
  canonicalString(): string {
    if (this.unscaled === 0n) return '0';
    let format = this.format;
    if (format === 'BinarySI') {
      const abs = this.unscaled < 0n ? -this.unscaled : this.unscaled;
      const whole = this.scale >= 0 || abs % pow10(-this.scale) === 0n;
      if (compareExact(abs, this.scale, 1024n, 0) < 0 || !whole) format = 'DecimalSI';
    }
    if (format === 'BinarySI') {
      let value = this.scaledValue(0);
      let exponent = 0;
      while (exponent < 60 && value % 1024n === 0n) {
        value /= 1024n;
        exponent += 10;
      }
      const suffix = Object.entries(BINARY_SUFFIXES).find(([, e]) => e === exponent)?.[0] ?? '';
      return `${value}${suffix}`;
    }
    let mantissa = this.unscaled;
    let exponent = this.scale;
    while (mantissa % 10n === 0n) {
      mantissa /= 10n;
      exponent++;
    }
    while (((exponent % 3) + 3) % 3 !== 0) {
      mantissa *= 10n;
      exponent--;
    }
    if (exponent === 0) return `${mantissa}`;
    const suffix =
      format === 'DecimalSI'
        ? Object.entries(DECIMAL_SUFFIXES).find(([, e]) => e === exponent)?.[0]
        : undefined;
    return suffix !== undefined ? `${mantissa}${suffix}` : `${mantissa}e${exponent}`;
  }

  toString(): string {
    if (this.scale >= 0) return (this.unscaled * pow10(this.scale)).toString();
    const negative = this.unscaled < 0n;
    const digits = (negative ? -this.unscaled : this.unscaled).toString().padStart(-this.scale + 1, '0');
    const point = digits.length + this.scale;
    const text = `${digits.slice(0, point)}.${digits.slice(point)}`.replace(/\.?0+$/, '');
    return negative ? `-${text}` : text;
  }
}

function exactSum(x: Quantity, y: Quantity, sign: bigint, format: QuantityFormat): Quantity {
  const scale = Math.min(x.scale, y.scale);
  const value = x.unscaled * pow10(x.scale - scale) + sign * y.unscaled * pow10(y.scale - scale);
  return new Quantity(value, scale, true, format);
}

/** int64Amount.Add: undefined when the int64 arithmetic would overflow. */
function int64AmountAdd(
  a: bigint,
  aScale: number,
  b: bigint,
  bScale: number,
): { value: bigint; scale: number } | undefined {
  if (b === 0n) return { value: a, scale: aScale };
  if (a === 0n) return { value: b, scale: bScale };
  let scale = aScale;
  let x = a;
  let y = b;
  if (aScale > bScale) {
    x = a * pow10(aScale - bScale);
    if (!fitsInt64(x)) return undefined;
    scale = bScale;
  } else if (bScale > aScale) {
    y = b * pow10(bScale - aScale);
    if (!fitsInt64(y)) return undefined;
  }
  const sum = x + y;
  return fitsInt64(sum) ? { value: sum, scale } : undefined;
}

function compareExact(a: bigint, aScale: number, b: bigint, bScale: number): number {
  const scale = Math.min(aScale, bScale);
  const x = a * pow10(aScale - scale);
  const y = b * pow10(bScale - scale);
  return x === y ? 0 : x > y ? 1 : -1;
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** parseQuantityString, step by step as apimachinery scans it. */
function parseQuantityString(str: string): {
  positive: boolean;
  value: string;
  num: string;
  denom: string;
  suffix: string;
} {
  let positive = true;
  let pos = 0;
  const end = str.length;
  let num = '';
  let denom = '';
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') {
    pos++;
  }
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };

  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  num = str.slice(pos, i);
  if (i >= end) return { positive, value: str, num, denom, suffix: '' };
  pos = i;
  if (num.length === 0) num = '0';

  if (str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && isDigit(str[i])) i++;
    denom = str.slice(pos, i);
    if (i >= end) return { positive, value: str, num, denom, suffix: '' };
    pos = i;
  }
  const value = str.slice(0, pos);

  const suffixStart = pos;
  i = pos;
  while (i < end && 'eEinumkKMGTP'.includes(str[i] ?? '')) i++;
  if (i >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  pos = i;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  i = pos;
  while (i < end && isDigit(str[i])) i++;
  if (i >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  throw new QuantityError(ERR_FORMAT_WRONG);
}

function interpretSuffix(
  suffix: string,
): { base: 2 | 10; exponent: number; format: QuantityFormat } | undefined {
  const decimal = DECIMAL_SUFFIXES[suffix];
  if (decimal !== undefined) return { base: 10, exponent: decimal, format: 'DecimalSI' };
  const binary = BINARY_SUFFIXES[suffix];
  if (binary !== undefined) return { base: 2, exponent: binary, format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'E' || suffix[0] === 'e')) {
    // strconv.ParseInt(suffix[1:], 10, 64)
    if (!/^[+-]?\d+$/.test(suffix.slice(1))) return undefined;
    const parsed = BigInt(suffix.slice(1));
    if (!fitsInt64(parsed)) return undefined;
    return { base: 10, exponent: Number(BigInt.asIntN(32, parsed)), format: 'DecimalExponent' };
  }
  return undefined;
}
