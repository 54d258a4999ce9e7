// ToleratesTaint (k8s.io/dynamic-resource-allocation/resourceclaim/devicetoleration.go) and the
// allocator's taint check (taintPreventsAllocation in structured/internal/stable/allocator_stable.go).

import type { DeviceTaint, DeviceToleration } from '../types.js';

/**
 * Whether the toleration tolerates the taint: an empty effect matches every effect, an empty key
 * every key (operator Exists), operator Exists every value; Equal (or empty) compares the value.
 * tolerationSeconds plays no part in allocation.
 */
export function toleratesTaint(toleration: DeviceToleration, taint: DeviceTaint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  switch (toleration.operator ?? '') {
    case '':
    case 'Equal':
      return (toleration.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/** Only the known effects NoSchedule and NoExecute keep a device from being allocated; None and unknown ones don't. */
export function taintPreventsAllocation(
  taints: readonly DeviceTaint[] | undefined,
  tolerations: readonly DeviceToleration[] | undefined,
): boolean {
  for (const taint of taints ?? []) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    if (!(tolerations ?? []).some((t) => toleratesTaint(t, taint))) return true;
  }
  return false;
}
