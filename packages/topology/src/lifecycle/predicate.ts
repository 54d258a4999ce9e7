// The kubelet's node-resources predicate (pkg/kubelet/lifecycle/predicate.go, GeneralPredicates
// with the scheduler's noderesources fit; release-1.33), run after the resource managers admitted
// the pod: pods, cpu, memory and extended resources requested by it plus those of the other active
// pods must fit the node's allocatable, else reason OutOf<resource>.

import type { DeviceHintProvider } from '../devicemanager/types.js';
import { TopologyError } from '../errors.js';
import { effectiveRequests, type PodRequests } from '../pod/requests.js';

/** Throws OutOf<resource> when `spec` does not fit next to the `others` (the other active pods). */
export function checkNodeResources(
  spec: PodRequests,
  others: readonly PodRequests[],
  allocatable: ReadonlyMap<string, number>,
  devices: Pick<DeviceHintProvider, 'isDevicePluginResource' | 'allocatedDevices'>,
): void {
  const requested = effectiveRequests(spec);
  if (others.length + 1 > (allocatable.get('pods') ?? Infinity)) {
    throw outOf('pods', 1, others.length, allocatable.get('pods') ?? 0);
  }
  for (const [resource, amount] of requested) {
    if (amount === 0) continue;
    const capacity = allocatable.get(resource) ?? 0;
    const used = others.reduce((sum, p) => sum + (effectiveRequests(p).get(resource) ?? 0), 0);
    // Devices already handed out count as allocatable even if their plugin is gone (sanitizeNodeAllocatable).
    const floor = devices.isDevicePluginResource(resource) ? devices.allocatedDevices(resource).size : 0;
    if (amount + used > Math.max(capacity, floor))
      throw outOf(resource, amount, used, Math.max(capacity, floor));
  }
}

function outOf(resource: string, requested: number, used: number, capacity: number): TopologyError {
  return new TopologyError(
    'OutOfResource',
    `Node didn't have enough resource: ${resource}, requested: ${requested}, used: ${used}, capacity: ${capacity}`,
    { reason: `OutOf${resource}` },
  );
}
