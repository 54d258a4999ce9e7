// Pure join of every source into one NodeSnapshot: plugin devices and registration, what the kubelet
// reports over PodResources, what the API server says about the Node and its Pods, active faults and
// the event ring. No I/O and no clock: the caller passes `updatedAt`, so equal inputs give equal output.
import type { V1Node, V1Pod, V1ContainerStatus } from '@kubernetes/client-node';
import type { podresources } from '@plugboard/proto';
import type {
  ContainerState,
  DeviceAllocation,
  DeviceState,
  DynamicResourceState,
  FaultState,
  GatewayInfo,
  Health,
  NodeEvent,
  NodeSnapshot,
  NumaAlignment,
  NumaNodeState,
  PodPhase,
  PodState,
  RegistrationState,
  ResourceState,
  SourcesState,
} from './types.js';

/** A device as the plugin advertises it (structurally @plugboard/plugin's PluginDevice). */
export interface DeviceInput {
  id: string;
  health: Health;
  reason: string | null;
  since: string;
  numaNodes: number[];
  replicaOf: string | null;
}

export interface ResourceInput {
  name: string;
  devices: readonly DeviceInput[];
  registration: RegistrationState;
}

/** Last answers of PodResources `List` and `GetAllocatableResources`. */
export interface PodResourcesInput {
  pods: readonly podresources.PodResources[];
  allocatable: podresources.AllocatableResourcesResponse;
}

export interface KubeInput {
  node: V1Node | null;
  /** Pods bound to this node, as the API server reports them. */
  pods: readonly V1Pod[];
}

export interface ModelInputs {
  nodeName: string;
  updatedAt: string;
  gateway: GatewayInfo;
  resources: readonly ResourceInput[];
  podResources: PodResourcesInput | null;
  kube: KubeInput | null;
  faults: readonly FaultState[];
  events: readonly NodeEvent[];
  sources: SourcesState;
}

/**
 * Objects of the previous build, reused when their inputs did not change so that the next diff
 * skips them by reference (see diff.ts). Owned by one NodeModel; optional for one-off builds.
 */
export class BuildCache {
  devices = new Map<string, DeviceState>();
  pods = new Map<string, { pr: unknown; kp: unknown; signature: string; state: PodState }>();

  /** After a diff shared structure with the previous snapshot, remember the objects actually kept. */
  adopt(snapshot: NodeSnapshot): void {
    for (const [key, d] of Object.entries(snapshot.devices)) this.devices.set(key, d);
    for (const [key, entry] of this.pods) {
      const kept = snapshot.pods[key];
      if (kept) entry.state = kept;
    }
  }
}

export const deviceKey = (resource: string, id: string): string => `${resource}/${id}`;
export const podKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/** Parses a Kubernetes quantity for an extended resource (integers; tolerates "k"/"M" suffixes). */
export function parseCount(quantity: string | undefined): number {
  if (quantity === undefined) return 0;
  const m = /^(\d+)(k|M|G)?$/.exec(quantity.trim());
  if (!m) return 0;
  const mult = m[2] === 'k' ? 1e3 : m[2] === 'M' ? 1e6 : m[2] === 'G' ? 1e9 : 1;
  return Number(m[1]) * mult;
}

const numaIds = (t: podresources.TopologyInfo | undefined): number[] =>
  [...new Set((t?.nodes ?? []).map((n) => Number(n.ID)))].sort((a, b) => a - b);

interface AllocationIndex {
  /** `${resource}/${id}` → who holds it */
  byDevice: Map<string, DeviceAllocation>;
  /** resource → healthy device IDs the kubelet reports allocatable */
  allocatable: Map<string, Set<string>>;
}

