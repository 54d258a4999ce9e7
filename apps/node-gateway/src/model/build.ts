// Pure join of every source into one NodeSnapshot: plugin devices and registration, what the kubelet
// reports over PodResources, what the API server says about the Node and its Pods, active faults and
// the event ring. No I/O and no clock: the caller passes `updatedAt`, so equal inputs give equal output.
import type { V1Node, V1Pod, V1ContainerStatus } from '@kubernetes/client-node';
import { Quantity } from '@plugboard/apimachinery';
import { DEVICE_TAINT_CONDITION_EVICTION_IN_PROGRESS } from '@plugboard/k8s-api';
import type { podresources } from '@plugboard/proto';
import type {
  ContainerState,
  DeviceAllocation,
  DeviceState,
  DraState,
  DynamicResourceState,
  FaultRecord,
  FaultState,
  FaultTaintRuleStatus,
  GatewayInfo,
  Health,
  NodeEvent,
  NodeSnapshot,
  NumaNodeState,
  PodPhase,
  PodState,
  RegistrationState,
  ResourceState,
  SourcesState,
} from '@plugboard/api';
import { buildDra, DraBuildCache, podClaimRefs, podDra, podHeldDra, type DraDriverInput } from './dra.js';
import type { DraKubeInput } from './dra-objects.js';
import { buildExtendedResources } from './extended-resources.js';
import {
  alignmentOf,
  alignmentParts,
  coresOf,
  nodeTopology,
  podTopology,
  type TopologyInput,
} from './topology.js';
import { sameItems } from '../same-items.js';
import { buildObserved, ObservedMemory } from './observed.js';

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
  /**
   * The list the kubelet was last told on ListAndWatch (null while no stream is open). The plugin
   * keeps it as the same array until the next send, so an unchanged one costs no rebuild.
   */
  reported: readonly DeviceInput[] | null;
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
  /**
   * Unscheduled pods with ResourceClaims that can only go to this node (its hostname in their node
   * selector or required affinity, or nominated here): their claims may be pending for it.
   */
  waitingPods?: readonly V1Pod[];
  /** ResourceSlices, ResourceClaims, DeviceClasses, DeviceTaintRules (null: not watched). */
  dra?: DraKubeInput | null;
}

export interface ModelInputs {
  nodeName: string;
  updatedAt: string;
  /** The time of this build: when an observed device was first seen or changed health (default updatedAt). */
  now?: string;
  gateway: GatewayInfo;
  resources: readonly ResourceInput[];
  /** The DRA drivers this gateway runs, by name. */
  draDrivers?: readonly DraDriverInput[];
  podResources: PodResourcesInput | null;
  kube: KubeInput | null;
  faults: readonly FaultRecord[];
  events: readonly NodeEvent[];
  sources: SourcesState;
  /** Host NUMA layout, kubelet settings and decisions, plugin preference reasons (null: none known). */
  topology?: TopologyInput | null;
}

/**
 * Objects of the previous build, reused when their inputs did not change so that the next diff
 * skips them by reference (see diff.ts). Owned by one NodeModel; optional for one-off builds.
 */
export class BuildCache {
  devices = new Map<string, DeviceState>();
  pods = new Map<string, { pr: unknown; kp: unknown; signature: readonly unknown[]; state: PodState }>();
  /** Replaced whenever a device appears, disappears or changes NUMA nodes (the NUMA map's input). */
  layout: object = {};
  /**
   * Replaced whenever a device a pod holds (per PodResources) changes, or any device appears or
   * disappears: the pods section's device input. A fault on a free device leaves the pods alone.
   */
  podDevices: object = {};
  /** The DRA section's devices and claims of the last build. */
  readonly dra = new DraBuildCache();
  /** Resources of other device plugins: their devices of the last build, the resources seen listed. */
  readonly observed = new ObservedMemory();
  private readonly sections = new Map<string, { deps: readonly unknown[]; value: unknown }>();

  /** `compute()`'s last value while every dependency is the same object/value as last time. */
  memo<T>(name: string, deps: readonly unknown[], compute: () => T): T {
    const hit = this.sections.get(name);
    if (hit && sameItems(hit.deps, deps)) return hit.value as T;
    const value = compute();
    this.sections.set(name, { deps, value });
    return value;
  }

  private keep(name: string, value: unknown): void {
    const hit = this.sections.get(name);
    if (hit && value !== undefined) hit.value = value;
  }

