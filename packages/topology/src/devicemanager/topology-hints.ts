// The device manager as a Topology Manager hint provider (pkg/kubelet/cm/devicemanager
// topology_hints.go, release-1.33): deviceHasTopologyAlignment and the hints for one resource
// request (GetTopologyHints → generateDeviceTopologyHints).

import { isSet, type Mask } from '../topologymanager/bitmask.js';
import { generateHints, type TopologyHint } from '../topologymanager/topology-manager.js';
import type { DeviceView } from './types.js';

/** deviceHasTopologyAlignment: any device of the resource reports NUMA nodes. */
export function deviceHasTopologyAlignment(devices: ReadonlyMap<string, DeviceView> | undefined): boolean {
  return [...(devices?.values() ?? [])].some((d) => d.numaNodes.length > 0);
}

/**
 * Null (no preference) for a resource without topology, [] when too few devices are free, else a
 * hint per NUMA combination holding enough free devices (reusable ones included, and they must lie
 * inside it); preferred when as narrow as the narrowest combination whose devices, free or not,
 * could hold the request.
 */
export function generateDeviceTopologyHints(
  devices: ReadonlyMap<string, DeviceView> | undefined,
  healthy: ReadonlySet<string> | undefined,
  inUse: ReadonlySet<string>,
  needed: number,
  reusable: ReadonlySet<string>,
  numaIds: readonly number[],
): TopologyHint[] | null {
  if (!devices || !deviceHasTopologyAlignment(devices)) return null;
  const available = [...(healthy ?? [])].filter((id) => !inUse.has(id) && !reusable.has(id));
  if (available.length + reusable.size < needed) return [];
  const numaOf = (id: string) => devices.get(id)?.numaNodes ?? [];
  const anyIn = (mask: Mask, id: string) => numaOf(id).some((n) => isSet(mask, n));
  return generateHints(
    numaIds,
    needed,
    (mask) => [...devices.keys()].filter((id) => anyIn(mask, id)).length,
    (mask) => {
      let matching = 0;
      for (const id of reusable) {
        if (numaOf(id).length === 0) continue;
        if (!anyIn(mask, id)) return null;
        matching++;
      }
      return matching + available.filter((id) => anyIn(mask, id)).length;
    },
  );
}
