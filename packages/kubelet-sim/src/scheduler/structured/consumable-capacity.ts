// Consumable capacity (KEP-5075, DRAConsumableCapacity, beta and on by default since 1.36):
// k8s.io/dynamic-resource-allocation/structured/internal/incubating/consumable_capacity.go (1.37),
// with DRAFractionalCapacityRange on (its 1.37 default). How much of a device's capacity one
// allocation consumes — the request, or the policy's default (else the whole capacity) when the
// request names none, rounded up to the policy's valid range (min + k·step) or to the next valid
// value — and whether it still fits beside what allocated and allocating claims consume.
//
// Two kinds of "no": a device that cannot satisfy the request is skipped (false); a request that
// cannot be represented in the range arithmetic, or a negative result, is a fatal error for the
// scheduling attempt (CapacityError), as upstream returns it.

import { Quantity } from '@plugboard/apimachinery';
import type { CapacityRequestPolicy, CapacityRequirements, DeviceCapacity } from '../types.js';

/** Capacity name → quantity (upstream's ConsumedCapacity). */
export type ConsumedCapacity = Map<string, Quantity>;

export class CapacityError extends Error {
  override readonly name = 'CapacityError';
}

const INT64_MAX = (1n << 63n) - 1n;
const q = (v: string | number): Quantity => Quantity.fromJSON(v);

/** CmpRequestOverCapacity: whether the request fits the device beside `current` and `allocating`. */
export function cmpRequestOverCapacity(
  current: ReadonlyMap<string, Quantity>,
  request: CapacityRequirements | undefined,
  capacity: Readonly<Record<string, DeviceCapacity>> | undefined,
  allocating: ReadonlyMap<string, Quantity> | undefined,
): boolean {
  const capacities = Object.entries(capacity ?? {});
  // A device without a requested capacity may not do, another may: skip, not an error.
  for (const name of Object.keys(request?.requests ?? {})) {
    if (!Object.hasOwn(capacity ?? {}, name)) return false;
  }
  // Resolve every capacity first, so that an unrepresentable one aborts whatever the order.
  const consumed = new Map<string, Quantity>();
  for (const [name, cap] of capacities) {
    const requested = requestedValue(request, name);
    let value: Quantity;
    try {
      value = calculateConsumedCapacity(requested, cap);
    } catch (err) {
      throw new CapacityError(`capacity "${name}": ${(err as Error).message}`, { cause: err });
    }
    if (value.sign() < 0) throw new CapacityError(`capacity "${name}": capacity value is negative`);
    consumed.set(name, value);
  }
  for (const [name, cap] of capacities) {
    const value = consumed.get(name)!;
    if (violatesPolicy(value, cap.requestPolicy)) return false;
    let total = value.add(current.get(name) ?? Quantity.fromInt(0n));
    const pending = allocating?.get(name);
    if (pending) total = total.add(pending);
    if (total.cmp(q(cap.value)) > 0) return false;
  }
  return true;
}

/** GetConsumedCapacityFromRequest: what one allocation of the device consumes, per capacity. */
export function consumedCapacityFromRequest(
  request: CapacityRequirements | undefined,
  capacity: Readonly<Record<string, DeviceCapacity>> | undefined,
): ConsumedCapacity {
  const consumed: ConsumedCapacity = new Map();
  for (const [name, cap] of Object.entries(capacity ?? {})) {
    try {
      consumed.set(name, calculateConsumedCapacity(requestedValue(request, name), cap));
    } catch (err) {
      throw new CapacityError(`capacity "${name}": ${(err as Error).message}`, { cause: err });
    }
  }
  return consumed;
}

function requestedValue(request: CapacityRequirements | undefined, name: string): Quantity | undefined {
  const raw = request?.requests?.[name];
  return raw === undefined ? undefined : q(raw);
}

/** calculateConsumedCapacity: the request rounded up by the policy, or the default when none. */
export function calculateConsumedCapacity(
  requested: Quantity | undefined,
  capacity: DeviceCapacity,
): Quantity {
  const policy = capacity.requestPolicy;
  if (requested === undefined) {
    return policy?.default !== undefined ? q(policy.default) : q(capacity.value);
  }
  if (!policy) return requested;
  if (policy.validRange?.min !== undefined) return roundUpRange(requested, policy.validRange);
  if (policy.validValues !== undefined) return roundUpValidValues(requested, policy.validValues);
  return requested;
}

