// resource.k8s.io/v1 (k8s.io/api/resource/v1/types.go, 1.37) in its JSON wire form: what the API
// server stores and serves and what `kubectl get -o json` shows — the one definition the DRA driver
// (@plugboard/plugin), kubelet-sim's API slice and scheduler, and the gateway's informers share.
// Structural types over the JSON: a field nobody here reads is not typed, and an object keeps its
// other fields untouched. Everything the API server may leave out is optional.
import type { Condition, ObjectMeta } from '@plugboard/apimachinery';
import type { NodeSelector } from '../../core/v1/types.js';

export const GROUP_VERSION = 'resource.k8s.io/v1';

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

/** A qualified name: `<domain>/<id>`, or `<id>` in the driver's own domain. */
export type QualifiedName = string;

/** Exactly one value is set; the list forms are the alpha DRAListTypeAttributes (KEP-5491). */
export interface DeviceAttribute {
  int?: number | string;
  bool?: boolean;
  string?: string;
  version?: string;
  ints?: (number | string)[];
  bools?: boolean[];
  strings?: string[];
  versions?: string[];
}

export interface CapacityRequestPolicy {
  default?: string;
  validRange?: { min: string; max?: string; step?: string };
  validValues?: string[];
}

export interface DeviceCapacity {
  /** A resource.Quantity in its JSON form (a string, or a number). */
  value: string | number;
  /** How much one allocation consumes when the device allows multiple allocations (consumable capacity). */
  requestPolicy?: CapacityRequestPolicy;
}

export type DeviceTaintEffect = 'None' | 'NoSchedule' | 'NoExecute';

export interface DeviceTaint {
  key: string;
  value?: string;
  effect: DeviceTaintEffect;
  timeAdded?: string;
}

export interface Counter {
  value: string | number;
}

export interface DeviceCounterConsumption {
  counterSet: string;
  counters?: Record<string, Counter>;
}

export interface Device {
  name: string;
  attributes?: Record<QualifiedName, DeviceAttribute>;
  capacity?: Record<QualifiedName, DeviceCapacity>;
  consumesCounters?: DeviceCounterConsumption[];
  nodeName?: string;
  nodeSelector?: NodeSelector;
  allNodes?: boolean;
  taints?: DeviceTaint[];
  bindsToNode?: boolean;
  bindingConditions?: string[];
  bindingFailureConditions?: string[];
  allowMultipleAllocations?: boolean;
}

export interface CounterSet {
  name: string;
  counters?: Record<string, Counter>;
}

export interface ResourcePool {
  name: string;
  generation: number;
  resourceSliceCount: number;
}

export interface ResourceSlice {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: {
    driver: string;
    pool: ResourcePool;
    nodeName?: string;
    nodeSelector?: NodeSelector;
    allNodes?: boolean;
    perDeviceNodeSelection?: boolean;
    devices?: Device[];
    sharedCounters?: CounterSet[];
  };
}

export interface CELDeviceSelector {
  expression: string;
}

export interface DeviceSelector {
  cel?: CELDeviceSelector;
}

export type DeviceTolerationOperator = 'Exists' | 'Equal' | (string & {});

export interface DeviceToleration {
  key?: string;
  operator?: DeviceTolerationOperator;
  value?: string;
  effect?: DeviceTaintEffect;
  tolerationSeconds?: number;
}

export type DeviceAllocationMode = 'ExactCount' | 'All';

export interface CapacityRequirements {
  requests?: Record<QualifiedName, string | number>;
}

export interface ExactDeviceRequest {
  deviceClassName: string;
  selectors?: DeviceSelector[];
  allocationMode?: DeviceAllocationMode;
  count?: number;
  adminAccess?: boolean;
  tolerations?: DeviceToleration[];
  capacity?: CapacityRequirements;
}

export interface DeviceSubRequest {
  name: string;
  deviceClassName: string;
  selectors?: DeviceSelector[];
  allocationMode?: DeviceAllocationMode;
  count?: number;
  tolerations?: DeviceToleration[];
  capacity?: CapacityRequirements;
}

export interface DeviceRequest {
  name: string;
  exactly?: ExactDeviceRequest;
  firstAvailable?: DeviceSubRequest[];
}

export interface DeviceConstraint {
  requests?: string[];
  matchAttribute?: string;
  /** Alpha (incubating/experimental allocators only): refused by the stable allocator. */
  distinctAttribute?: string;
}

export interface OpaqueDeviceConfiguration {
  driver: string;
  parameters: unknown;
}

export interface DeviceConfiguration {
  opaque?: OpaqueDeviceConfiguration;
}

export interface DeviceClaimConfiguration extends DeviceConfiguration {
  requests?: string[];
}

export interface DeviceClaim {
  requests?: DeviceRequest[];
  constraints?: DeviceConstraint[];
  config?: DeviceClaimConfiguration[];
}

