// DeviceTaintRules applied to ResourceSlices: applyPatches in
// k8s.io/dynamic-resource-allocation/resourceslice/tracker/tracker.go, which the scheduler reads
// through ListWithDeviceTaintRules. A rule's taint is appended to every device its selector matches:
// driver, pool and device name, each only when set. As in the tracker, a rule without a
// deviceSelector matches every device (the API type's comment says "no devices"; the code wins).
// deviceClassName and CEL selectors were tombstoned in 1.35 and are not part of the selector.

import type { DeviceTaint, DeviceTaintRule, ResourceSlice } from '../types.js';

/** The slices with the rules' taints added; slices no rule touches are returned as they are. */
export function applyDeviceTaintRules(
  slices: readonly ResourceSlice[],
  rules: readonly DeviceTaintRule[],
): ResourceSlice[] {
  if (rules.length === 0) return [...slices];
  return slices.map((slice) => {
    let patched: ResourceSlice | undefined;
    for (const rule of rules) {
      const selector = rule.spec.deviceSelector;
      if (selector?.driver !== undefined && selector.driver !== slice.spec.driver) continue;
      if (selector?.pool !== undefined && selector.pool !== slice.spec.pool.name) continue;
      (slice.spec.devices ?? []).forEach((device, index) => {
        if (selector?.device !== undefined && selector.device !== device.name) return;
        const taint: DeviceTaint = {
          key: rule.spec.taint.key,
          effect: rule.spec.taint.effect,
          ...(rule.spec.taint.value !== undefined ? { value: rule.spec.taint.value } : {}),
          ...(rule.spec.taint.timeAdded !== undefined ? { timeAdded: rule.spec.taint.timeAdded } : {}),
        };
        patched ??= { ...slice, spec: { ...slice.spec, devices: [...(slice.spec.devices ?? [])] } };
        const devices = patched.spec.devices ?? [];
        const current = devices[index] ?? device;
        devices[index] = { ...current, taints: [...(current.taints ?? []), taint] };
      });
    }
    return patched ?? slice;
  });
}
