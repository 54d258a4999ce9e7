// The public types of @plugboard/kubelet-sim: the options of startKubeletSim (they mirror the
// CLI flags and the kubelet's configuration), the KubeletSim handle, its events and state().

import type { Logger } from 'pino';
import type { DirectoryWatchMode, WatchFactory } from '@plugboard/proto';
import type { RateLimit } from './apis/podresources/grpc/ratelimit.js';
import type { KubeObject } from './apiserver/object-store.js';
import type {
  AdmissionDecision,
  CpuManagerPolicy,
  HugepageResource,
  MemoryBlock,
  MemoryManagerPolicy,
  TopologyManagerPolicy,
  TopologyManagerScope,
  TopologyOverride,
} from '@plugboard/topology';
import type { DeviceView, PluginOptions, ResourceView } from './cm/devicemanager/types.js';
import type { DraStateView } from './cm/dra/manager.js';
import type {
  ContainerClaim,
  PodExtendedResourceClaimStatus,
  PodResourceClaimStatus,
} from './cm/dra/types.js';
import type { NodeShapeOptions } from './machine/node-shape.js';
import type { PodSpecInput } from './pods/pod-spec.js';
import type { AdmittedPod, BackoffOptions } from './pods/runtime.js';

/** The node's machine shape (CPUs, NUMA nodes, memory, hugepages, max pods) is NodeShapeOptions'. */
export interface KubeletSimOptions extends NodeShapeOptions {
  devicePluginDir: string;
  stateDir: string;
  /** Default `sim-node`. */
  nodeName?: string;
  /** `HOST:PORT` for the Kubernetes API slice and the control API; default `127.0.0.1:0`. */
  listen?: string;
  /** Default `<stateDir>/pod-resources/kubelet.sock`. */
  podResourcesSocket?: string;
  /**
   * The plugin watcher's directory (the kubelet's /var/lib/kubelet/plugins_registry): device
   * plugins serving pluginregistration v1 there are registered too. Off unless set.
   */
  pluginsRegistryDir?: string;
  /** How the plugin watcher follows that directory: fs.watch unless a test injects a failing one. */
  pluginsRegistryWatch?: WatchFactory;
  /** How long a gone plugin's devices stay in capacity; the kubelet uses 5 minutes. */
  gracePeriodMs?: number;
  /** The kubelet's PodResources limit (100 qps, burst 10) by default; false turns it off. */
  podResourcesRateLimit?: RateLimit | false;
  /** Crash-loop back-off; the kubelet's is 10 s doubling to 5 min. */
  crashLoopBackOff?: Partial<BackoffOptions>;
  /** Default `static` (exclusive CPUs for whole-CPU Guaranteed containers); `none` reports none. */
  cpuManagerPolicy?: CpuManagerPolicy;
  /** Default `Static` (memory pinned to NUMA nodes for Guaranteed pods); `None` reports none. */
  memoryManagerPolicy?: MemoryManagerPolicy;
  /** The kubelet's --reserved-cpus (reservedSystemCPUs): never exclusive, off allocatable cpu. */
  reservedCpus?: number[];
  /** Default `best-effort` (the kubelet's is `none`) so that placements are NUMA-aligned. */
  topologyManagerPolicy?: TopologyManagerPolicy;
  /** Default `container`, as in the kubelet. */
  topologyManagerScope?: TopologyManagerScope;
  /** Bearer token for mutations; required when `listen` is not a loopback address. */
  controlToken?: string;
  /**
   * Serve the control API under /control/v1/ (default true). false leaves only what a real API
   * server and kubelet offer (the API slice, `nodes/{name}/proxy/configz`, PodResources): for
   * testing clients that must work on a real cluster.
   */
  controlApi?: boolean;
  /** Events kept per kind for watches; older resourceVersions get 410 Gone. Default 1000. */
  watchHistorySize?: number;
  /** Events kept (the least recently changed are deleted beyond it). Default 1000. */
  maxEvents?: number;
  /** BOOKMARK interval on watches that allow bookmarks. Default 60 s. */
  bookmarkIntervalMs?: number;
  /** How often the node lease is renewed. Default 10 s (a quarter of its 40 s duration), as the kubelet. */
  nodeLeaseRenewIntervalMs?: number;
  /** How often an unchanged Node status is reported again (new heartbeat). Default 5 min, as the kubelet. */
  nodeStatusReportFrequencyMs?: number;
  /**
   * Targets of the API slice's pod proxy (`/api/v1/namespaces/{ns}/pods/{name}[:port]/proxy/…`), keyed
   * `namespace/name` → base URL (http only); simulated pods have no IPs. The map is read per request,
   * so entries may be added after start. Pods without an entry answer 503.
   */
  podProxyTargets?: ReadonlyMap<string, string>;
  /** Dial timeout for a registering plugin (kubelet: 10 s). */
  dialTimeoutMs?: number;
  /**
   * How soon a pod whose sync stopped before its containers started (a failed DRA prepare) is
   * synced again, and how often claims a failed unprepare left behind are retried: the kubelet's
   * syncFrequency, 1 min.
   */
  syncFrequencyMs?: number;
  /**
   * How long a DRA driver with no connected plugin keeps its ResourceSlices on this node before
   * the kubelet deletes them (the kubelet's defaultWipingDelay, 30 s).
   */
  draWipingDelayMs?: number;
  logger?: Logger;
}

