// The node model: the one snapshot type the gateway serves (GET /api/v1/node, the stream's
// snapshot message) and the dashboard renders. Documented field by field in docs/API.md.
// Pure types, no runtime code: the web app imports this file with `import type`.
// JSON Patch paths in the stream address these objects, so keyed collections are objects
// (Record<id, …>) rather than arrays: a one-device change is one small `replace` op.

export type Health = 'Healthy' | 'Unhealthy';

/** ISO-8601 timestamp string. */
export type Timestamp = string;

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

export interface ResourceState {
  name: string;
  /** As the kubelet sees it: plugin ListAndWatch + PodResources. */
  kubelet: ResourceCounts;
  /** As the API server's Node object reports it (null when the Kubernetes API is disabled or unseen). */
  apiServer: { capacity: number; allocatable: number } | null;
  registration: RegistrationState;
  /** Replicas per physical device when the resource is shared (1 when not). */
  replicas: number;
  /** Device keys (`${resource}/${id}`) belonging to this resource, in stable order. */
  deviceKeys: string[];
}

export type RegistrationPhase = 'starting' | 'registering' | 'registered' | 'failed' | 'stopped';

export interface RegistrationState {
  phase: RegistrationPhase;
  registeredAt: Timestamp | null;
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
  health: Health;
  /** Why it is unhealthy (or why it healed); null when never changed. */
  reason: string | null;
  /** Time of the last health transition. */
  since: Timestamp;
  numaNodes: number[];
  /** Physical device ID when this is a sharing replica (`<id>::<k>`), else null. */
  replicaOf: string | null;
  /** Whether an active simulated fault holds this device unhealthy. */
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
  /** True when any device the pod holds is unhealthy: the blast radius of a fault. */
  affectedByUnhealthyDevice: boolean;
  /** Whether all NUMA-bound resources of the pod sit on one NUMA node. */
  numaAlignment: NumaAlignment;
}

export interface NumaAlignment {
  verdict: 'aligned' | 'spread' | 'no-preference';
  numaNodes: number[];
  reason: string;
}

export interface ContainerState {
  name: string;
  /** Device keys (`${resource}/${id}`) by resource name. */
  devices: Record<string, string[]>;
  cpuIds: number[];
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

export interface FaultState {
  id: string;
  resource: string;
  deviceId: string;
  reason: string;
  createdAt: Timestamp;
  /** null when the fault lasts until cleared. */
  expiresAt: Timestamp | null;
  /** Scenario that created it, if any. */
  scenarioId: string | null;
  /** Always true: every fault the gateway injects is simulated. */
  simulated: true;
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
  | 'source';

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

/** GET /api/v1/summary and the stream's `view=summary`: counts only, for cluster views. */
export interface NodeSummary {
  schema: 1;
  nodeName: string;
  updatedAt: Timestamp;
  resources: Record<
    string,
    ResourceCounts & { apiServer: { capacity: number; allocatable: number } | null; registered: boolean }
  >;
  unhealthyDevices: number;
  activeFaults: number;
  faultsEnabled: boolean;
  sources: SourcesState;
}

/** Messages on GET /api/v1/stream. */
export type StreamMessage<T = NodeSnapshot> =
  | { type: 'snapshot'; seq: number; node: T }
  | { type: 'patch'; seq: number; ops: JsonPatchOp[] }
  | { type: 'heartbeat'; seq: number; at: Timestamp }
  | { type: 'error'; status: number; title: string; detail: string };

export type JsonPatchOp =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };
