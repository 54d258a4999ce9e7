// Resources this gateway does not serve, as the kubelet shows them: another device plugin on the
// node (NVIDIA's, AMD's, Intel's, …) or an extended resource only the Node's status names. Pure,
// like build.ts: the kubelet's reports go in, `resources` and `devices` entries come out, marked by
// who serves them (`servedBy`). What the kubelet reports of a device plugin it holds:
// - the Node's status (API server): capacity = all its devices, allocatable = the healthy ones; a
//   plugin that goes has all its devices marked unhealthy at once (allocatable 0) and, after the
//   kubelet's 5-minute grace period, its resource set to capacity 0 — kept in the status, not
//   removed (pkg/kubelet/cm/devicemanager GetCapacity, kubelet_node_status's MachineInfo setter);
// - PodResources `GetAllocatableResources`: the healthy devices, with their NUMA topology;
// - PodResources `List`: which container holds which device;
// - a holder's `status.containerStatuses[].allocatedResourcesStatus` (KEP-4680): its devices' health.
// An unhealthy device no pod holds is in none of these by ID: the count says how many, a note
// says the rest is unknown.
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { podresources } from '@plugboard/proto';
import { isExtendedResourceName } from '@plugboard/topology';
import type {
  DeviceAllocation,
  DeviceState,
  Health,
  ObservedResourceView,
  RegistrationState,
  ResourceServedBy,
  ResourceState,
} from '@plugboard/api';

export interface ObservedInput {
  /** The resources this gateway's own plugins serve (left out here). */
  own: ReadonlySet<string>;
  /** PodResources `List` and `GetAllocatableResources` (null: PodResources unavailable). */
  podResources: {
    pods: readonly podresources.PodResources[];
    allocatable: podresources.AllocatableResourcesResponse;
  } | null;
  node: V1Node | null;
  pods: readonly V1Pod[];
  /** Time of this build: `since` of a device first seen or changing health. */
  now: string;
}

/** What one build keeps for the next: devices (for `since`) and resources PodResources has listed. */
export class ObservedMemory {
  devices = new Map<string, DeviceState>();
  /** Resources whose devices PodResources listed while this gateway watched: 'device-plugin'. */
  readonly listed = new Set<string>();
}

export interface ObservedResult {
  resources: Record<string, ResourceState>;
  devices: Record<string, DeviceState>;
}

export const isOwnResource = (r: Pick<ResourceState, 'servedBy'>): boolean =>
  (r.servedBy ?? 'plugin') === 'plugin';

const key = (resource: string, id: string): string => `${resource}/${id}`;

const numaOf = (t: podresources.TopologyInfo | undefined): number[] =>
  [...new Set((t?.nodes ?? []).map((n) => Number(n.ID)))].sort((a, b) => a - b);

interface SeenDevice {
  numaNodes: number[];
  allocatable: boolean;
  allocation: DeviceAllocation | null;
  /** The holder's allocatedResourcesStatus for it, when the kubelet reports one. */
  reportedHealth: string | null;
}

/** Every device of a resource the kubelet names, by resource then ID. */
function indexDevices(input: ObservedInput): Map<string, Map<string, SeenDevice>> {
  const out = new Map<string, Map<string, SeenDevice>>();
  const get = (resource: string, id: string): SeenDevice | null => {
    if (input.own.has(resource)) return null;
    let ids = out.get(resource);
    if (!ids) out.set(resource, (ids = new Map<string, SeenDevice>()));
    let d = ids.get(id);
    if (!d) ids.set(id, (d = { numaNodes: [], allocatable: false, allocation: null, reportedHealth: null }));
    return d;
  };
  for (const cd of input.podResources?.allocatable.devices ?? []) {
    for (const id of cd.deviceIds) {
      const d = get(cd.resourceName, id);
      if (d) Object.assign(d, { allocatable: true, numaNodes: numaOf(cd.topology) });
    }
  }
  for (const pod of input.podResources?.pods ?? []) {
    for (const c of pod.containers) {
      for (const cd of c.devices) {
        for (const id of cd.deviceIds) {
          const d = get(cd.resourceName, id);
          if (!d) continue;
          d.allocation = { namespace: pod.namespace, pod: pod.name, container: c.name };
          if (d.numaNodes.length === 0) d.numaNodes = numaOf(cd.topology);
        }
      }
    }
  }
  // KEP-4680: the kubelet reports the health of the devices a container holds, by resource name.
  for (const pod of input.pods) {
    for (const s of pod.status?.containerStatuses ?? []) {
      for (const r of s.allocatedResourcesStatus ?? []) {
        const ids = out.get(r.name);
        if (!ids) continue;
        for (const x of r.resources ?? []) {
          const d = ids.get(x.resourceID);
          if (d) d.reportedHealth = x.health ?? null;
        }
      }
    }
  }
  return out;
}

function deviceHealth(d: SeenDevice): { health: Health; reason: string | null } {
  if (d.reportedHealth === 'Unhealthy')
    return {
      health: 'Unhealthy',
      reason: "the kubelet reports it Unhealthy in its holder's allocatedResourcesStatus",
    };
  if (d.allocatable) return { health: 'Healthy', reason: null };
  return {
    health: 'Unhealthy',
    reason:
      "held by a pod but not among the kubelet's healthy devices (PodResources GetAllocatableResources)",
  };
}

const sameNuma = (a: readonly number[], b: readonly number[]): boolean =>
  a.length === b.length && a.every((n, i) => n === b[i]);

