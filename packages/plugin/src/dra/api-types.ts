// The parts of resource.k8s.io/v1 (k8s.io/api/resource/v1/types.go) a DRA driver reads and writes,
// in their JSON wire form: what the API server stores and what `kubectl get -o json` shows. The
// driver works in these terms; kube-api.ts alone converts them for @kubernetes/client-node.

export const RESOURCE_API_VERSION = 'resource.k8s.io/v1';

/** ResourceSliceSelectorNodeName / ResourceSliceSelectorDriver: the field selectors of ResourceSlices. */
export const SLICE_SELECTOR_NODE_NAME = 'spec.nodeName';
export const SLICE_SELECTOR_DRIVER = 'spec.driver';

/** ResourceSliceMaxDevices, and the limit when any device of the slice has taints (or counters). */
export const SLICE_MAX_DEVICES = 128;
export const SLICE_MAX_DEVICES_WITH_TAINTS = 64;
/** ResourceSliceMaxAttributesAndCapacitiesPerDevice. */
export const MAX_ATTRIBUTES_AND_CAPACITIES = 32;
/** DeviceAttributeMaxValueLength: string and version attribute values. */
export const ATTRIBUTE_MAX_VALUE_LENGTH = 64;
/** DriverNameMaxLength. */
export const DRIVER_NAME_MAX_LENGTH = 63;

/**
 * The standard NUMA node attribute (KEP-6072, `resource.kubernetes.io/numaNode`, stable in 1.37;
 * deviceattribute.StandardDeviceAttributeNUMANode). Its scalar form is an int.
 */
export const STANDARD_ATTRIBUTE_NUMA_NODE = 'resource.kubernetes.io/numaNode';
/** deviceattribute.StandardDeviceAttributePCIBusID: a PCI address in extended BDF notation. */
export const STANDARD_ATTRIBUTE_PCI_BUS_ID = 'resource.kubernetes.io/pciBusID';

/** DeviceAttribute: exactly one field is set. */
export type DeviceAttribute = { int: number } | { bool: boolean } | { string: string } | { version: string };

export interface CapacityRequestPolicy {
  default?: string;
  validRange?: { min: string; max?: string; step?: string };
}

export interface DeviceCapacity {
  /** A resource.Quantity, e.g. "80Gi". */
  value: string;
  /** How much one allocation consumes when the device allows multiple allocations. */
  requestPolicy?: CapacityRequestPolicy;
}

export type DeviceTaintEffect = 'NoSchedule' | 'NoExecute' | 'None';

export interface DeviceTaint {
  key: string;
  value?: string;
  effect: DeviceTaintEffect;
  /** RFC 3339, whole seconds (what the API server stores). */
  timeAdded?: string;
}

/** ResourceSlice spec.devices[] (the fields this framework publishes). */
export interface SliceDevice {
  name: string;
  attributes?: Record<string, DeviceAttribute>;
  capacity?: Record<string, DeviceCapacity>;
  taints?: DeviceTaint[];
  allowMultipleAllocations?: boolean;
}

export interface ResourcePool {
  name: string;
  generation: number;
  resourceSliceCount: number;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

export interface ResourceSlice {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    generateName?: string;
    uid?: string;
    resourceVersion?: string;
    ownerReferences?: OwnerReference[];
  };
  spec: {
    driver: string;
    pool: ResourcePool;
    nodeName?: string;
    devices?: SliceDevice[];
  };
}

/** DeviceToleration (the fields a driver checks against its own taint). */
export interface DeviceToleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: DeviceTaintEffect;
}

/** status.allocation.devices.results[] */
export interface DeviceRequestAllocationResult {
  request: string;
  driver: string;
  pool: string;
  device: string;
  adminAccess?: boolean;
  tolerations?: DeviceToleration[];
  shareID?: string;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface NodeSelector {
  nodeSelectorTerms: {
    matchExpressions?: NodeSelectorRequirement[];
    matchFields?: NodeSelectorRequirement[];
  }[];
}

export interface ResourceClaim {
  metadata: { name: string; namespace: string; uid: string };
  status?: {
    allocation?: {
      devices?: { results?: DeviceRequestAllocationResult[] };
      nodeSelector?: NodeSelector;
    };
  };
}
