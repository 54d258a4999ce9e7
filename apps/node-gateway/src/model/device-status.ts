// A device's entry in its claim's `status.devices` (KEP-4817) as the dashboard shows it: the
// conditions, data and network data the device's driver wrote after preparing the claim. The entry
// is the one whose driver, pool, device and shareID (the list map's keys) are the allocation
// result's; none is "not reported" (absent in the model).
import type { DraDeviceStatus } from '@plugboard/api';
import type { AllocatedDeviceStatus, DeviceRequestAllocationResult, ResourceClaim } from '@plugboard/k8s-api';

const CONDITION_STATUSES = new Set(['True', 'False', 'Unknown']);

const sameDevice = (s: AllocatedDeviceStatus, r: DeviceRequestAllocationResult): boolean =>
  s.driver === r.driver &&
  s.pool === r.pool &&
  s.device === r.device &&
  (s.shareID ?? '') === (r.shareID ?? '');

/** The status the claim carries for one of its allocated devices, or undefined when none was written. */
export function claimDeviceStatus(
  claim: ResourceClaim,
  result: DeviceRequestAllocationResult,
): DraDeviceStatus | undefined {
  const entry = claim.status?.devices?.find((s) => sameDevice(s, result));
  if (!entry) return undefined;
  const data = entry.data;
  return {
    conditions: (entry.conditions ?? []).map((c) => ({
      type: c.type,
      status: CONDITION_STATUSES.has(c.status) ? c.status : 'Unknown',
      reason: c.reason ?? '',
      message: c.message ?? '',
      lastTransitionTime: c.lastTransitionTime || null,
    })),
    data: data !== null && typeof data === 'object' && !Array.isArray(data) ? { ...data } : null,
    networkData: entry.networkData
      ? {
          ...(entry.networkData.interfaceName ? { interfaceName: entry.networkData.interfaceName } : {}),
          ...(entry.networkData.ips?.length ? { ips: [...entry.networkData.ips] } : {}),
          ...(entry.networkData.hardwareAddress
            ? { hardwareAddress: entry.networkData.hardwareAddress }
            : {}),
        }
      : null,
  };
}