const sameAllocation = (a: DeviceAllocation | null, b: DeviceAllocation | null): boolean =>
  a === b ||
  (a !== null && b !== null && a.namespace === b.namespace && a.pod === b.pod && a.container === b.container);

function registrationOf(capacity: number): RegistrationState {
  return {
    // What the kubelet shows: the resource advertised (capacity > 0) or set to 0. Its registration
    // itself (Register, the ListAndWatch stream) is between the plugin and the kubelet.
    phase: capacity > 0 ? 'registered' : 'stopped',
    registeredAt: null,
    waitingSince: null,
    kubeletRestartsSeen: 0,
    lastListAndWatchSend: null,
    error:
      capacity > 0
        ? null
        : 'capacity 0: the kubelet holds no device plugin for it (the plugin left and the 5-minute grace period ended, or it never advertised a device)',
  };
}

function noteOf(
  view: { capacity: number | null; healthy: number | null; unhealthy: number | null; unhealthyNamed: number },
  hasPodResources: boolean,
): string | null {
  const notes: string[] = [];
  if (view.unhealthy !== null && view.unhealthy > view.unhealthyNamed) {
    notes.push(
      `${view.unhealthy} of ${view.capacity} unhealthy — the kubelet does not say which unless a pod holds them` +
        (view.healthy === 0
          ? ' (all of them: every device failed, or the device plugin left and the kubelet keeps its capacity for a 5-minute grace period)'
          : ''),
    );
  }
  if (view.capacity === null)
    notes.push(
      'capacity unknown: the Node status (Kubernetes API) is not available, and PodResources lists healthy devices only',
    );
  if (!hasPodResources) notes.push('device IDs unknown: PodResources is not available');
  return notes.length ? notes.join('; ') : null;
}

/**
 * The observed resources and their devices. `parseCount` is build.ts's Quantity reader (one
 * definition); `memory` (optional) keeps `since` stable and 'device-plugin' sticky across builds.
 */
export function buildObserved(
  input: ObservedInput,
  parseCount: (q: string | undefined) => number,
  memory: ObservedMemory | null,
): ObservedResult {
  const seen = indexDevices(input);
  const node = input.node;
  const names = new Set<string>(seen.keys());
  for (const name of Object.keys(node?.status?.capacity ?? {}))
    if (isExtendedResourceName(name) && !input.own.has(name)) names.add(name);
  for (const name of seen.keys()) memory?.listed.add(name);

  const resources: Record<string, ResourceState> = {};
  const devices: Record<string, DeviceState> = {};
  const nextDevices = new Map<string, DeviceState>();
  for (const name of [...names].sort()) {
    const ids = seen.get(name) ?? new Map<string, SeenDevice>();
    const servedBy: ResourceServedBy =
      ids.size > 0 || memory?.listed.has(name) ? 'device-plugin' : 'node-status';
    const deviceKeys: string[] = [];
    let allocatable = 0;
    let allocated = 0;
    let free = 0;
    let unhealthyNamed = 0;
    for (const id of [...ids.keys()].sort()) {
      const d = ids.get(id)!;
      const k = key(name, id);
      deviceKeys.push(k);
      const { health, reason } = deviceHealth(d);
      if (d.allocatable) allocatable++;
      if (d.allocation) allocated++;
      if (d.allocatable && !d.allocation) free++;
      if (health === 'Unhealthy') unhealthyNamed++;
      const prev = memory?.devices.get(k);
      const state: DeviceState =
        prev &&
        prev.health === health &&
        prev.reason === reason &&
        sameNuma(prev.numaNodes, d.numaNodes) &&
        sameAllocation(prev.allocation, d.allocation)
          ? prev
          : {
              key: k,
              resource: name,
              id,
              servedBy,
              health,
              reason,
              since: prev && prev.health === health ? prev.since : input.now,
              numaNodes: d.numaNodes,
              replicaOf: null,
              kubeletHealth: health,
              fault: null,
              faulted: false,
              allocation: d.allocation,
            };
      devices[k] = state;
      nextDevices.set(k, state);
    }
    const nodeCapacity = node ? parseCount(node.status?.capacity?.[name]) : null;
    const nodeAllocatable = node ? parseCount(node.status?.allocatable?.[name]) : null;
    const hasPodResources = input.podResources !== null;
    // The kubelet's own numbers: the Node status it writes for capacity (PodResources lists healthy
    // devices only), PodResources for allocatable when it answers.
    const healthy = hasPodResources ? allocatable : nodeAllocatable;
    const capacity = nodeCapacity ?? deviceKeys.length;
    const unhealthy = nodeCapacity !== null && healthy !== null ? Math.max(0, nodeCapacity - healthy) : null;
    const view: ObservedResourceView = {
      unhealthy,
      unhealthyNamed,
      note: noteOf({ capacity: nodeCapacity, healthy, unhealthy, unhealthyNamed }, hasPodResources),
    };
    resources[name] = {
      name,
      servedBy,
      observed: view,
      kubelet: {
        capacity,
        allocatable: healthy ?? 0,
        allocated,
        free,
        healthy: healthy ?? 0,
        unhealthy: unhealthy ?? unhealthyNamed,
      },
      apiServer:
        nodeCapacity !== null
          ? { capacity: nodeCapacity, allocatable: nodeAllocatable ?? 0, staleSince: null }
          : null,
      registration: registrationOf(capacity),
      replicas: 1,
      deviceKeys,
    };
  }
  if (memory) memory.devices = nextDevices;
  return { resources, devices };
}