export interface ResourceClaimSpec {
  devices: DeviceClaim;
}

export interface DeviceRequestAllocationResult {
  request: string;
  driver: string;
  pool: string;
  device: string;
  adminAccess?: boolean;
  tolerations?: DeviceToleration[];
  /** Set for an allocation of a device with allowMultipleAllocations (consumable capacity). */
  shareID?: string;
  /** What this allocation consumes of the shared device's capacities (canonical quantities). */
  consumedCapacity?: Record<QualifiedName, string>;
}

export type AllocationConfigSource = 'FromClass' | 'FromClaim';

export interface DeviceAllocationConfiguration extends DeviceConfiguration {
  source: AllocationConfigSource;
  requests?: string[];
}

export interface AllocationResult {
  devices: {
    results?: DeviceRequestAllocationResult[];
    config?: DeviceAllocationConfiguration[];
  };
  nodeSelector?: NodeSelector;
}

export interface ResourceClaimConsumerReference {
  apiGroup?: string;
  resource: string;
  name: string;
  uid: string;
}

export interface ResourceClaim {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: ResourceClaimSpec;
  status?: {
    allocation?: AllocationResult;
    reservedFor?: ResourceClaimConsumerReference[];
    /** Written by the drivers (KEP-4817): one entry per allocated device a driver reports on. */
    devices?: AllocatedDeviceStatus[];
    [field: string]: unknown;
  };
}

/** AllocatedDeviceStatusMaxConditions. */
export const DEVICE_STATUS_MAX_CONDITIONS = 8;
/** AllocatedDeviceStatusDataMaxLength: bytes of `data` as JSON. */
export const DEVICE_STATUS_DATA_MAX_LENGTH = 10 * 1024;
/** NetworkDeviceDataMaxIPs, NetworkDeviceDataInterfaceNameMaxLength, NetworkDeviceDataHardwareAddressMaxLength. */
export const NETWORK_DATA_MAX_IPS = 16;
export const NETWORK_DATA_INTERFACE_NAME_MAX_LENGTH = 256;
export const NETWORK_DATA_HARDWARE_ADDRESS_MAX_LENGTH = 128;
/** The synthetic subresource authorizing writes of status.devices, per driver name (SubresourceDriver). */
export const SUBRESOURCE_DRIVER = 'driver';
/** Verb prefixes of that check (VerbPrefixAssociatedNode, VerbPrefixArbitraryNode): `associated-node:patch`. */
export const VERB_PREFIX_ASSOCIATED_NODE = 'associated-node:';
export const VERB_PREFIX_ARBITRARY_NODE = 'arbitrary-node:';

export interface NetworkDeviceData {
  interfaceName?: string;
  /** CIDRs (`10.9.8.1/24`), at most 16. */
  ips?: string[];
  hardwareAddress?: string;
}

/**
 * One entry of `status.devices` (a list map keyed by driver, device, pool and shareID): it must name
 * a device of the claim's allocation.
 */
export interface AllocatedDeviceStatus {
  driver: string;
  pool: string;
  device: string;
  shareID?: string;
  /** metav1.Condition list map by type, at most 8; `Ready` True once the device is configured. */
  conditions?: Condition[];
  /** Any JSON object, at most 10 KiB. */
  data?: Record<string, unknown>;
  networkData?: NetworkDeviceData;
}

export interface ResourceClaimTemplate {
  /** Named by whoever creates it (no generateName here). */
  metadata: ObjectMeta & { name: string };
  spec: {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec: ResourceClaimSpec;
  };
}

export interface DeviceClass {
  /** Named by whoever creates it (no generateName here). */
  metadata: ObjectMeta & { name: string };
  spec: {
    selectors?: DeviceSelector[];
    config?: DeviceConfiguration[];
    extendedResourceName?: string;
  };
}

/** `spec.deviceSelector` of a DeviceTaintRule (deviceClassName and selectors are tombstoned since 1.35). */
export interface DeviceTaintSelector {
  driver?: string;
  pool?: string;
  device?: string;
}

export interface DeviceTaintRule {
  /** Named by whoever creates it (no generateName here). */
  metadata: ObjectMeta & { name: string };
  spec: {
    deviceSelector?: DeviceTaintSelector;
    taint: DeviceTaint;
  };
  /** Written by the device taint eviction controller (kube-controller-manager). */
  status?: DeviceTaintRuleStatus;
}

export interface DeviceTaintRuleStatus {
  /** At most one of type `EvictionInProgress` (DEVICE_TAINT_CONDITION_EVICTION_IN_PROGRESS). */
  conditions?: Condition[];
}

/** resourceapi.DeviceTaintConditionEvictionInProgress */
export const DEVICE_TAINT_CONDITION_EVICTION_IN_PROGRESS = 'EvictionInProgress';
