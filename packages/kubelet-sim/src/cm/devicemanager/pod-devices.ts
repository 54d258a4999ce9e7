// Which devices each container holds (pkg/kubelet/cm/devicemanager/pod_devices.go, release-1.33):
// pod UID → container → resource → what Allocate returned, the devices in use per resource, and
// the conversion to and from the checkpoint's PodDeviceEntries.

import type { CheckpointEntry } from './checkpoint/checkpoint.js';
import type { ContainerAllocation } from './types.js';

export class PodDevices {
  private readonly pods = new Map<string, Map<string, Map<string, ContainerAllocation>>>();

  insert(podUid: string, container: string, allocation: ContainerAllocation): void {
    let containers = this.pods.get(podUid);
    if (!containers) {
      containers = new Map<string, Map<string, ContainerAllocation>>();
      this.pods.set(podUid, containers);
    }
    let resources = containers.get(container);
    if (!resources) {
      resources = new Map<string, ContainerAllocation>();
      containers.set(container, resources);
    }
    resources.set(allocation.resource, allocation);
  }

  /** containerDevices: one container's allocation of one resource. */
  containerDevices(podUid: string, container: string, resource: string): ContainerAllocation | undefined {
    return this.pods.get(podUid)?.get(container)?.get(resource);
  }

  /** Every resource allocated to one container. */
  containerAllocations(podUid: string, container: string): ContainerAllocation[] {
    return [...(this.pods.get(podUid)?.get(container)?.values() ?? [])];
  }

  /** Drops a pod's allocations; false when it had none. */
  delete(podUid: string): boolean {
    return this.pods.delete(podUid);
  }

  podUids(): string[] {
    return [...this.pods.keys()];
  }

  /** Device IDs of `resource` allocated to any container. */
  devices(resource: string): Set<string> {
    const ids = new Set<string>();
    for (const containers of this.pods.values()) {
      for (const resources of containers.values())
        for (const id of resources.get(resource)?.deviceIds ?? []) ids.add(id);
    }
    return ids;
  }

  /** Every resource with at least one allocation. */
  resourceNames(): Set<string> {
    const names = new Set<string>();
    for (const containers of this.pods.values()) {
      for (const resources of containers.values()) for (const r of resources.keys()) names.add(r);
    }
    return names;
  }

  toCheckpointData(): CheckpointEntry[] {
    const entries: CheckpointEntry[] = [];
    for (const [podUid, containers] of this.pods) {
      for (const [container, resources] of containers) {
        for (const a of resources.values()) {
          entries.push({
            podUid,
            container,
            resource: a.resource,
            byNuma: Object.fromEntries(a.byNuma),
            response: a.response,
          });
        }
      }
    }
    return entries;
  }

  fromCheckpointData(entries: readonly CheckpointEntry[]): void {
    for (const entry of entries) {
      const byNuma = new Map(Object.entries(entry.byNuma).map(([n, ids]) => [Number(n), ids] as const));
      const deviceIds = [...new Set([...byNuma.values()].flat())];
      this.insert(entry.podUid, entry.container, {
        resource: entry.resource,
        deviceIds,
        byNuma,
        response: entry.response,
        preferred: null,
      });
    }
  }
}
