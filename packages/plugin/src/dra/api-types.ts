// The resource.k8s.io/v1 types a DRA driver reads and writes, from their one definition
// (@plugboard/k8s-api, k8s.io/api/resource/v1/types.go), under the names the driver's modules use,
// plus the standard device attributes of k8s.io/dynamic-resource-allocation/deviceattribute. The
// driver works in the JSON wire form; kube-api.ts alone converts it for @kubernetes/client-node.

export {
  ATTRIBUTE_MAX_VALUE_LENGTH,
  DRIVER_NAME_MAX_LENGTH,
  GROUP_VERSION as RESOURCE_API_VERSION,
  MAX_ATTRIBUTES_AND_CAPACITIES,
  SLICE_MAX_DEVICES,
  SLICE_MAX_DEVICES_WITH_TAINTS,
  SLICE_SELECTOR_DRIVER,
  SLICE_SELECTOR_NODE_NAME,
  type AllocatedDeviceStatus,
  type CapacityRequestPolicy,
  type Counter,
  type CounterSet,
  type Device as SliceDevice,
  type DeviceAttribute,
  type DeviceCapacity,
  type DeviceRequestAllocationResult,
  type DeviceTaint,
  type DeviceTaintEffect,
  type DeviceToleration,
  type NetworkDeviceData,
  type NodeSelector,
  type NodeSelectorRequirement,
  type ResourcePool,
  type ResourceSlice,
} from '@plugboard/k8s-api';
export type { OwnerReference } from '@plugboard/apimachinery';
import type { ResourceClaim as ServedClaim } from '@plugboard/k8s-api';

/**
 * A ResourceClaim as the driver reads it: named, namespaced, with a uid (as the API server serves
 * it); the driver reads only the allocation, so the spec may be left out.
 */
export type ResourceClaim = Omit<ServedClaim, 'metadata' | 'spec'> & {
  metadata: ServedClaim['metadata'] & { name: string; namespace: string; uid: string };
  spec?: ServedClaim['spec'];
};

/**
 * The standard NUMA node attribute (KEP-6072, `resource.kubernetes.io/numaNode`, stable in 1.37;
 * deviceattribute.StandardDeviceAttributeNUMANode). Its scalar form is an int.
 */
export const STANDARD_ATTRIBUTE_NUMA_NODE = 'resource.kubernetes.io/numaNode';
/** deviceattribute.StandardDeviceAttributePCIBusID: a PCI address in extended BDF notation. */
export const STANDARD_ATTRIBUTE_PCI_BUS_ID = 'resource.kubernetes.io/pciBusID';