function indexPodResources(pr: PodResourcesInput | null): AllocationIndex {
  const byDevice = new Map<string, DeviceAllocation>();
  const allocatable = new Map<string, Set<string>>();
  if (!pr) return { byDevice, allocatable };
  for (const pod of pr.pods) {
    for (const c of pod.containers) {
      for (const d of c.devices) {
        for (const id of d.deviceIds) {
          byDevice.set(deviceKey(d.resourceName, id), { namespace: pod.namespace, pod: pod.name, container: c.name });
        }
      }
    }
  }
  for (const d of pr.allocatable.devices) {
    let set = allocatable.get(d.resourceName);
    if (!set) allocatable.set(d.resourceName, (set = new Set()));
    for (const id of d.deviceIds) set.add(id);
  }
  return { byDevice, allocatable };
}

const sameNumbers = (a: readonly number[], b: readonly number[]): boolean =>
  a.length === b.length && a.every((v, i) => v === b[i]);

function sameDevice(a: DeviceState, b: DeviceState): boolean {
  return (
    a.health === b.health &&
    a.reason === b.reason &&
    a.since === b.since &&
    a.replicaOf === b.replicaOf &&
    a.faulted === b.faulted &&
    sameNumbers(a.numaNodes, b.numaNodes) &&
    (a.allocation === b.allocation ||
      (a.allocation !== null &&
        b.allocation !== null &&
        a.allocation.namespace === b.allocation.namespace &&
        a.allocation.pod === b.allocation.pod &&
        a.allocation.container === b.allocation.container))
  );
}

function buildDevices(inputs: ModelInputs, index: AllocationIndex, cache: BuildCache | null): Record<string, DeviceState> {
  const faulted = new Set<string>();
  for (const f of inputs.faults) faulted.add(deviceKey(f.resource, f.deviceId));
  const devices: Record<string, DeviceState> = {};
  for (const r of inputs.resources) {
    for (const d of r.devices) {
      const key = deviceKey(r.name, d.id);
      const state: DeviceState = {
        key,
        resource: r.name,
        id: d.id,
        health: d.health,
        reason: d.reason,
        since: d.since,
        numaNodes: [...d.numaNodes],
        replicaOf: d.replicaOf,
        faulted: faulted.has(key) || (d.replicaOf !== null && faulted.has(deviceKey(r.name, d.replicaOf))),
        allocation: index.byDevice.get(key) ?? null,
      };
      const cached = cache?.devices.get(key);
      devices[key] = cached && sameDevice(cached, state) ? cached : state;
    }
  }
  if (cache) cache.devices = new Map(Object.entries(devices));
  return devices;
}

function buildResources(
  inputs: ModelInputs,
  devices: Record<string, DeviceState>,
  index: AllocationIndex,
): Record<string, ResourceState> {
  const node = inputs.kube?.node ?? null;
  const out: Record<string, ResourceState> = {};
  for (const r of inputs.resources) {
    const keys = r.devices.map((d) => deviceKey(r.name, d.id));
    let healthy = 0;
    let allocated = 0;
    let free = 0;
    const kubeletAllocatable = inputs.podResources ? (index.allocatable.get(r.name) ?? new Set<string>()) : null;
    const perPhysical = new Map<string, number>();
    for (const key of keys) {
      const d = devices[key]!;
      if (d.health === 'Healthy') healthy++;
      if (d.allocation) allocated++;
      const schedulable = kubeletAllocatable ? kubeletAllocatable.has(d.id) : d.health === 'Healthy';
      if (schedulable && !d.allocation) free++;
      if (d.replicaOf !== null) perPhysical.set(d.replicaOf, (perPhysical.get(d.replicaOf) ?? 0) + 1);
    }
    out[r.name] = {
      name: r.name,
      kubelet: {
        capacity: keys.length,
        allocatable: kubeletAllocatable ? kubeletAllocatable.size : healthy,
        allocated,
        free,
        healthy,
        unhealthy: keys.length - healthy,
      },
      apiServer: node
        ? {
            capacity: parseCount(node.status?.capacity?.[r.name]),
            allocatable: parseCount(node.status?.allocatable?.[r.name]),
          }
        : null,
      registration: { ...r.registration },
      replicas: perPhysical.size ? Math.max(...perPhysical.values()) : 1,
      deviceKeys: keys,
    };
  }
  return out;
}

