// The resource.k8s.io/v1 and core/v1 fields the scheduler's DRA allocation reads and writes, as the
// plain JSON objects the API serves (k8s.io/api resource/v1/types.go and core/v1/types.go, 1.37).
// Only what the allocator, the CEL environment and the ResourceClaim controller use is typed; every
// object keeps its other fields untouched because these are structural types over the JSON.

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  deletionTimestamp?: string;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

// --- core/v1 -------------------------------------------------------------------------------------

export type NodeSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';

export interface NodeSelectorRequirement {
  key: string;
  operator: NodeSelectorOperator;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface NodeSelector {
  nodeSelectorTerms: NodeSelectorTerm[];
}

/** `pod.spec.resourceClaims[]`: exactly one of the two sources is set. */
export interface PodResourceClaim {
  name: string;
  resourceClaimName?: string;
  resourceClaimTemplateName?: string;
}

/** `pod.status.resourceClaimStatuses[]`: the claim generated for a template (unset: none needed). */
export interface PodResourceClaimStatus {
  name: string;
  resourceClaimName?: string;
}

export interface Pod {
  metadata: ObjectMeta & { name: string };
  spec: { resourceClaims?: PodResourceClaim[]; nodeName?: string; [field: string]: unknown };
  status?: { resourceClaimStatuses?: PodResourceClaimStatus[]; [field: string]: unknown };
}

// --- resource.k8s.io/v1 --------------------------------------------------------------------------

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

export interface DeviceCapacity {
  /** A resource.Quantity in its JSON form (a string, or a number). */
  value: string | number;
  /** Consumable capacity (DRAConsumableCapacity): not supported by the stable allocator. */
  requestPolicy?: unknown;
}

export type DeviceTaintEffect = 'None' | 'NoSchedule' | 'NoExecute' | (string & {});

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
  metadata: ObjectMeta & { name: string };
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

export type DeviceAllocationMode = 'ExactCount' | 'All' | (string & {});

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
  metadata: ObjectMeta & { name?: string };
  spec: ResourceClaimSpec;
  status?: {
    allocation?: AllocationResult;
    reservedFor?: ResourceClaimConsumerReference[];
    [field: string]: unknown;
  };
}

export interface ResourceClaimTemplate {
  metadata: ObjectMeta & { name: string };
  spec: {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec: ResourceClaimSpec;
  };
}

export interface DeviceClass {
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
  metadata: ObjectMeta & { name: string };
  spec: {
    deviceSelector?: DeviceTaintSelector;
    taint: DeviceTaint;
  };
}
