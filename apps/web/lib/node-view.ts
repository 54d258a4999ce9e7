// Pure derivations from a NodeSnapshot for the node page: the NUMA map grouping, the blast radius
// of a set of devices, the "why" behind capacity vs allocatable, and a device's history. Kept free
// of React so they are tested directly and memoised by the components that use them.
import type {
  DeviceState,
  DraDeviceState,
  FaultState,
  NodeEvent,
  NodeSnapshot,
  PodState,
  ResourceServedBy,
  ResourceState,
} from '@plugboard/api';
import { draDeviceOfTile, draPodTiles, draTaintRuleFaults, draTileKey } from './dra-view';

export interface DeviceTileModel {
  /** `${resource}/${physical device ID}` */
  key: string;
  resource: string;
  /** Physical device ID (a shared device's replicas share one tile). */
  id: string;
  /** The advertised devices behind this tile: one, or every replica of a shared device. */
  deviceKeys: string[];
}

export interface NumaGroup {
  /** "0", "1", … or "none" for devices without NUMA affinity. */
  key: string;
  label: string;
  cpuIds: number[];
  memory: Record<string, number>;
  /** Tiles of this NUMA node by resource, in the resource's stable device order. */
  resources: { resource: string; tiles: DeviceTileModel[] }[];
  /** DRA devices of this NUMA node by driver, in the pools' device order (one tile per device). */
  draDrivers: { driver: string; devices: DraDeviceState[] }[];
  /** Device-plugin devices plus DRA devices. */
  deviceCount: number;
  draDeviceCount: number;
  unhealthyCount: number;
}

function numaSortKey(key: string): number {
  return key === 'none' ? Number.MAX_SAFE_INTEGER : Number(key);
}

/** Physical device of a key: sharing replicas (`id::k`) all fail together when their device does. */
export function physicalId(d: DeviceState): string {
  return d.replicaOf ?? d.id;
}

/**
 * Groups every device of the snapshot by NUMA node, one tile per physical device. A device that
 * reports several NUMA nodes is listed under its first one (the tile names them all). Devices not
 * named by the topology block still appear (under their own numaNodes or "none") so that no
 * device is ever dropped from the map. DRA devices sit on the same NUMA nodes (from their
 * `numaNodes`), grouped by driver, beside the device-plugin resources.
 */
