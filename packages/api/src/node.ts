// The node model: the one snapshot type the gateway serves (GET /api/v1/node, the stream's
// snapshot message) and the dashboard and `kubectl plugboard` render. Documented field by field in
// docs/API.md. Pure types, no runtime code.
// JSON Patch paths in the stream address these objects, so keyed collections are objects
// (Record<id, …>) rather than arrays: a one-device change is one small `replace` op.

import type { AdmissionView } from './admission.ts';
import type { DeviceFaultPhase, Health, Timestamp } from './common.ts';
import type { DraState, DraSummary, DraTaintEffect, PodClaimRef } from './dra.ts';
import type { ExtendedResourceView } from './extended-resources.ts';

export type { AdmissionView, TopologyHintView } from './admission.ts';

export interface NodeSnapshot {
  /** Schema version of this document; bumped on incompatible changes. */
  schema: 1;
  nodeName: string;
  /** When the gateway last changed this snapshot. */
  updatedAt: Timestamp;
  gateway: GatewayInfo;
  /** Keyed by extended resource name, e.g. "plugboard.example/gpu". */
  resources: Record<string, ResourceState>;
  /** Keyed by `${resource}/${deviceId}` so IDs that repeat across resources stay distinct. */
  devices: Record<string, DeviceState>;
  numa: NumaTopology;
  /** Keyed by `${namespace}/${name}`. */
  pods: Record<string, PodState>;
  /** Keyed by fault ID. */
  faults: Record<string, FaultState>;
  /** Bounded ring of recent events, oldest first. */
  events: NodeEvent[];
  sources: SourcesState;
  /**
   * NUMA placement context: the host layout source (sysfs), the kubelet's Topology/CPU/Memory
   * Manager settings when known, and whether "try to place" is available. Absent from gateways
   * older than the NUMA placement feature.
   */
  topology?: NodeTopology;
  /**
   * Dynamic Resource Allocation: the node's DRA drivers, their devices (ResourceSlices, health,
   * taints) and the claims of its pods (docs/API.md, "DRA"). Absent from gateways older than DRA
   * support.
   */
  dra?: DraState;
  /**
   * Keyed by extended resource name: every name this node's Node status lists, a DeviceClass maps
   * explicitly, or a pod here asks for — whether a device plugin or a DRA driver serves it, and the
   * pods holding it each way (docs/API.md, "Extended resources by API"). Absent from older gateways.
   */
  extendedResources?: Record<string, ExtendedResourceView>;
}

export interface GatewayInfo {
  version: string;
  startedAt: Timestamp;
  faultsEnabled: boolean;
  /** Whether mutations need a bearer token (false only on loopback without auth). */
  authRequired: boolean;
  /** Whether active faults survive a gateway restart (false when the state dir is not writable). */
  persistence: { enabled: boolean; reason?: string };
}

export interface ResourceCounts {
  capacity: number;
  allocatable: number;
  allocated: number;
  free: number;
  healthy: number;
  unhealthy: number;
}

/**
 * Who serves a resource on this node (docs/API.md, "Who serves a resource"):
 * - 'plugin': this gateway's own device plugin (its config's `resources`);
 * - 'device-plugin': another device plugin on the node (NVIDIA's, AMD's, Intel's, …), observed: the
 *   kubelet listed its devices in PodResources (now, or earlier in this gateway's life);
 * - 'node-status': an extended resource only the Node's status names: PodResources never listed a
 *   device of it while this gateway watched (a device plugin whose devices are all unhealthy or gone,
 *   or a resource advertised by patching the Node status, which no kubelet manages).
 * DRA drivers' devices are not resources: they are in `snapshot.dra`.
 */
export type ResourceServedBy = 'plugin' | 'device-plugin' | 'node-status';

/**
 * A resource this gateway does not serve: what the kubelet shows of it, and in words what it does
 * not show. Only the kubelet's reports (PodResources, the Node status, pods'
 * `allocatedResourcesStatus`) feed it; nothing is inferred beyond the counts.
 */
export interface ObservedResourceView {
  /**
   * Devices the kubelet counts unhealthy: the Node's capacity − allocatable (the kubelet's device
   * manager reports all devices as capacity, healthy ones as allocatable). null without the Node.
   */
  unhealthy: number | null;
  /** How many unhealthy devices the model names (in `devices`): those a pod holds. */
  unhealthyNamed: number;
  /**
   * What the kubelet does not report, said plainly, e.g. "2 of 8 unhealthy — the kubelet does not
   * say which unless a pod holds them"; null when the view is complete.
   */
  note: string | null;
}

