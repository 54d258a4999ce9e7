// History points for tests: a DRA driver's closed bucket of 8 published devices, 2 allocated.
import type { DraDriverPoint } from '@plugboard/api';

/** A bucket ending with `usable` devices usable (the rest unhealthy); `changes` sets the extremes. */
export function draPoint(
  t: number,
  usable: number,
  changes: Partial<DraDriverPoint> = {},
  step = 10_000,
): DraDriverPoint {
  return {
    t,
    step,
    published: 8,
    usable,
    allocated: 2,
    free: usable - 2,
    unhealthy: 8 - usable,
    tainted: 0,
    minUsable: usable,
    maxUnhealthy: 8 - usable,
    maxTainted: 0,
    ...changes,
  };
}