  /**
   * After the diff shared structure with the previous snapshot, remember the objects the snapshot
   * actually holds (equal in content to what was built), so the next diff meets them by reference.
   */
  adopt(snapshot: NodeSnapshot): void {
    // Every entry, not only those the ops touched: an entry rebuilt with equal content produces no
    // op, and the diff keeps the previous object. Caching the rebuilt one instead made every later
    // diff walk it deeply again (measured at 1,024 devices / 250 pods: ~90 pods re-walked on every
    // update, about 3 ms per model update, long after the change that rebuilt them).
    if (this.sections.get('all-devices')?.value !== snapshot.devices) {
      for (const map of [this.devices, this.observed.devices]) {
        for (const [key, cached] of map) {
          const kept = snapshot.devices[key];
          if (kept && kept !== cached) map.set(key, kept);
        }
      }
    }
    // The own devices are the whole section only while no observed device is there.
    if (this.sections.get('all-devices')?.value === this.sections.get('devices')?.value)
      this.keep('devices', snapshot.devices);
    this.keep('all-devices', snapshot.devices);
    if (this.sections.get('pods')?.value !== snapshot.pods) {
      for (const [key, entry] of this.pods) {
        const kept = snapshot.pods[key];
        if (kept && kept !== entry.state) entry.state = kept;
      }
    }
    this.keep('pods', snapshot.pods);
    this.keep('numa', snapshot.numa);
    this.keep('faults', snapshot.faults);
    if (snapshot.extendedResources) this.keep('extended-resources', snapshot.extendedResources);
    if (snapshot.dra) {
      if (this.sections.get('dra')?.value !== snapshot.dra) this.dra.adopt(snapshot.dra);
      this.keep('dra', snapshot.dra);
    }
    for (const r of Object.values(snapshot.resources)) this.keep(`keys:${r.name}`, r.deviceKeys);
  }
}

export const deviceKey = (resource: string, id: string): string => `${resource}/${id}`;
export const podKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/**
 * An extended resource's count from the Node's capacity or allocatable: the exact resource.Quantity
 * ("2", "1k", "1Ki", "1e3"), read as the scheduler reads a scalar resource, Quantity.Value(): a
 * fraction ("1.5", "100m"), which the kubelet never reports for a device count, rounds up to the
 * next whole device. Absent or not a quantity: 0.
 */
export function parseCount(quantity: string | undefined): number {
  if (quantity === undefined) return 0;
  try {
    return Number(Quantity.parse(quantity.trim()).value());
  } catch {
    return 0;
  }
}

const numaIds = (t: podresources.TopologyInfo | undefined): number[] =>
  [...new Set((t?.nodes ?? []).map((n) => Number(n.ID)))].sort((a, b) => a - b);

interface AllocationIndex {
  /** `${resource}/${id}` → who holds it (from PodResources `List`) */
  byDevice: Map<string, DeviceAllocation>;
  /** resource → healthy device IDs the kubelet reports allocatable (`GetAllocatableResources`) */
  allocatable: Map<string, Set<string>>;
}

function indexAllocations(pods: readonly podresources.PodResources[]): Map<string, DeviceAllocation> {
  const byDevice = new Map<string, DeviceAllocation>();
  for (const pod of pods) {
    for (const c of pod.containers) {
      for (const d of c.devices) {
        for (const id of d.deviceIds) {
          byDevice.set(deviceKey(d.resourceName, id), {
            namespace: pod.namespace,
            pod: pod.name,
            container: c.name,
          });
        }
      }
    }
  }
  return byDevice;
}

function indexAllocatable(
  allocatable: podresources.AllocatableResourcesResponse | undefined,
): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const d of allocatable?.devices ?? []) {
    let set = out.get(d.resourceName);
    if (!set) out.set(d.resourceName, (set = new Set()));
    for (const id of d.deviceIds) set.add(id);
  }
  return out;
}

const sameAllocation = (a: DeviceAllocation | null, b: DeviceAllocation | null): boolean =>
  a === b ||
  (a !== null && b !== null && a.namespace === b.namespace && a.pod === b.pod && a.container === b.container);

/** Device keys of a resource, in the plugin's order (memoised on the plugin's device array). */
function keysOf(r: ResourceInput, cache: BuildCache | null): string[] {
  const make = () => r.devices.map((d) => deviceKey(r.name, d.id));
  return cache ? cache.memo(`keys:${r.name}`, [r.devices], make) : make();
}