export interface ResourceState {
  name: string;
  /** Who serves it; absent from gateways older than observed resources (then: 'plugin'). */
  servedBy?: ResourceServedBy;
  /** Set for a resource this gateway does not serve (`servedBy` other than 'plugin'). */
  observed?: ObservedResourceView;
  /** As the kubelet sees it: plugin ListAndWatch + PodResources. */
  kubelet: ResourceCounts;
  /** As the API server's Node object reports it (null when the Kubernetes API is disabled or unseen). */
  apiServer: ApiServerView | null;
  registration: RegistrationState;
  /** Replicas per physical device when the resource is shared (1 when not). */
  replicas: number;
  /** Device keys (`${resource}/${id}`) belonging to this resource, in stable order. */
  deviceKeys: string[];
}

/** A resource in the API server's Node `status`. */
export interface ApiServerView {
  capacity: number;
  allocatable: number;
  /**
   * Since when the kubelet that reported these numbers no longer holds the plugin (the registration's
   * `waitingSince`): the API server keeps a Node's last status (until the node goes NotReady, and
   * the numbers even then), so they are the last report, not the present. null while current.
   */
  staleSince: Timestamp | null;
}

/**
 * `registered` holds only while the kubelet holds the plugin's ListAndWatch stream (or is about to
 * open it after Register); `waiting-for-kubelet`: it was registered, then the kubelet let go of it
 * (stream closed, kubelet.sock removed, no stream after Register), and it re-registers when the
 * kubelet is back.
 */
export type RegistrationPhase =
  'starting' | 'registering' | 'registered' | 'waiting-for-kubelet' | 'failed' | 'stopped';

export interface RegistrationState {
  phase: RegistrationPhase;
  registeredAt: Timestamp | null;
  /** When the kubelet stopped holding the registered plugin; null once registered again. */
  waitingSince: Timestamp | null;
  kubeletRestartsSeen: number;
  lastListAndWatchSend: Timestamp | null;
  /** Human-readable error of the last failed attempt. */
  error: string | null;
}

export interface DeviceState {
  /** `${resource}/${id}` */
  key: string;
  resource: string;
  id: string;
  /**
   * Who serves its resource (as `resources[resource].servedBy`); absent from older gateways. For an
   * observed device `health` is the kubelet's (healthy: in `GetAllocatableResources`; a holder's
   * `allocatedResourcesStatus` when it says more), `kubeletHealth` the same, `fault` always null.
   */
  servedBy?: ResourceServedBy;
  health: Health;
  /** Why it is unhealthy (or why it healed); null when never changed. */
  reason: string | null;
  /** Time of the last health transition. */
  since: Timestamp;
  numaNodes: number[];
  /** Physical device ID when this is a sharing replica (`<id>::<k>`), else null. */
  replicaOf: string | null;
  /**
   * The health the kubelet was last told on ListAndWatch, which is what it allocates by; null while
   * no ListAndWatch stream is open (the kubelet is down or has not connected yet). `health` is the
   * plugin's own view and leads this by one send.
   */
  kubeletHealth: Health | null;
  /**
   * A simulated fault holds this device: 'active' once the kubelet was told Unhealthy, 'pending'
   * until then (no stream open, or the list not sent yet). null when no fault holds it.
   */
  fault: DeviceFaultPhase | null;
  /** Whether a simulated fault holds this device and the kubelet was told so (`fault === 'active'`). */
  faulted: boolean;
  allocation: DeviceAllocation | null;
}

export interface DeviceAllocation {
  namespace: string;
  pod: string;
  container: string;
}

export interface NumaTopology {
  /** Keyed by NUMA node ID as a string ("0", "1", …); "none" holds devices with no NUMA affinity. */
  nodes: Record<string, NumaNodeState>;
}

