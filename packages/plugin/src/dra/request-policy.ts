// The API server's rules for a consumable capacity's requestPolicy (KEP-5075), as
// validateRequestPolicy in k8s.io/kubernetes pkg/apis/resource/validation applies them to a device
// with allowMultipleAllocations, so the config refuses what the API server would: validValues or
// validRange (not both), a default for either, values sorted, unique and at most the capacity, a
// range whose min, max and default fit the capacity, and a step > 0 that default and max are whole
// steps from min. A policy with a quantity that does not parse has no problems here (the config's
// quantity rule reports it).
import { Quantity } from '@plugboard/apimachinery';
import type { CapacityRequestPolicy } from './api-types.js';

/** CapacityRequestPolicyDiscreteMaxOptions: at most this many validValues. */
export const REQUEST_POLICY_MAX_VALID_VALUES = 10;

const INT64_MAX = 9_223_372_036_854_775_807n;

export interface PolicyProblem {
  /** Below the policy (`['validRange', 'step']`); empty for the policy itself. */
  path: (string | number)[];
  message: string;
}

/** Whether every string parses as a resource.Quantity. */
export function allQuantities(values: readonly (string | undefined)[]): boolean {
  return values.every((v) => {
    if (v === undefined) return true;
    try {
      Quantity.parse(v);
      return true;
    } catch {
      return false;
    }
  });
}

/** What the API server would refuse in `policy` on a capacity of `capacity`; empty if nothing. */
export function requestPolicyProblems(capacity: string, policy: CapacityRequestPolicy): PolicyProblem[] {
  const { validRange: r, validValues: vs } = policy;
  if (!allQuantities([capacity, policy.default, r?.min, r?.max, r?.step, ...(vs ?? [])])) return [];
  const max = Quantity.parse(capacity);
  const problems: PolicyProblem[] = [];
  const problem = (path: (string | number)[], message: string) => problems.push({ path, message });
  const def = policy.default === undefined ? undefined : Quantity.parse(policy.default);
  const values = policy.validValues;
  const range = policy.validRange;
  if (values !== undefined && range !== undefined) {
    problem(
      [],
      'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time',
    );
    return problems;
  }
  if (values !== undefined) {
    if (def === undefined) return [{ path: ['default'], message: 'required when validValues is defined' }];
    const parsed = values.map((v) => Quantity.parse(v));
    parsed.forEach((q, i) => {
      if (i > 0 && parsed[i - 1]!.cmp(q) > 0)
        problem(['validValues', i], 'values must be sorted in ascending order');
      if (parsed.findIndex((p) => p.cmp(q) === 0) < i) problem(['validValues', i], `duplicates ${values[i]}`);
      if (q.cmp(max) > 0) problem(['validValues', i], `option is larger than capacity value: ${capacity}`);
    });
    if (!parsed.some((q) => q.cmp(def) === 0))
      problem(['default'], `${policy.default} is not one of validValues`);
    return problems;
  }
  if (range !== undefined) {
    if (def === undefined) return [{ path: ['default'], message: 'required when validRange is defined' }];
    const min = Quantity.parse(range.min);
    const top = range.max === undefined ? undefined : Quantity.parse(range.max);
    const step = range.step === undefined ? undefined : Quantity.parse(range.step);
    if (min.cmp(max) > 0) problem(['validRange', 'min'], `min is larger than capacity value: ${capacity}`);
    if (def.cmp(min) < 0) problem(['default'], `default is less than min: ${range.min}`);
    if (top !== undefined) {
      if (min.cmp(top) > 0) problem(['validRange', 'max'], `min is larger than max: ${range.max}`);
      if (top.cmp(max) > 0) problem(['validRange', 'max'], `max is larger than capacity value: ${capacity}`);
      if (def.cmp(top) > 0) problem(['default'], `default is more than max: ${range.max}`);
    }
    if (step !== undefined) {
      if (step.sign() <= 0) {
        problem(['validRange', 'step'], 'must be greater than zero');
        return problems;
      }
      if (min.add(step).cmp(max) > 0)
        problem(['validRange', 'step'], `one step from min is larger than capacity value: ${capacity}`);
      // Whole units unless a value is fractional (then thousandths, as with DRAFractionalCapacityRange).
      const all = [def, min, step, ...(top ? [top] : [])];
      const milli = all.some((q) => q.milliValue() % 1000n !== 0n);
      const units = (q: Quantity) => (milli ? q.milliValue() : q.value());
      if (all.some((q) => units(q) > INT64_MAX)) {
        problem(['validRange'], `values must not be larger than ${INT64_MAX}`);
        return problems;
      }
      const offStep = (q: Quantity) => (units(q) - units(min)) % units(step) !== 0n;
      const multiple = `is not a multiple of the step ${range.step} from min ${range.min}`;
      if (offStep(def)) problem(['default'], `${policy.default} ${multiple}`);
      if (top !== undefined && offStep(top)) problem(['validRange', 'max'], `${range.max} ${multiple}`);
    }
    return problems;
  }
  // Upstream leaves a lone default unchecked; a default above the capacity could never be allocated.
  if (def !== undefined && def.cmp(max) > 0)
    problem(['default'], `default is larger than capacity value: ${capacity}`);
  return problems;
}