/**
 * What `state()` and `GET /control/v1/state` hold: the node with its managers' accounting, the
 * device manager's resources, every pod with its admission decision, and the DRA manager.
 */
export interface KubeletState {
  node: {
    name: string;
    numaNodes: {
      id: number;
      cpus: number[];
      memoryBytes: number;
      hugepages: Partial<Record<HugepageResource, number>>;
      /** Memory Manager accounting per type: allocatable and free bytes on this NUMA node. */
      memory: Record<string, { allocatable: number; free: number }>;
    }[];
    /** SMT siblings per CPU ID. */
    cpus: { id: number; coreId: number; numaNode: number; siblings: number[] }[];
    threadsPerCore: number;
    reservedCpus: number[];
    /** CPUs no container holds exclusively (the shared pool). */
    sharedCpus: number[];
    cpuManagerPolicy: CpuManagerPolicy;
    memoryManagerPolicy: MemoryManagerPolicy;
    topologyManagerPolicy: TopologyManagerPolicy;
    topologyManagerScope: TopologyManagerScope;
    /** The sysfs-style fixture of this node (the stand-in for /sys). */
    sysfsRoot: string;
  };
  resources: Record<string, ResourceView>;
  pods: PodState[];
  /** The DRA manager: registered drivers and their plugins, and every claim it prepared. */
  dra: DraStateView;
}

/** The former name of KubeletState, which holds more than the device manager's state. */
export type DeviceManagerState = KubeletState;

export interface PodState {
  namespace: string;
  name: string;
  uid: string;
  phase: string;
  reason: string | null;
  containers: {
    name: string;
    init: boolean;
    state: string;
    restartCount: number;
    devices: Record<string, string[]>;
    cpuIds: number[];
    /** Memory and hugepages pinned by the Memory Manager, with the NUMA nodes of their group. */
    memory: MemoryBlock[];
    /** What the plugin's Allocate returned (envs, mounts, device specs, annotations, CDI devices). */
    allocateResponses: Record<string, unknown>;
    /** `resources.claims`: the pod's ResourceClaims (and requests) this container uses. */
    claims: ContainerClaim[];
    /** The CDI device IDs the DRA manager hands the container (GetResources). */
    cdiDevices: string[];
  }[];
  /** The Topology Manager's decision: hints per provider, merged hint, policy, scope, result. */
  admission: AdmissionDecision | null;
  /** The claims the ResourceClaim controller generated from templates. */
  resourceClaimStatuses: PodResourceClaimStatus[];
  /** The scheduler's special claim for extended resources backed by DRA, with its request mappings. */
  extendedResourceClaimStatus: PodExtendedResourceClaimStatus | null;
  /** Why the scheduler left the pod Pending (PodScheduled False), null once it is bound. */
  unschedulable: { reason: string; message: string } | null;
}

export interface KubeletSimEvents {
  registered: [{ resource: string; endpoint: string; options: PluginOptions }];
  'registration-rejected': [{ resource: string; endpoint: string; error: string }];
  devices: [{ resource: string; devices: DeviceView[] }];
  disconnected: [{ resource: string }];
  'resource-removed': [{ resource: string }];
  /** Every change of a Pod object, with the watch event type. */
  pod: [KubeObject, 'ADDED' | 'MODIFIED' | 'DELETED'];
  node: [KubeObject];
  restarted: [];
}

export interface KubeletSim {
  url: string;
  kubeconfigPath: string;
  podResourcesSocket: string;
  devicePluginDir: string;
  nodeName: string;
  /** The stand-in for /sys written for this node (see sysfs.ts). */
  sysfsRoot: string;
  admitPod(pod: PodSpecInput): Promise<AdmittedPod>;
  /**
   * Where `pod` would land (or why it would be refused), without admitting it; optionally under
   * another Topology Manager policy or scope than the node's.
   */
  dryRunPod(pod: PodSpecInput, override?: TopologyOverride): Promise<AdmissionDecision>;
  deletePod(namespace: string, name: string): Promise<void>;
  restart(): Promise<void>;
  /**
   * The kubelet going down, held (the first half of `restart`): kubelet.sock and the PodResources
   * socket go and every plugin stream closes; the API server and control plane stay up.
   */
  stopKubelet(): Promise<void>;
  /** The kubelet starting again after `stopKubelet`, from its checkpoints (the second half of `restart`). */
  startKubelet(): Promise<void>;
  state(): KubeletState;
  /**
   * How the plugin watcher follows plugins_registry: `watch` (fs.watch), or `poll` with the reason
   * (inotify unavailable, e.g. fs.inotify.max_user_instances exhausted); null without a plugin watcher.
   */
  pluginWatchMode(): { mode: DirectoryWatchMode; reason: string | null } | null;
  on<E extends keyof KubeletSimEvents>(
    event: E,
    listener: (...args: KubeletSimEvents[E]) => void,
  ): KubeletSim;
  off<E extends keyof KubeletSimEvents>(
    event: E,
    listener: (...args: KubeletSimEvents[E]) => void,
  ): KubeletSim;
  stop(): Promise<void>;
}
