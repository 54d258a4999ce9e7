// Dynamic Resource Allocation in the node model: the `dra` section of the snapshot (GET
// /api/v1/node, the stream) and of the summary, beside the device-plugin `resources`/`devices`.
// Pure types, no runtime code; documented field by field in docs/API.md ("DRA").
//
// DRA has no "allocatable" number: the scheduler allocates devices one by one from the node's
// ResourceSlices. The counts say what is true instead — devices published, those a new claim can get
// (untainted and healthy), allocated, unhealthy, tainted — rather than forcing DRA into the
// extended-resource shape.
//
// Keys: a device is `${driver}/${pool}/${device}` (the ID the kubelet's allocatedResourcesStatus
// and PodResources use), a claim `${namespace}/${name}`.

import type { DeviceFaultPhase, Timestamp } from './common.ts';

/** DRA health (k8s.io/kubelet/pkg/apis/dra-health): a driver may also say it does not know. */
export type DraHealth = 'Healthy' | 'Unhealthy' | 'Unknown';

/** resource.k8s.io/v1 DeviceTaintEffect. */
export type DraTaintEffect = 'NoSchedule' | 'NoExecute' | 'None';

/** One typed attribute value, as in a ResourceSlice (exactly one key set). */
export type DraAttributeValue =
  { int: number } | { bool: boolean } | { string: string } | { version: string };

export interface DraState {
  /** Keyed by driver name, e.g. "gpu.plugboard.example". */
  drivers: Record<string, DraDriverState>;
  /** Keyed by `${driver}/${pool}/${device}`. */
  devices: Record<string, DraDeviceState>;
  /**
   * Keyed by `${namespace}/${name}`: the claims allocated on this node's devices or referenced by its
   * pods — the pods bound here, and unscheduled pods that can only go here (nominated here, or their
   * node selector / required node affinity names only this node), whose claims may be pending.
   */
  claims: Record<string, DraClaimState>;
}

export interface DraDeviceCounts {
  /** Devices in this node's ResourceSlices, as the API server has them. */
  published: number;
  /**
   * Published, healthy as the kubelet was last told, and without a NoSchedule/NoExecute taint: the
   * devices a new claim can be given (allocated ones included).
   */
  usable: number;
  /** In a claim's `status.allocation`. */
  allocated: number;
  /** Published and neither allocated nor unusable: what a new claim can get now. */
  free: number;
  unhealthy: number;
  /** Carrying at least one NoSchedule/NoExecute taint (from the ResourceSlice or a DeviceTaintRule). */
  tainted: number;
}

export type DraRegistrationPhase = 'starting' | 'registering' | 'registered' | 'failed' | 'stopped';

export interface DraDriverState {
  name: string;
  /**
   * Whether this gateway runs the driver (from its config's `dra:` list): then faults on its devices
   * go through it, and `registration`, `healthStreams` and `publication` are known. false: a driver
   * seen only through its ResourceSlices.
   */
  inProcess: boolean;
  registration: {
    phase: DraRegistrationPhase;
    /** When the kubelet last confirmed the registration (NotifyRegistrationStatus). */
    registeredAt: Timestamp | null;
    error: string | null;
  } | null;
  /** Open NodeWatchResources streams: whether the kubelet receives this driver's health. */
  healthStreams: number | null;
  /** The driver's ResourceSlice publication; null when not in-process. */
  publication: {
    generation: number;
    slices: number;
    lastPublishedAt: Timestamp | null;
    error: string | null;
  } | null;
  /** Keyed by pool name. */
  pools: Record<string, DraPoolState>;
  counts: DraDeviceCounts;
}

export interface DraPoolState {
  name: string;
  /** `spec.pool.generation` of the newest slices; only slices of this generation count. */
  generation: number;
  /** ResourceSlice names of that generation. */
  slices: string[];
  deviceKeys: string[];
  /**
   * The pool's shared counter sets (partitionable devices, KEP-4815), keyed by name: from the pool's
   * counter-only ResourceSlices, with what its allocated partitions use. Absent when the pool
   * declares none (and from gateways before partitions).
   */
  counterSets?: Record<string, DraCounterSetState>;
}

/**
 * A counter set as the pool's ResourceSlice declares it (`spec.sharedCounters[]`), usually one
 * physical device whose partitions (devices with `consumesCounters`) share it. The API reports no
 * usage of a counter set: `used` is summed here from the allocated partitions' `consumesCounters`.
 */
export interface DraCounterSetState {
  name: string;
  /** The ResourceSlice declaring it. */
  slice: string;
  /** Keyed by counter name: quantities in canonical form. */
  counters: Record<string, DraCounterUsage>;
  /** The pool's devices consuming it (its partitions), in slice order. */
  deviceKeys: string[];
}

/** One counter (or one capacity of a shared device): what there is, what allocations take, what is left. */
export interface DraCounterUsage {
  /** As published: the counter set's counter, or the device's capacity. */
  capacity: string;
  /** Summed over the allocations (a partition counts once, however many claims share it). */
  used: string;
  /** capacity − used; negative when the allocations overcommit it (e.g. the counters shrank since). */
  left: string;
}

/** A device's `consumesCounters[]` entry: what it takes of a counter set of its pool. */
export interface DraCounterConsumption {
  counterSet: string;
  /** Counter name → amount (canonical quantities). */
  counters: Record<string, string>;
}

/** resource.k8s.io/v1 CapacityRequestPolicy: how much one allocation of a shared device takes. */
export interface DraCapacityRequestPolicy {
  default?: string;
  validRange?: { min: string; max?: string; step?: string };
  validValues?: string[];
}

export interface DraDeviceState {
  /** `${driver}/${pool}/${device}` */
  key: string;
  driver: string;
  pool: string;
  /** The device's name in the ResourceSlice. */
  name: string;
  /** The device source's ID (what faults name); null for a driver this gateway does not run. */
  sourceId: string | null;
  attributes: Record<string, DraAttributeValue>;
  /** Capacity quantities by name, e.g. { memory: "80Gi" }. */
  capacity: Record<string, string>;
  /** From the `resource.kubernetes.io/numaNode` attribute (or the device source); [] when none. */
  numaNodes: number[];
  /** Whether the API server's ResourceSlices hold the device (false: the driver has it, not published yet). */
  published: boolean;
  /**
   * The driver's own view of the device. For a driver this gateway does not run: the worst health
   * the pods' allocatedResourcesStatus reports for it, else 'Unknown'.
   */
  health: DraHealth;
  /** Why it is unhealthy (or why it healed); null when it never changed or is not known. */
  reason: string | null;
  /** Time of the last health transition (a driver not run here: when its ResourceSlice was created). */
  since: Timestamp;
  /** The health the kubelet was last sent on NodeWatchResources; null while no stream is open. */
  kubeletHealth: DraHealth | null;
  taints: DraTaintView[];
  /** A simulated fault holds the device: 'active' once the kubelet was told, 'pending' until then. */
  fault: DeviceFaultPhase | null;
  allocations: DraDeviceAllocation[];
  /** `consumesCounters` as published: the device is a partition of a counter set. Absent when none. */
  consumesCounters?: DraCounterConsumption[];
  /**
   * `allowMultipleAllocations` (consumable capacity, KEP-5075): several claims share the device, each
   * taking part of its capacity. Absent when false.
   */
  allowMultipleAllocations?: true;
  /** The capacities' `requestPolicy` as published, by capacity name. Absent when none has one. */
  capacityRequestPolicy?: Record<string, DraCapacityRequestPolicy>;
  /**
   * A shared device's capacity by name with what its allocations consume (their `consumedCapacity`,
   * summed) and what is left. Present when `allowMultipleAllocations`.
   */
  sharedCapacity?: Record<string, DraCounterUsage>;
}

export interface DraTaintView {
  key: string;
  value: string | null;
  effect: DraTaintEffect;
  timeAdded: Timestamp | null;
  /**
   * Where it comes from: "ResourceSlice", "DeviceTaintRule <name>", or "ResourceSlice (not published
   * yet)" for a taint an in-process driver is about to publish.
   */
  source: string;
}

export interface DraDeviceAllocation {
  /** Claim key `${namespace}/${name}`. */
  claim: string;
  request: string;
  adminAccess: boolean;
  /** Pod keys in the claim's `reservedFor`. */
  pods: string[];
  /** The allocation result's `shareID` (a shared device: which share the claim holds). Absent when unset. */
  shareID?: string;
  /** The allocation result's `consumedCapacity` (canonical quantities). Absent when unset. */
  consumedCapacity?: Record<string, string>;
  /** What the driver reports for the device in the claim's `status.devices`. Absent when it wrote none. */
  status?: DraDeviceStatus;
}

