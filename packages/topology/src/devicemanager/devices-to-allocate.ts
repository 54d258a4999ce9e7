// Which devices a container gets (pkg/kubelet/cm/devicemanager/manager.go, release-1.33:
// devicesToAllocate and filterByAffinity): devices reusable from init containers first, then the
// devices inside the Topology Manager's affinity (the plugin's preferred allocation among them
// when they are more than needed), then the plugin's preference among the rest, then the unaligned
// and the no-affinity ones. Pure: asking the plugin (GetPreferredAllocation) is the caller's
// callback, so kubelet-sim calls the plugin's RPC and the gateway the plugin's own policy.

import { isSet, type Mask } from '../topologymanager/bitmask.js';
import { deviceHasTopologyAlignment } from './topology-hints.js';
import { NODE_WITHOUT_TOPOLOGY, type DeviceView } from './types.js';

export interface DevicesToAllocateRequest {
  podUid: string;
  container: string;
  resource: string;
  required: number;
  /** Devices of the pod's init containers this container may take first. */
  reusable: ReadonlySet<string>;
  /** The Topology Manager's merged affinity; null for none. */
  affinity: Mask | null;
}

/** The resource as the device manager knows it when the pick starts. */
export interface ResourceDeviceState {
  /** How many devices of the resource the container already holds (a restart); undefined for none. */
  existing: number | undefined;
  /** The last ListAndWatch message's devices, in the plugin's order. */
  devices: ReadonlyMap<string, DeviceView> | undefined;
  /** Healthy device IDs; undefined for a resource no plugin registered. */
  healthy: ReadonlySet<string> | undefined;
  /** Devices allocated to any container. */
  inUse: ReadonlySet<string>;
  /**
   * callGetPreferredAllocationIfAvailable: the plugin's choice of `size` devices among `available`
   * including `mustInclude`; null when the plugin offers no preference (it is then not asked).
   */
  preferred: (available: string[], mustInclude: string[], size: number) => Promise<string[] | null>;
}

export interface Picked {
  picked: string[];
  /** The plugin's GetPreferredAllocation answer; null when it was not asked. */
  preferred: string[] | null;
}

/**
 * devicesToAllocate: the devices for one container and resource; null when the container already
 * holds them. Throws the kubelet's error text when the request cannot be met.
 */
export async function devicesToAllocate(
  req: DevicesToAllocateRequest,
  r: ResourceDeviceState,
): Promise<Picked | null> {
  const { podUid, container, resource, required } = req;
  if (r.existing !== undefined) {
    if (r.existing !== required) {
      throw new Error(
        `pod "${podUid}" container "${container}" changed request for resource "${resource}" from ${r.existing} to ${required}`,
      );
    }
    return null;
  }
  if (!r.healthy) throw new Error(`cannot allocate unregistered device ${resource}`);
  if (r.healthy.size === 0)
    throw new Error(`no healthy devices present; cannot allocate unhealthy devices ${resource}`);
  const devices = r.devices;
  const allocated: string[] = [];
  let preferredAnswer: string[] | null = null;
  let needed = required;
  const takeFrom = (ids: Iterable<string>): boolean => {
    for (const id of ids) {
      if (needed === 0) break;
      if (allocated.includes(id)) continue;
      allocated.push(id);
      needed--;
    }
    return needed === 0;
  };
  const done = () => ({ picked: allocated, preferred: preferredAnswer });
  if (takeFrom(req.reusable)) return done();

  const available = orderedDevices(devices).filter(
    (id) => r.healthy?.has(id) && !r.inUse.has(id) && !allocated.includes(id),
  );
  if (available.length < needed) {
    throw new Error(
      `requested number of devices unavailable for ${resource}. Requested: ${needed}, Available: ${available.length}`,
    );
  }
  const preferred = async (candidates: string[]): Promise<string[]> => {
    const answer = await r.preferred([...new Set([...candidates, ...allocated])], [...allocated], required);
    if (answer !== null) preferredAnswer = answer;
    return answer ?? [];
  };
  const fail = () =>
    new Error(
      `unexpectedly allocated less resources than required. Requested: ${required}, Got: ${required - needed}`,
    );
  // Without topology there is nothing to align: the plugin's preference, then first-fit.
  if (!deviceHasTopologyAlignment(devices)) {
    const pref = await preferred(available);
    if (takeFrom(pref.filter((id) => available.includes(id)))) return done();
    if (takeFrom(available)) return done();
    throw fail();
  }
  const { aligned, unaligned, noAffinity } = filterByAffinity(devices, available, req.affinity);
  if (needed < aligned.length) {
    const pref = await preferred(aligned);
    if (takeFrom(pref.filter((id) => aligned.includes(id)))) return done();
    if (takeFrom(aligned)) return done();
    throw fail();
  }
  if (takeFrom(aligned)) return done();
  const pref = await preferred(available);
  if (takeFrom(pref.filter((id) => available.includes(id)))) return done();
  if (takeFrom(unaligned)) return done();
  if (takeFrom(noAffinity)) return done();
  throw fail();
}