export interface NumaNodeState {
  id: number | null;
  cpuIds: number[];
  /** Bytes of memory per type ("memory", "hugepages-2Mi", …) when known. */
  memory: Record<string, number>;
  deviceKeys: string[];
  /** Physical cores of this node's CPUs, SMT siblings together (from sysfs). */
  cpuCores?: number[][];
  /** CPUs the kubelet keeps for the system (not in PodResources' allocatable cpu_ids). */
  reservedCpuIds?: number[];
  /** The node's MemTotal from sysfs, bytes (null when unknown). */
  memoryTotalBytes?: number | null;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

export interface PodState {
  /** `${namespace}/${name}` */
  key: string;
  namespace: string;
  name: string;
  phase: PodPhase;
  /** The container-level reason that matters most (e.g. "CrashLoopBackOff"), else null. */
  reason: string | null;
  containers: ContainerState[];
  /**
   * True when any device the pod holds is unhealthy: the blast radius of a fault. Device-plugin
   * devices by the plugin's health; DRA devices of the pod's claims by the driver's health
   * (`dra.devices[key].health`) or the kubelet's `allocatedResourcesStatus` for a claim.
   */
  affectedByUnhealthyDevice: boolean;
  /** Whether all NUMA-bound resources of the pod sit on one NUMA node. */
  numaAlignment: NumaAlignment;
  /** The Topology Manager context of the pod: policy, the kubelet's decision, plugin reasons. */
  topology?: PodTopology;
  /** `spec.resourceClaims`: the DRA claims of the pod (details in `dra.claims`). */
  claims?: PodClaimRef[];
}

export interface NumaAlignment {
  verdict: 'aligned' | 'spread' | 'no-preference';
  numaNodes: number[];
  reason: string;
  /** What sits where: each device resource, the exclusive CPUs and each memory type, per container. */
  parts?: AlignmentPart[];
}

export interface ContainerState {
  name: string;
  /** Device keys (`${resource}/${id}`) by resource name. */
  devices: Record<string, string[]>;
  cpuIds: number[];
  /** NUMA node of each of `cpuIds` (same order), when the host layout is known. */
  cpuNumaNodes?: number[];
  memory: { type: string; size: number; numaNodes: number[] }[];
  dynamicResources: DynamicResourceState[];
  restartCount: number;
  state: 'running' | 'waiting' | 'terminated' | 'unknown';
  stateReason: string | null;
  /** allocatedResourcesStatus from the API server (ResourceHealthStatus), when present. */
  allocatedResourcesStatus: { resource: string; devices: { id: string; health: string }[] }[];
}

export interface DynamicResourceState {
  claimName: string;
  claimNamespace: string;
  devices: { driver: string; pool: string; device: string; cdiDevices: string[] }[];
}

/** A fault as the operator asked for it: what the fault store keeps and persists. */
export interface FaultRecord {
  id: string;
  /** The extended resource name of a device plugin, or the driver name of a DRA driver. */
  resource: string;
  /**
   * The device ID. For a DRA device the request may name its source ID or its ResourceSlice name;
   * the record holds the source ID.
   */
  deviceId: string;
  reason: string;
  createdAt: Timestamp;
  /** null when the fault lasts until cleared. */
  expiresAt: Timestamp | null;
  /** Scenario that created it, if any. */
  scenarioId: string | null;
  /** Always true: every fault the gateway injects is simulated. */
  simulated: true;
  /** Why the plugin could not take the fault (set only for a fault restored after a restart). */
  failure?: string | null;
  /**
   * DRA devices only: the taint the driver puts on the faulted device in its ResourceSlice, or the
   * DeviceTaintRule's taint (`taintRule`) (None: no effect, a marker and for a rule a dry run;
   * NoSchedule: no new claims get it; NoExecute: pods using it are evicted). null/absent: health only.
   */
  taint?: DraTaintEffect | null;
  /**
   * A device of a DRA driver this gateway does not run: the DeviceTaintRule the fault is (created,
   * deleted with the fault); its effect is `taint`. Absent for every other fault.
   */
  taintRule?: FaultTaintRule | null;
}

/** The DeviceTaintRule of a fault on another driver's device: its name and `spec.deviceSelector`. */
export interface FaultTaintRule {
  /** `plugboard-fault-<hash of driver/pool/device>`: one rule per device, found again after a restart. */
  name: string;
  driver: string;
  pool: string;
  device: string;
}

/**
 * The fault's DeviceTaintRule as the API server reports it (the gateway's DeviceTaintRule informer):
 * its taint, and the `EvictionInProgress` condition kube-controller-manager's device taint eviction
 * controller writes — for effect None a dry run ("… 1 pod would be evicted in 1 namespace if the
 * effect was NoExecute …"). The API names no pods: `podsUsingDevice` are the pods whose claims
 * (ResourceClaims informer) hold the device.
 */
export interface FaultTaintRuleStatus {
  /** Whether the informer holds the rule (false: not created yet, or deleted behind the gateway). */
  observed: boolean;
  /** The rule's `spec.taint.effect` as observed; null when not observed. */
  effect: DraTaintEffect | null;
  /** `status.conditions[type=EvictionInProgress]`; null until the controller writes it. */
  condition: {
    status: 'True' | 'False' | 'Unknown';
    reason: string;
    message: string;
    lastTransitionTime: Timestamp;
    /** Whether it was computed for the rule's current spec (observedGeneration = generation). */
    current: boolean;
  } | null;
  podsUsingDevice: string[];
}

/**
 * Where a fault stands against what the kubelet sees:
 * - 'active': the kubelet was told the device is Unhealthy (every replica, for a shared device);
 * - 'pending': accepted and held by the plugin, the kubelet not told yet (no ListAndWatch stream);
 * - 'device-absent': the device source does not list the device now (unplugged); the fault still
 *   holds it and the kubelet is told Unhealthy in the same list that brings it back;
 * - 'failed': the plugin could not take the fault (`stateReason` says why).
 */
export type FaultPhase = 'active' | 'pending' | 'device-absent' | 'failed';

/** A fault with its observed state: the faults section of the snapshot and `GET /api/v1/faults`. */
export interface FaultState extends FaultRecord {
  state: FaultPhase;
  /** Why the fault is not 'active'; null when it is. */
  stateReason: string | null;
  /** With `taintRule`: the rule as observed; absent for every other fault. */
  taintRuleStatus?: FaultTaintRuleStatus;
}

export type NodeEventKind =
  | 'health'
  | 'fault-injected'
  | 'fault-cleared'
  | 'allocation'
  | 'preferred-allocation'
  | 'kubelet-restart'
  | 'registration'
  | 'admission-rejected'
  | 'source'
  | 'taint'
  | 'claim';

export interface NodeEvent {
  seq: number;
  at: Timestamp;
  kind: NodeEventKind;
  resource: string | null;
  deviceIds: string[];
  pod: { namespace: string; name: string; container: string | null } | null;
  message: string;
}

export type SourceStatus = 'ok' | 'stale' | 'disabled' | 'connecting';

export interface SourceState {
  status: SourceStatus;
  /** Last successful read. */
  lastSuccess: Timestamp | null;
  /** Why it is stale/disabled. */
  reason: string | null;
}

export interface SourcesState {
  podResources: SourceState;
  kubernetes: SourceState;
}

export interface NodeTopology {
  /** Where the CPU↔NUMA mapping comes from (gateway.topology.sysfsRoot). */
  sysfs: { root: string; available: boolean; reason: string | null };
  /** The kubelet's resource-manager settings; null when the kubelet does not say (a real kubelet). */
  kubelet: KubeletTopologySettings | null;
  /** Why `kubelet` is null. */
  kubeletReason: string | null;
  /**
   * "Try to place": the preview is the gateway's prediction (it needs the sysfs layout, the kubelet's
   * settings and PodResources); `admit` — admitting the previewed pod — needs kubelet-sim's control
   * API behind the kubeconfig (absent from gateways older than the prediction: then it follows
   * `available`).
   */
  placement: {
    available: boolean;
    reason: string | null;
    admit?: { available: boolean; reason: string | null };
  };
}

export interface KubeletTopologySettings {
  /**
   * Where the settings were read: the kubelet's configz through the API server's node proxy (any
   * kubelet), or kubelet-sim's control API (when configz is not readable).
   */
  source: 'configz' | 'kubelet-sim';
  /** none | best-effort | restricted | single-numa-node */
  topologyManagerPolicy: string;
  /** container | pod */
  topologyManagerScope: string;
  cpuManagerPolicy: string;
  memoryManagerPolicy: string;
  reservedCpuIds: number[];
}

export interface PreferredAllocationView {
  container: string;
  resource: string;
  deviceIds: string[];
  /** The plugin's own explanation of its GetPreferredAllocation answer. */
  reason: string;
  at: Timestamp;
}

export interface PodTopology {
  /** The Topology Manager policy in force, or "unknown" when the kubelet does not say. */
  policy: string;
  scope: string;
  /** How the kubelet admitted (or rejected) this pod; null when unknown. */
  admission: AdmissionView | null;
  preferredAllocations: PreferredAllocationView[];
}

export interface AlignmentPart {
  /**
   * `dra-devices`: the DRA devices of the container's prepared claims (PodResources
   * `dynamic_resources`), per driver, on the NUMA node their ResourceSlice publishes
   * (`resource.kubernetes.io/numaNode`). The scheduler placed them (a claim's `matchAttribute`), not
   * the Topology Manager, which has no DRA hint provider.
   */
  kind: 'devices' | 'dra-devices' | 'cpus' | 'memory';
  /** Resource name (devices), DRA driver name (dra-devices), "cpu", or the memory type. */
  name: string;
  container: string;
  /** Devices or CPUs held, or bytes of memory. */
  count: number;
  numaNodes: number[];
}

/** GET /api/v1/summary and the stream's `view=summary`: counts only, for cluster views. */
export interface NodeSummary {
  schema: 1;
  nodeName: string;
  updatedAt: Timestamp;
  resources: Record<
    string,
    ResourceCounts & {
      /** As `NodeSnapshot.resources[name].servedBy` (absent from older gateways). */
      servedBy?: ResourceServedBy;
      /** As `NodeSnapshot.resources[name].observed`. */
      observed?: ObservedResourceView;
      apiServer: ApiServerView | null;
      registered: boolean;
      /** The registration phase (`registered` is `phase === 'registered'`). */
      registration: RegistrationPhase;
    }
  >;
  unhealthyDevices: number;
  activeFaults: number;
  faultsEnabled: boolean;
  sources: SourcesState;
  /** DRA counts; absent from gateways older than DRA support. */
  dra?: DraSummary;
  /** As `NodeSnapshot.extendedResources` (the cluster's migration view joins the nodes'). */
  extendedResources?: Record<string, ExtendedResourceView>;
}