export function groupByNuma(node: NodeSnapshot): NumaGroup[] {
  const groups = new Map<string, NumaGroup>();
  const tiles = new Map<string, DeviceTileModel>();
  const ensure = (key: string): NumaGroup => {
    let g = groups.get(key);
    if (!g) {
      const topo = node.numa.nodes[key];
      g = {
        key,
        label: key === 'none' ? 'No NUMA affinity' : `NUMA node ${key}`,
        cpuIds: topo?.cpuIds ?? [],
        memory: topo?.memory ?? {},
        resources: [],
        draDrivers: [],
        deviceCount: 0,
        draDeviceCount: 0,
        unhealthyCount: 0,
      };
      groups.set(key, g);
    }
    return g;
  };
  for (const key of Object.keys(node.numa.nodes)) ensure(key);

  const seen = new Set<string>();
  const place = (device: DeviceState) => {
    if (seen.has(device.key)) return;
    seen.add(device.key);
    const numaKey = device.numaNodes.length > 0 ? String(device.numaNodes[0]) : 'none';
    const g = ensure(numaKey);
    g.deviceCount += 1;
    if (device.health !== 'Healthy') g.unhealthyCount += 1;
    const tileKey = `${device.resource}/${physicalId(device)}`;
    const existing = tiles.get(tileKey);
    if (existing) {
      existing.deviceKeys.push(device.key);
      return;
    }
    const tile: DeviceTileModel = {
      key: tileKey,
      resource: device.resource,
      id: physicalId(device),
      deviceKeys: [device.key],
    };
    tiles.set(tileKey, tile);
    let bucket = g.resources.find((r) => r.resource === device.resource);
    if (!bucket) {
      bucket = { resource: device.resource, tiles: [] };
      g.resources.push(bucket);
    }
    bucket.tiles.push(tile);
  };
  for (const name of Object.keys(node.resources).sort()) {
    for (const key of node.resources[name]!.deviceKeys) {
      const d = node.devices[key];
      if (d) place(d);
    }
  }
  for (const d of Object.values(node.devices)) place(d);

  const dra = node.dra;
  if (dra) {
    const placeDra = (d: DraDeviceState) => {
      if (seen.has(draTileKey(d.key))) return;
      seen.add(draTileKey(d.key));
      const g = ensure(d.numaNodes.length > 0 ? String(d.numaNodes[0]) : 'none');
      g.deviceCount += 1;
      g.draDeviceCount += 1;
      if (d.health === 'Unhealthy') g.unhealthyCount += 1;
      let bucket = g.draDrivers.find((b) => b.driver === d.driver);
      if (!bucket) {
        bucket = { driver: d.driver, devices: [] };
        g.draDrivers.push(bucket);
      }
      bucket.devices.push(d);
    };
    for (const name of Object.keys(dra.drivers).sort()) {
      const pools = dra.drivers[name]!.pools;
      for (const pool of Object.keys(pools).sort()) {
        for (const key of pools[pool]!.deviceKeys) {
          const d = dra.devices[key];
          if (d) placeDra(d);
        }
      }
    }
    // Devices the driver has but has not published yet (no pool lists them) appear too.
    for (const d of Object.values(dra.devices)) placeDra(d);
  }

  for (const g of groups.values()) {
    g.resources.sort((a, b) => a.resource.localeCompare(b.resource));
    g.draDrivers.sort((a, b) => a.driver.localeCompare(b.driver));
  }
  return [...groups.values()]
    .filter((g) => g.deviceCount > 0 || g.cpuIds.length > 0)
    .sort((a, b) => numaSortKey(a.key) - numaSortKey(b.key));
}

/** Whether a simulated fault holds the tile's device (any replica; a DRA device itself). */
export function tileFaultHeld(node: NodeSnapshot, tileKey: string): boolean {
  const dra = draDeviceOfTile(node, tileKey);
  if (dra) return dra.fault !== null || draTaintRuleFaults(node, dra).length > 0;
  return tileDevices(node, tileKey).some((d) => d.fault !== null);
}

/** Every advertised device of a tile's physical device (replicas included). */
export function tileDevices(node: NodeSnapshot, tileKey: string): DeviceState[] {
  return Object.values(node.devices).filter((d) => `${d.resource}/${physicalId(d)}` === tileKey);
}

/** device key → pod keys holding it (from the pods' container device lists, the kubelet's view). */
export function podsByDevice(node: NodeSnapshot): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const pod of Object.values(node.pods)) {
    for (const c of pod.containers) {
      for (const keys of Object.values(c.devices)) {
        for (const k of keys) {
          const list = out.get(k);
          if (!list) out.set(k, [pod.key]);
          else if (!list.includes(pod.key)) list.push(pod.key);
        }
      }
    }
  }
  return out;
}

/**
 * The pods hit if the given devices fail. A fault names a physical device, so every replica of it is
 * included; a pod counts once however many of its devices are hit.
 */
export function blastRadius(node: NodeSnapshot, deviceKeys: readonly string[]): PodState[] {
  const targets = new Set<string>();
  for (const key of deviceKeys) {
    const d = node.devices[key];
    if (!d) continue;
    const phys = physicalId(d);
    for (const other of Object.values(node.devices)) {
      if (other.resource === d.resource && physicalId(other) === phys) targets.add(other.key);
    }
  }
  const hit = new Map<string, PodState>();
  const holders = podsByDevice(node);
  for (const key of targets) {
    for (const podKey of holders.get(key) ?? []) {
      const pod = node.pods[podKey];
      if (pod) hit.set(pod.key, pod);
    }
    // The device's own allocation record covers pods the pod list has not caught up with yet.
    const alloc = node.devices[key]?.allocation;
    if (alloc) {
      const podKey = `${alloc.namespace}/${alloc.pod}`;
      const pod = node.pods[podKey];
      if (pod) hit.set(podKey, pod);
    }
  }
  return [...hit.values()].sort((a, b) => a.key.localeCompare(b.key));
}