/** Device ID → the health the kubelet was last told, memoised on the plugin's reported list. */
function reportedHealth(r: ResourceInput, cache: BuildCache | null): Map<string, Health> | null {
  if (r.reported === null) return null;
  const reported = r.reported;
  const make = () => new Map(reported.map((d) => [d.id, d.health]));
  return cache ? cache.memo(`reported:${r.name}`, [reported], make) : make();
}

/** Each fault with where it stands against what the kubelet was told. */
function buildFaults(
  inputs: ModelInputs,
  devices: Record<string, DeviceState>,
  dra: DraState,
): Record<string, FaultState> {
  const out: Record<string, FaultState> = {};
  const byResource = new Map(inputs.resources.map((r) => [r.name, r]));
  const draDrivers = new Set((inputs.draDrivers ?? []).map((d) => d.name));
  for (const f of inputs.faults) {
    const state = (phase: FaultState['state'], stateReason: string | null): FaultState => ({
      ...f,
      state: phase,
      stateReason,
    });
    const r = byResource.get(f.resource);
    if (f.failure) {
      out[f.id] = state('failed', f.failure);
      continue;
    }
    if (f.taintRule) {
      out[f.id] = taintRuleFault(f, state, inputs.kube?.dra ?? null, dra);
      continue;
    }
    if (draDrivers.has(f.resource)) {
      const device = Object.values(dra.devices).find(
        (d) => d.driver === f.resource && d.sourceId === f.deviceId,
      );
      out[f.id] = !device
        ? state(
            'device-absent',
            `the driver's device source does not list ${f.deviceId} now; the fault holds it, and the kubelet is told it is Unhealthy when it returns`,
          )
        : device.kubeletHealth === 'Unhealthy'
          ? state('active', null)
          : device.kubeletHealth === null
            ? state('pending', 'no NodeWatchResources stream is open: the kubelet is told when it opens one')
            : state('pending', 'the driver has not sent the Unhealthy health to the kubelet yet');
      continue;
    }
    if (!r) {
      out[f.id] = state('failed', `resource ${f.resource} is not served by this gateway`);
      continue;
    }
    const targets = r.devices
      .filter((d) => d.id === f.deviceId || d.replicaOf === f.deviceId)
      .map((d) => devices[deviceKey(r.name, d.id)]!);
    if (targets.length === 0) {
      out[f.id] = state(
        'device-absent',
        `the device source does not list ${f.deviceId} now; the fault holds it, and the kubelet is told it is Unhealthy when it returns`,
      );
    } else if (targets.every((d) => d.kubeletHealth === 'Unhealthy')) {
      out[f.id] = state('active', null);
    } else if (targets.some((d) => d.kubeletHealth === null)) {
      out[f.id] = state('pending', 'no ListAndWatch stream is open: the kubelet is told when it connects');
    } else {
      out[f.id] = state('pending', 'the plugin has not sent the Unhealthy list to the kubelet yet');
    }
  }
  return out;
}

/**
 * A fault that is a DeviceTaintRule (another driver's device): 'active' once the DeviceTaintRule
 * informer holds the rule with the fault's effect, with the rule's status as the controller wrote it.
 */
function taintRuleFault(
  f: FaultRecord,
  state: (phase: FaultState['state'], stateReason: string | null) => FaultState,
  kube: DraKubeInput | null,
  dra: DraState,
): FaultState {
  const rule = f.taintRule!;
  const stored = kube?.taintRules.find((r) => r.metadata.name === rule.name) ?? null;
  const effect = f.taint ?? 'None';
  const condition = stored?.status?.conditions?.find(
    (c) => c.type === DEVICE_TAINT_CONDITION_EVICTION_IN_PROGRESS,
  );
  const device = dra.devices[`${rule.driver}/${rule.pool}/${rule.device}`];
  const taintRuleStatus: FaultTaintRuleStatus = {
    observed: stored !== null,
    effect: stored?.spec.taint.effect ?? null,
    condition: condition
      ? {
          status: condition.status,
          reason: condition.reason,
          message: condition.message,
          lastTransitionTime: condition.lastTransitionTime,
          current: condition.observedGeneration === stored?.metadata.generation,
        }
      : null,
    podsUsingDevice: [...new Set(device?.allocations.flatMap((a) => a.pods) ?? [])].sort(),
  };
  const phase: [FaultState['state'], string | null] = !kube
    ? ['pending', 'the DeviceTaintRule informer is not running (no Kubernetes API)']
    : kube.notServed['DeviceTaintRule']
      ? ['failed', `the API server does not serve DeviceTaintRule: ${kube.notServed['DeviceTaintRule']}`]
      : !stored
        ? ['pending', `the API server does not hold DeviceTaintRule ${rule.name} (yet)`]
        : stored.spec.taint.effect !== effect
          ? [
              'pending',
              `DeviceTaintRule ${rule.name} has effect ${stored.spec.taint.effect}, not ${effect} (yet)`,
            ]
          : ['active', null];
  return { ...state(phase[0], phase[1]), taintRuleStatus };
}

function buildDevices(
  inputs: ModelInputs,
  index: AllocationIndex,
  cache: BuildCache | null,
): Record<string, DeviceState> {
  // Devices a fault holds: the ones the plugin took (a failed fault holds nothing).
  const held = new Set<string>();
  for (const f of inputs.faults) if (!f.failure) held.add(deviceKey(f.resource, f.deviceId));
  const devices: Record<string, DeviceState> = {};
  let layoutChanged = false;
  let podDevicesChanged = false;
  for (const r of inputs.resources) {
    const keys = keysOf(r, cache);
    // In step (the list last sent is the plugin's current list, the usual case) the kubelet was told
    // each device's own health: no lookup table.
    const inStep = r.reported === r.devices;
    const told = inStep ? null : reportedHealth(r, cache);
    for (let i = 0; i < r.devices.length; i++) {
      const d = r.devices[i]!;
      const key = keys[i]!;
      const allocation = index.byDevice.get(key) ?? null;
      const kubeletHealth = inStep ? d.health : (told?.get(d.id) ?? null);
      const fault =
        held.size > 0 && (held.has(key) || (d.replicaOf !== null && held.has(deviceKey(r.name, d.replicaOf))))
          ? kubeletHealth === 'Unhealthy'
            ? 'active'
            : 'pending'
          : null;
      const cached = cache?.devices.get(key);
      // Compare before allocating: most devices are unchanged on most rebuilds.
      if (
        cached &&
        cached.health === d.health &&
        cached.reason === d.reason &&
        cached.since === d.since &&
        cached.replicaOf === d.replicaOf &&
        cached.kubeletHealth === kubeletHealth &&
        cached.fault === fault &&
        sameItems(cached.numaNodes, d.numaNodes) &&
        sameAllocation(cached.allocation, allocation)
      ) {
        devices[key] = cached;
        continue;
      }
      if (!cached || !sameItems(cached.numaNodes, d.numaNodes)) layoutChanged = true;
      if (allocation || cached?.allocation) podDevicesChanged = true;
      const state: DeviceState = {
        key,
        resource: r.name,
        id: d.id,
        servedBy: 'plugin',
        health: d.health,
        reason: d.reason,
        since: d.since,
        numaNodes: [...d.numaNodes],
        replicaOf: d.replicaOf,
        kubeletHealth,
        fault,
        faulted: fault === 'active',
        allocation,
      };
      devices[key] = state;
      cache?.devices.set(key, state);
    }
  }
  if (cache) {
    if (cache.devices.size !== Object.keys(devices).length) {
      cache.devices = new Map(Object.entries(devices));
      layoutChanged = true;
    }
    if (layoutChanged) cache.layout = {};
    if (layoutChanged || podDevicesChanged) cache.podDevices = {};
  }
  return devices;
}

