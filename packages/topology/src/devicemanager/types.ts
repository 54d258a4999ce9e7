// The device manager's shapes the Topology Manager works with (pkg/kubelet/cm/devicemanager
// types.go, release-1.33): devices as the plugin's last ListAndWatch message described them, what a
// container got, and the device manager as a hint provider — implemented by kubelet-sim's live
// device manager and by the gateway's copy for a prediction.

import type { Mask } from '../topologymanager/bitmask.js';
import type { TopologyHint } from '../topologymanager/topology-manager.js';

/** Device IDs without NUMA affinity are grouped under this fake node (nodeWithoutTopology). */
export const NODE_WITHOUT_TOPOLOGY = -1;

export interface DeviceView {
  id: string;
  health: 'Healthy' | 'Unhealthy';
  /** NUMA node IDs from Device.topology; empty means no NUMA preference. */
  numaNodes: number[];
}

/** What one container got of one resource. */
export interface DeviceAllocation {
  resource: string;
  deviceIds: string[];
  /** Device IDs per NUMA node (NODE_WITHOUT_TOPOLOGY for none). */
  byNuma: Map<number, string[]>;
  /** The plugin's GetPreferredAllocation answer that shaped the pick; null when it was not asked. */
  preferred: string[] | null;
}

/** The device manager as the admit handler uses it. */
export interface DeviceHintProvider {
  /** True for a resource with a plugin (or its grace period) or with allocations. */
  isDevicePluginResource(resource: string): boolean;
  /** Devices of `resource` allocated to any container (the predicate's floor). */
  allocatedDevices(resource: string): ReadonlySet<string>;
  /** GetTopologyHints for one resource request. */
  topologyHints(
    resource: string,
    needed: number,
    reusable: ReadonlySet<string>,
    numaIds: readonly number[],
  ): TopologyHint[] | null;
  /**
   * Allocates `needed` devices to one container inside `affinity`; throws the kubelet's error text.
   * Null when the container already holds them.
   */
  allocate(
    podUid: string,
    container: string,
    resource: string,
    needed: number,
    reusable: Set<string>,
    affinity: Mask | null,
    dryRun: boolean,
  ): Promise<DeviceAllocation | null>;
}