interface Range {
  min: string;
  max?: string;
  step?: string;
}

/** roundUpRange: at least min; with a step, the next min + k·step (milli arithmetic for fractions). */
function roundUpRange(requested: Quantity, range: Range): Quantity {
  const min = q(range.min);
  if (requested.cmp(min) < 0) return min;
  if (range.step === undefined) return requested;
  const step = q(range.step);
  if (useMilli(range)) {
    const requestedMilli = safeMilliValue(requested);
    if (requestedMilli === undefined) {
      throw new Error(
        `capacity request cannot be represented in the device's range arithmetic: request ${requested.canonicalString()} is not a representable milli value`,
      );
    }
    const stepMilli = step.milliValue();
    const minMilli = min.milliValue();
    const valMilli = minMilli + stepMilli * ceilDiv(requestedMilli - minMilli, stepMilli);
    if (valMilli > INT64_MAX) {
      throw new Error(
        `capacity request cannot be represented in the device's range arithmetic: rounding request ${requested.canonicalString()} up to the next step passes the milli-value range`,
      );
    }
    return valMilli % 1000n === 0n
      ? new Quantity(valMilli / 1000n, 0, false, step.format)
      : new Quantity(valMilli, -3, false, step.format);
  }
  if (requested.cmp(Quantity.fromInt(INT64_MAX)) > 0) {
    throw new Error(
      `capacity request cannot be represented in the device's range arithmetic: request ${requested.canonicalString()} exceeds MaxInt64`,
    );
  }
  const minInt = min.value();
  const stepInt = step.value();
  const value = minInt + stepInt * ceilDiv(requested.value() - minInt, stepInt);
  if (minInt >= 0n && value > INT64_MAX) {
    throw new Error(
      `capacity request cannot be represented in the device's range arithmetic: rounding request ${requested.canonicalString()} up to the next step passes MaxInt64`,
    );
  }
  return new Quantity(value, 0, false, step.format);
}

/** Go's n := added / step; if added % step != 0 { n++ } (truncating division). */
function ceilDiv(added: bigint, step: bigint): bigint {
  const n = added / step;
  return added % step !== 0n ? n + 1n : n;
}

/** roundUpValidValues: the first valid value (ascending) at least the request, else the request. */
function roundUpValidValues(requested: Quantity, validValues: readonly string[]): Quantity {
  for (const raw of validValues) {
    const value = q(raw);
    if (requested.cmp(value) <= 0) return value;
  }
  return requested;
}

/**
 * violatesPolicy. Upstream compares the value with the default as Go structs (the same
 * representation); a semantic comparison here, which differs only for a request spelled
 * differently from an off-grid default.
 */
function violatesPolicy(value: Quantity, policy: CapacityRequestPolicy | undefined): boolean {
  if (!policy) return false;
  if (policy.default !== undefined && value.cmp(q(policy.default)) === 0) return false;
  if (policy.validRange) {
    const range = policy.validRange;
    if (range.max !== undefined && value.cmp(q(range.max)) > 0) return true;
    if (range.step !== undefined) {
      let requested: bigint;
      let step: bigint;
      let min: bigint;
      if (useMilli(range)) {
        const milli = safeMilliValue(value);
        if (milli === undefined) return true;
        requested = milli;
        step = q(range.step).milliValue();
        min = q(range.min).milliValue();
      } else {
        requested = value.value();
        step = q(range.step).value();
        min = q(range.min).value();
      }
      if ((requested - min) % step !== 0n) return true;
    }
    return false;
  }
  if ((policy.validValues ?? []).length > 0) {
    return !(policy.validValues ?? []).some((v) => value.cmp(q(v)) === 0);
  }
  return false;
}

/** useMilli: every bound representable in milli units, step at least 1m (FractionalCapacityRange on). */
function useMilli(range: Range): boolean {
  for (const [i, raw] of [range.min, range.max, range.step].entries()) {
    if (raw === undefined) continue;
    const milli = safeMilliValue(q(raw));
    if (milli === undefined) return false;
    if (i === 2 && milli < 1n) return false;
  }
  return true;
}

/** safeMilliValue: the value in milli units if that is exact (and within int64). */
function safeMilliValue(value: Quantity): bigint | undefined {
  const milli = value.milliValue();
  if (milli > INT64_MAX || milli < -INT64_MAX - 1n) return undefined;
  return new Quantity(milli, -3, false, value.format).cmp(value) === 0 ? milli : undefined;
}