/** The picked devices per NUMA node, as the kubelet records them (NODE_WITHOUT_TOPOLOGY for none). */
export function devicesByNuma(
  picked: readonly string[],
  devices: ReadonlyMap<string, DeviceView> | undefined,
): Map<number, string[]> {
  const byNuma = new Map<number, string[]>();
  for (const id of picked) {
    const nodes = devices?.get(id)?.numaNodes ?? [];
    for (const n of nodes.length > 0 ? nodes : [NODE_WITHOUT_TOPOLOGY])
      byNuma.set(n, [...(byNuma.get(n) ?? []), id]);
  }
  return byNuma;
}

/** Devices in first-fit order: by lowest NUMA node, then the plugin's order; no topology last. */
function orderedDevices(devices: ReadonlyMap<string, DeviceView> | undefined): string[] {
  const list = [...(devices?.values() ?? [])];
  const rank = (d: DeviceView) =>
    d.numaNodes.length === 0 ? Number.MAX_SAFE_INTEGER : Math.min(...d.numaNodes);
  return list
    .map((d, i) => ({ d, i }))
    .sort((a, b) => rank(a.d) - rank(b.d) || a.i - b.i)
    .map(({ d }) => d.id);
}

/**
 * filterByAffinity: available devices split into those on NUMA nodes inside the affinity,
 * those on other NUMA nodes, and those without topology. NUMA nodes are visited affinity
 * first, then by how many available devices they hold (more first), then by ID.
 */
function filterByAffinity(
  devices: ReadonlyMap<string, DeviceView> | undefined,
  available: string[],
  affinity: Mask | null,
): { aligned: string[]; unaligned: string[]; noAffinity: string[] } {
  if (affinity === null) return { aligned: [], unaligned: [], noAffinity: [...available] };
  const perNode = new Map<number, string[]>();
  for (const id of available) {
    const nodes = devices?.get(id)?.numaNodes ?? [];
    for (const n of nodes.length ? nodes : [NODE_WITHOUT_TOPOLOGY])
      perNode.set(n, [...(perNode.get(n) ?? []), id]);
  }
  const inMask = (n: number) => n !== NODE_WITHOUT_TOPOLOGY && isSet(affinity, n);
  const nodes = [...perNode.keys()].sort(
    (a, b) =>
      Number(inMask(b)) - Number(inMask(a)) ||
      Number(a === NODE_WITHOUT_TOPOLOGY) - Number(b === NODE_WITHOUT_TOPOLOGY) ||
      perNode.get(b)!.length - perNode.get(a)!.length ||
      a - b,
  );
  const seen = new Set<string>();
  const out = { aligned: [] as string[], unaligned: [] as string[], noAffinity: [] as string[] };
  for (const n of nodes) {
    const list = inMask(n) ? out.aligned : n === NODE_WITHOUT_TOPOLOGY ? out.noAffinity : out.unaligned;
    for (const id of perNode.get(n)!) {
      if (seen.has(id)) continue;
      seen.add(id);
      list.push(id);
    }
  }
  return out;
}