function buildNuma(inputs: ModelInputs, devices: Record<string, DeviceState>): { nodes: Record<string, NumaNodeState> } {
  const nodes: Record<string, NumaNodeState> = {};
  const get = (id: number | null): NumaNodeState =>
    (nodes[id === null ? 'none' : String(id)] ??= { id, cpuIds: [], memory: {}, deviceKeys: [] });
  for (const d of Object.values(devices)) {
    if (d.numaNodes.length === 0) get(null).deviceKeys.push(d.key);
    for (const n of d.numaNodes) get(n).deviceKeys.push(d.key);
  }
  const alloc = inputs.podResources?.allocatable;
  if (alloc) {
    for (const m of alloc.memory) {
      const ids = numaIds(m.topology);
      // Memory spanning several NUMA nodes cannot be attributed to one; only single-node blocks count.
      if (ids.length === 1) {
        const n = get(ids[0]!);
        n.memory[m.memoryType] = (n.memory[m.memoryType] ?? 0) + Number(m.size);
      }
    }
  }
  return { nodes };
}

const PHASES = new Set<PodPhase>(['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown']);

function containerStateOf(s: V1ContainerStatus | undefined): Pick<ContainerState, 'state' | 'stateReason'> {
  if (!s?.state) return { state: 'unknown', stateReason: null };
  if (s.state.running) return { state: 'running', stateReason: null };
  if (s.state.waiting) return { state: 'waiting', stateReason: s.state.waiting.reason ?? null };
  if (s.state.terminated) return { state: 'terminated', stateReason: s.state.terminated.reason ?? null };
  return { state: 'unknown', stateReason: null };
}

function alignment(devNuma: number[], memNuma: number[]): NumaAlignment {
  const all = [...new Set([...devNuma, ...memNuma])].sort((a, b) => a - b);
  if (all.length === 0) {
    return { verdict: 'no-preference', numaNodes: [], reason: 'no device or memory of the pod has NUMA affinity' };
  }
  if (all.length === 1) {
    return { verdict: 'aligned', numaNodes: all, reason: `all NUMA-bound resources are on NUMA node ${all[0]}` };
  }
  return {
    verdict: 'spread',
    numaNodes: all,
    reason: `NUMA-bound resources are spread over ${all.length} NUMA nodes (${all.join(', ')})`,
  };
}