export interface UnhealthyExplanation {
  device: DeviceState;
  fault: FaultState | null;
  heldBy: string[];
}

/** Why allocatable is below capacity: each unhealthy device with its reason, fault and holders. */
export function explainAllocatable(node: NodeSnapshot, resource: ResourceState): UnhealthyExplanation[] {
  const holders = podsByDevice(node);
  const faults = Object.values(node.faults);
  const out: UnhealthyExplanation[] = [];
  for (const key of resource.deviceKeys) {
    const d = node.devices[key];
    if (!d || d.health === 'Healthy') continue;
    const fault =
      faults.find((f) => f.resource === d.resource && (f.deviceId === d.id || f.deviceId === d.replicaOf)) ??
      null;
    const heldBy =
      holders.get(key) ?? (d.allocation ? [`${d.allocation.namespace}/${d.allocation.pod}`] : []);
    out.push({ device: d, fault, heldBy });
  }
  return out;
}

/** Events concerning one device (by ID or its physical device), newest first. */
export function deviceHistory(node: NodeSnapshot, deviceKey: string): NodeEvent[] {
  const d = node.devices[deviceKey];
  if (!d) return [];
  const ids = new Set([d.id, physicalId(d)]);
  return node.events
    .filter(
      (e) => (e.resource === null || e.resource === d.resource) && e.deviceIds.some((id) => ids.has(id)),
    )
    .reverse();
}

/** Active faults holding a device down. */
export function faultsForDevice(node: NodeSnapshot, d: DeviceState): FaultState[] {
  return Object.values(node.faults).filter(
    (f) => f.resource === d.resource && (f.deviceId === d.id || f.deviceId === physicalId(d)),
  );
}

/** Pod display status: the reason that matters most (CrashLoopBackOff, …) else the phase. */
export function podStatus(pod: PodState): string {
  return pod.reason ?? pod.phase;
}

/**
 * The tiles a pod holds — `${resource}/${physical id}` for its device-plugin devices, DRA tiles for
 * the devices of its claims: its footprint on the NUMA map.
 */
export function podFootprint(node: NodeSnapshot, podKey: string): Set<string> {
  const out = new Set<string>();
  const pod = node.pods[podKey];
  if (!pod) return out;
  for (const c of pod.containers) {
    for (const keys of Object.values(c.devices)) {
      for (const k of keys) {
        const d = node.devices[k];
        if (d) out.add(`${d.resource}/${physicalId(d)}`);
      }
    }
  }
  for (const t of draPodTiles(node, podKey)) out.add(t);
  return out;
}

/** Who serves a resource or device; absent from gateways older than observed resources: 'plugin'. */
export function servedByOf(x: { servedBy?: ResourceServedBy | undefined }): ResourceServedBy {
  return x.servedBy ?? 'plugin';
}

/** Who serves it, in words (docs/API.md "Who serves a resource"). */
export const SERVED_BY_LABEL: Readonly<Record<ResourceServedBy, string>> = {
  plugin: "this gateway's plugin",
  'device-plugin': 'another device plugin (observed)',
  'node-status': 'Node status only',
};

/** Why an observed device has no fault switch (the gateway answers such a fault with 422). */
export const OBSERVED_NO_FAULT_REASON: Readonly<Record<Exclude<ResourceServedBy, 'plugin'>, string>> = {
  'device-plugin':
    'Served by another device plugin: the device-plugin API lets only that plugin mark a device unhealthy.',
  'node-status':
    'Only the Node status names this resource: no device plugin here serves it, so nothing can mark its devices unhealthy.',
};