/**
 * A device's entry in its claim's `status.devices` (KEP-4817), as observed: written by the device's
 * driver after it prepared the claim (a `Ready` condition, driver data, network data).
 */
export interface DraDeviceStatus {
  conditions: DraDeviceCondition[];
  /** The driver's `data` (any JSON object); null when unset. */
  data: Record<string, unknown> | null;
  networkData: { interfaceName?: string; ips?: string[]; hardwareAddress?: string } | null;
}

/** metav1.Condition as the driver wrote it. */
export interface DraDeviceCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: Timestamp | null;
}

/**
 * - 'pending': no `status.allocation` yet (see `pendingReason`);
 * - 'allocated': allocated, reserved for no pod;
 * - 'reserved': reserved for a pod, not prepared by the kubelet yet;
 * - 'prepared': the kubelet prepared it (PodResources lists it for a container).
 */
export type DraClaimPhase = 'pending' | 'allocated' | 'reserved' | 'prepared';

export interface DraClaimState {
  /** `${namespace}/${name}` */
  key: string;
  namespace: string;
  name: string;
  uid: string;
  /** The pod and its `spec.resourceClaims[].name` this claim was generated for from a template. */
  owner: { pod: string; podClaimName: string } | null;
  requests: DraClaimRequest[];
  phase: DraClaimPhase;
  devices: DraClaimDevice[];
  /** Pod keys in `status.reservedFor`. */
  reservedFor: string[];
  /** Worst health of its devices as the pods' `allocatedResourcesStatus` report it; null when unreported. */
  health: DraHealth | null;
  /** Why it is not allocated: the scheduler's message on its pod's PodScheduled condition; null otherwise. */
  pendingReason: string | null;
  /** `metadata.deletionTimestamp` is set (e.g. its pod was evicted by a taint). */
  deleting: boolean;
  /**
   * The scheduler's special claim for a pod's extended resources backed by DRA (annotated
   * `resource.kubernetes.io/extended-resource-claim: "true"`, KEP-5004). Absent otherwise.
   */
  extendedResources?: true;
}

export interface DraClaimRequest {
  name: string;
  /** The request's device class; for a `firstAvailable` request, null and `firstAvailable` lists them. */
  deviceClassName: string | null;
  allocationMode: 'ExactCount' | 'All';
  count: number;
  /** CEL expressions of the request's selectors. */
  selectors: string[];
  firstAvailable: {
    name: string;
    deviceClassName: string;
    allocationMode: 'ExactCount' | 'All';
    count: number;
    selectors: string[];
  }[];
  adminAccess: boolean;
}

export interface DraClaimDevice {
  /** The request (`request` or `request/subrequest`) the device was allocated for. */
  request: string;
  driver: string;
  pool: string;
  device: string;
  /** `${driver}/${pool}/${device}` */
  deviceKey: string;
  adminAccess: boolean;
  /** The result's `shareID` on a shared device. Absent when unset. */
  shareID?: string;
  /** The result's `consumedCapacity`. Absent when unset. */
  consumedCapacity?: Record<string, string>;
  /** The claim's `status.devices` entry of this device. Absent when its driver wrote none. */
  status?: DraDeviceStatus;
}

/** A pod's reference to a claim (`spec.resourceClaims[]`) and the claim it resolved to. */
export interface PodClaimRef {
  /** `spec.resourceClaims[].name` */
  name: string;
  /** The claim key, once known (null while a template's claim is not created yet). */
  claim: string | null;
  /** Whether it came from a ResourceClaimTemplate. */
  fromTemplate: boolean;
}

/** The DRA part of the summary (cluster views): counts only. */
export interface DraSummary {
  /** Keyed by driver name. */
  drivers: Record<string, DraDeviceCounts>;
  /** Keyed by DeviceClass name: devices allocated for requests of that class, and claims pending on it. */
  deviceClasses: Record<string, { allocated: number; pendingClaims: number }>;
  /** Keys of this node's pods' claims that are pending. */
  pendingClaims: string[];
}