function buildPods(inputs: ModelInputs, devices: Record<string, DeviceState>, cache: BuildCache | null): Record<string, PodState> {
  const prPods = new Map<string, podresources.PodResources>();
  for (const p of inputs.podResources?.pods ?? []) prPods.set(podKey(p.namespace, p.name), p);
  const kubePods = new Map<string, V1Pod>();
  for (const p of inputs.kube?.pods ?? []) {
    if (p.metadata?.name) kubePods.set(podKey(p.metadata.namespace ?? 'default', p.metadata.name), p);
  }
  const keys = [...new Set([...prPods.keys(), ...kubePods.keys()])].sort();
  const pods: Record<string, PodState> = {};
  const nextCache = new Map<string, { pr: unknown; kp: unknown; signature: string; state: PodState }>();
  for (const key of keys) {
    const pr = prPods.get(key);
    const kp = kubePods.get(key);
    // A pod's state depends on its PodResources entry, its API object and its devices' health and
    // NUMA nodes; when all of those are the same objects/values, reuse last build's PodState.
    let signature = '';
    for (const c of pr?.containers ?? []) {
      for (const d of c.devices) {
        for (const id of d.deviceIds) {
          const dev = devices[deviceKey(d.resourceName, id)];
          signature += dev ? `${dev.health === 'Healthy' ? 'h' : 'u'}${dev.numaNodes.join('.')};` : 'x;';
        }
      }
    }
    const hit = cache?.pods.get(key);
    if (hit && hit.pr === pr && hit.kp === kp && hit.signature === signature) {
      pods[key] = hit.state;
      nextCache.set(key, hit);
      continue;
    }
    const [namespace, name] = [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)];
    const statuses = new Map<string, V1ContainerStatus>();
    for (const s of kp?.status?.containerStatuses ?? []) statuses.set(s.name, s);
    const names = [
      ...new Set([
        ...(pr?.containers.map((c) => c.name) ?? []),
        ...(kp?.spec?.containers.map((c) => c.name) ?? []),
      ]),
    ];
    const devNuma: number[] = [];
    const memNuma: number[] = [];
    let affected = false;
    const containers: ContainerState[] = names.map((cname) => {
      const c = pr?.containers.find((x) => x.name === cname);
      const s = statuses.get(cname);
      const devs: Record<string, string[]> = {};
      for (const d of c?.devices ?? []) {
        const list = (devs[d.resourceName] ??= []);
        for (const id of d.deviceIds) {
          const k = deviceKey(d.resourceName, id);
          list.push(k);
          const dev = devices[k];
          if (dev) {
            devNuma.push(...dev.numaNodes);
            if (dev.health === 'Unhealthy') affected = true;
          } else {
            devNuma.push(...numaIds(d.topology));
          }
        }
      }
      const memory = (c?.memory ?? []).map((m) => {
        const ids = numaIds(m.topology);
        memNuma.push(...ids);
        return { type: m.memoryType, size: Number(m.size), numaNodes: ids };
      });
      const dynamicResources: DynamicResourceState[] = (c?.dynamicResources ?? []).map((dr) => ({
        claimName: dr.claimName,
        claimNamespace: dr.claimNamespace,
        devices: dr.claimResources.map((cr) => ({
          driver: cr.driverName,
          pool: cr.poolName,
          device: cr.deviceName,
          cdiDevices: cr.cdiDevices.map((x) => x.name),
        })),
      }));
      const ars = s?.allocatedResourcesStatus;
      return {
        name: cname,
        devices: devs,
        cpuIds: [...(c?.cpuIds ?? [])].map(Number).sort((a, b) => a - b),
        memory,
        dynamicResources,
        restartCount: s?.restartCount ?? 0,
        ...containerStateOf(s),
        allocatedResourcesStatus: (ars ?? []).map((r) => ({
          resource: r.name,
          devices: (r.resources ?? []).map((x) => ({ id: x.resourceID, health: x.health ?? 'Unknown' })),
        })),
      };
    });
    const phaseRaw = kp?.status?.phase as PodPhase | undefined;
    const phase: PodPhase = phaseRaw && PHASES.has(phaseRaw) ? phaseRaw : pr ? 'Running' : 'Unknown';
    const reason =
      containers.find((c) => c.state === 'waiting' && c.stateReason)?.stateReason ??
      containers.find((c) => c.state === 'terminated' && c.stateReason && c.stateReason !== 'Completed')?.stateReason ??
      kp?.status?.reason ??
      null;
    pods[key] = {
      key,
      namespace,
      name,
      phase,
      reason,
      containers,
      affectedByUnhealthyDevice: affected,
      numaAlignment: alignment(devNuma, memNuma),
    };
    nextCache.set(key, { pr, kp, signature, state: pods[key] });
  }
  if (cache) cache.pods = nextCache;
  return pods;
}

export function buildSnapshot(inputs: ModelInputs, cache: BuildCache | null = null): NodeSnapshot {
  const index = indexPodResources(inputs.podResources);
  const devices = buildDevices(inputs, index, cache);
  const faults: Record<string, FaultState> = {};
  for (const f of inputs.faults) faults[f.id] = { ...f };
  return {
    schema: 1,
    nodeName: inputs.nodeName,
    updatedAt: inputs.updatedAt,
    gateway: inputs.gateway,
    resources: buildResources(inputs, devices, index),
    devices,
    numa: buildNuma(inputs, devices),
    pods: buildPods(inputs, devices, cache),
    faults,
    events: [...inputs.events],
    sources: inputs.sources,
  };
}