function buildResources(
  inputs: ModelInputs,
  devices: Record<string, DeviceState>,
  index: AllocationIndex,
  cache: BuildCache | null,
): Record<string, ResourceState> {
  const node = inputs.kube?.node ?? null;
  const out: Record<string, ResourceState> = {};
  for (const r of inputs.resources) {
    const keys = keysOf(r, cache);
    const kubeletAllocatable = inputs.podResources
      ? (index.allocatable.get(r.name) ?? new Set<string>())
      : null;
    const count = () => {
      let healthy = 0;
      let allocated = 0;
      let free = 0;
      const perPhysical = new Map<string, number>();
      for (const key of keys) {
        const d = devices[key]!;
        if (d.health === 'Healthy') healthy++;
        if (d.allocation) allocated++;
        const schedulable = kubeletAllocatable ? kubeletAllocatable.has(d.id) : d.health === 'Healthy';
        if (schedulable && !d.allocation) free++;
        if (d.replicaOf !== null) perPhysical.set(d.replicaOf, (perPhysical.get(d.replicaOf) ?? 0) + 1);
      }
      return {
        kubelet: {
          capacity: keys.length,
          allocatable: kubeletAllocatable ? kubeletAllocatable.size : healthy,
          allocated,
          free,
          healthy,
          unhealthy: keys.length - healthy,
        },
        replicas: perPhysical.size ? Math.max(...perPhysical.values()) : 1,
      };
    };
    // Registration and the Node status change on their own; the counts only with devices/allocatable.
    const { kubelet, replicas } = cache
      ? cache.memo(`counts:${r.name}`, [devices, keys, kubeletAllocatable], count)
      : count();
    out[r.name] = {
      name: r.name,
      servedBy: 'plugin',
      kubelet,
      apiServer: node
        ? {
            capacity: parseCount(node.status?.capacity?.[r.name]),
            allocatable: parseCount(node.status?.allocatable?.[r.name]),
            staleSince: r.registration.waitingSince,
          }
        : null,
      registration: { ...r.registration },
      replicas,
      deviceKeys: keys,
    };
  }
  return out;
}

function buildNuma(
  inputs: ModelInputs,
  devices: Record<string, DeviceState>,
): { nodes: Record<string, NumaNodeState> } {
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
  // PodResources' cpu_ids carry no NUMA node: the host layout (sysfs) places them.
  const host = inputs.topology?.host ?? null;
  if (host) {
    const allocatableCpus = new Set((alloc?.cpuIds ?? []).map(Number));
    for (const h of host.nodes) {
      const n = get(h.id);
      n.cpuIds = [...h.cpuIds];
      n.cpuCores = coresOf(host, h.cpuIds);
      n.memoryTotalBytes = h.memTotalBytes;
      // Under the static CPU policy the kubelet lists every CPU except the reserved ones.
      if (allocatableCpus.size > 0) n.reservedCpuIds = h.cpuIds.filter((c) => !allocatableCpus.has(c));
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

const podDeviceKeyCache = new WeakMap<podresources.PodResources, string[]>();

/** Device keys a PodResources pod holds (memoised per answer object, which the poller keeps stable). */
function podDeviceKeys(pr: podresources.PodResources): string[] {
  let keys = podDeviceKeyCache.get(pr);
  if (!keys) {
    keys = [];
    for (const c of pr.containers)
      for (const d of c.devices) for (const id of d.deviceIds) keys.push(deviceKey(d.resourceName, id));
    podDeviceKeyCache.set(pr, keys);
  }
  return keys;
}

function podDeviceStates(
  pr: podresources.PodResources | undefined,
  devices: Record<string, DeviceState>,
): unknown[] {
  return pr ? podDeviceKeys(pr).map((k) => devices[k]) : [];
}

interface PodIndex {
  prPods: Map<string, podresources.PodResources>;
  kubePods: Map<string, V1Pod>;
  keys: string[];
}

function indexPods(inputs: ModelInputs): PodIndex {
  const prPods = new Map<string, podresources.PodResources>();
  for (const p of inputs.podResources?.pods ?? []) prPods.set(podKey(p.namespace, p.name), p);
  const kubePods = new Map<string, V1Pod>();
  for (const p of inputs.kube?.pods ?? []) {
    if (p.metadata?.name) kubePods.set(podKey(p.metadata.namespace ?? 'default', p.metadata.name), p);
  }
  return { prPods, kubePods, keys: [...new Set([...prPods.keys(), ...kubePods.keys()])].sort() };
}

/** A claim of the pod whose devices the kubelet reports Unhealthy in `allocatedResourcesStatus`. */
const claimReportedUnhealthy = (containers: readonly ContainerState[]): boolean =>
  containers.some((c) =>
    c.allocatedResourcesStatus.some(
      (r) => r.resource.startsWith('claim:') && r.devices.some((d) => d.health === 'Unhealthy'),
    ),
  );

function buildPods(
  inputs: ModelInputs,
  devices: Record<string, DeviceState>,
  dra: DraState,
  cache: BuildCache | null,
): Record<string, PodState> {
  const make = () => indexPods(inputs);
  const { prPods, kubePods, keys } = cache
    ? cache.memo('pod-index', [inputs.podResources?.pods, ...(inputs.kube?.pods ?? [])], make)
    : make();
  const pods: Record<string, PodState> = {};
  const nextCache = new Map<
    string,
    { pr: unknown; kp: unknown; signature: readonly unknown[]; state: PodState }
  >();
  for (const key of keys) {
    const pr = prPods.get(key);
    const kp = kubePods.get(key);
    // A pod's state depends on its PodResources entry, its API object and its devices' health and
    // NUMA nodes; when all of those are the same objects/values, reuse last build's PodState.
    // The pod's devices as DeviceState objects: reused objects mean unchanged health and NUMA nodes.
    const hit = cache?.pods.get(key);
    const topo = inputs.topology ?? null;
    // Its claims and DRA devices: reused objects mean unchanged allocations, health and NUMA nodes.
    const draHeld = podDra(kp, pr, dra);
    const draDevices = draHeld.deviceKeys.map((k) => dra.devices[k]);
    const signature = cache
      ? [
          ...podDeviceStates(pr, devices),
          ...draHeld.claims,
          ...draDevices,
          topo?.host,
          topo?.kubelet?.topologyManagerPolicy,
          // Not the preferred-allocation records: a pod's own arrive before its devices show in
          // PodResources (a changed entry rebuilds it), so every new record need not rebuild all pods.
          topo?.admissions.get(key),
        ]
      : [];
    if (hit && hit.pr === pr && hit.kp === kp && sameItems(hit.signature, signature)) {
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
    // NUMA nodes of devices the plugin does not advertise (any more), from PodResources' topology.
    const reportedNuma = new Map<string, number[]>();
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
            if (dev.health === 'Unhealthy') affected = true;
          } else {
            reportedNuma.set(k, numaIds(d.topology));
          }
        }
      }
      const memory = (c?.memory ?? []).map((m) => ({
        type: m.memoryType,
        size: Number(m.size),
        numaNodes: numaIds(m.topology),
      }));
      const cpuIds = [...(c?.cpuIds ?? [])].map(Number).sort((a, b) => a - b);
      const host = topo?.host;
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
        cpuIds,
        ...(host && cpuIds.length ? { cpuNumaNodes: cpuIds.map((id) => host.numaOfCpu.get(id) ?? -1) } : {}),
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
      containers.find((c) => c.state === 'terminated' && c.stateReason && c.stateReason !== 'Completed')
        ?.stateReason ??
      kp?.status?.reason ??
      null;
    // DRA: a device of its claims the driver says is Unhealthy (for a driver not run here, the
    // health the kubelet reports), or a claim the kubelet reports Unhealthy in the pod's status.
    if (!affected)
      affected = draDevices.some((d) => d?.health === 'Unhealthy') || claimReportedUnhealthy(containers);
    pods[key] = {
      key,
      namespace,
      name,
      phase,
      reason,
      containers,
      affectedByUnhealthyDevice: affected,
      numaAlignment: alignmentOf(
        alignmentParts(
          containers,
          (k) => devices[k]?.numaNodes ?? reportedNuma.get(k) ?? [],
          (k) => dra.devices[k]?.numaNodes ?? [],
        ).map((p) => (p.kind === 'cpus' ? { ...p, numaNodes: p.numaNodes.filter((n) => n >= 0) } : p)),
        topo?.admissions.get(key) ?? null,
        !topo?.host && containers.some((c) => c.cpuIds.length > 0),
      ),
      ...(topo ? { topology: podTopology(key, containers, topo) } : {}),
      ...(kp?.spec?.resourceClaims?.length ? { claims: podClaimRefs(kp) } : {}),
    };
    if (cache) nextCache.set(key, { pr, kp, signature, state: pods[key] });
  }
  if (cache) cache.pods = nextCache;
  return pods;
}

/**
 * Builds the snapshot. With a cache, each section is recomputed only when one of its inputs is a
 * different object than last time (sources replace their inputs on change and keep them otherwise),
 * so e.g. a Node status update rebuilds the resource counts but not 1,024 devices and 250 pods.
 */
export function buildSnapshot(inputs: ModelInputs, cache: BuildCache | null = null): NodeSnapshot {
  const m = <T>(name: string, deps: readonly unknown[], compute: () => T): T =>
    cache ? cache.memo(name, deps, compute) : compute();
  // PodResources' pod list and allocatable set change independently (a fault moves allocatable only).
  const prPods = inputs.podResources?.pods;
  const prAllocatable = inputs.podResources?.allocatable;
  const index: AllocationIndex = {
    byDevice: m('allocations', [prPods], () => indexAllocations(prPods ?? [])),
    allocatable: m('allocatable', [prAllocatable], () => indexAllocatable(prAllocatable)),
  };
  const ownDevices = m(
    'devices',
    [index.byDevice, inputs.faults, ...inputs.resources.flatMap((r) => [r.name, r.devices, r.reported])],
    () => buildDevices(inputs, index, cache),
  );
  const draDrivers = inputs.draDrivers ?? [];
  const kube = inputs.kube;
  // Resources of other device plugins, as the kubelet shows them (observed.ts).
  const observed = m(
    'observed',
    [prPods, prAllocatable, kube?.node, ...(kube?.pods ?? []), ...inputs.resources.map((r) => r.name)],
    () =>
      buildObserved(
        {
          own: new Set(inputs.resources.map((r) => r.name)),
          podResources: inputs.podResources,
          node: kube?.node ?? null,
          pods: kube?.pods ?? [],
          now: inputs.now ?? inputs.updatedAt,
        },
        parseCount,
        cache?.observed ?? null,
      ),
  );
  const devices = m('all-devices', [ownDevices, observed.devices], () =>
    Object.keys(observed.devices).length === 0 ? ownDevices : { ...ownDevices, ...observed.devices },
  );
  const dra = m(
    'dra',
    [...draDrivers, kube?.dra, kube?.waitingPods, prPods, inputs.faults, ...(kube?.pods ?? [])],
    () =>
      buildDra(
        {
          nodeName: inputs.nodeName,
          drivers: draDrivers,
          kube: kube?.dra ?? null,
          pods: kube?.pods ?? [],
          waitingPods: kube?.waitingPods ?? [],
          podResources: prPods ?? null,
          faults: inputs.faults,
        },
        cache?.dra ?? null,
      ),
  );
  const faults = m('faults', [inputs.faults, devices, dra, inputs.kube?.dra?.taintRules], () =>
    buildFaults(inputs, devices, dra),
  );
  const resources = { ...buildResources(inputs, ownDevices, index, cache), ...observed.resources };
  const pods = m(
    'pods',
    [
      cache?.podDevices ?? devices,
      observed.devices,
      // The pods section's DRA input: a new token only when a claim, or a DRA device a claim or
      // PodResources names, is another object. A fault on a free DRA device leaves the pods alone.
      m(
        'pod-dra',
        m('pod-held-dra', [dra, prPods], () => podHeldDra(dra, prPods)),
        () => ({}),
      ),
      prPods,
      inputs.topology,
      ...(inputs.kube?.pods ?? []),
    ],
    () => buildPods(inputs, devices, dra, cache),
  );
  const extendedResources = m(
    'extended-resources',
    [
      kube?.node,
      kube?.dra?.deviceClasses,
      pods,
      dra.claims,
      ...Object.values(resources),
      ...(kube?.pods ?? []),
    ],
    () =>
      buildExtendedResources(
        {
          node: kube?.node ?? null,
          resources,
          deviceClasses: kube?.dra?.deviceClasses ?? null,
          pods: kube?.pods ?? [],
          podStates: pods,
          claims: dra.claims,
          publishesDraDevices: Object.values(dra.drivers).some((d) => d.counts.published > 0),
        },
        parseCount,
      ),
  );
  return {
    schema: 1,
    nodeName: inputs.nodeName,
    updatedAt: inputs.updatedAt,
    gateway: inputs.gateway,
    resources,
    devices,
    numa: m('numa', [cache?.layout ?? devices, observed.devices, prAllocatable, inputs.topology?.host], () =>
      buildNuma(inputs, devices),
    ),
    pods,
    faults,
    events: inputs.events as NodeEvent[],
    sources: inputs.sources,
    dra,
    extendedResources,
    ...(inputs.topology
      ? {
          topology: m(
            'topology',
            [
              inputs.topology.host,
              inputs.topology.kubelet,
              inputs.topology.hostReason,
              inputs.topology.kubeletReason,
              inputs.topology.admit,
              inputs.topology.predictionBlocked,
            ],
            () => nodeTopology(inputs.topology!),
          ),
        }
      : {}),
  };
}
