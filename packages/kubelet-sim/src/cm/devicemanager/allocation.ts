// allocateContainerResources (pkg/kubelet/cm/devicemanager/manager.go, release-1.33) with the
// plugin RPCs: the pick itself (devicesToAllocate, filterByAffinity) is @plugboard/topology's, asked
// here for the plugin's GetPreferredAllocation over its endpoint
// (callGetPreferredAllocationIfAvailable); then Allocate with the picked IDs. The manager records
// the result in its podDevices.

import type { Logger } from 'pino';
import type { deviceplugin } from '@plugboard/proto';
import { devicesByNuma, devicesToAllocate, type Mask } from '@plugboard/topology';
import type { Endpoint } from './endpoint.js';
import type { ContainerAllocation, DeviceView } from './types.js';

export interface AllocationRequest {
  podUid: string;
  container: string;
  resource: string;
  required: number;
  /** Devices of the pod's init containers this container may take first. */
  reusable: ReadonlySet<string>;
  /** The Topology Manager's merged affinity; null for none. */
  affinity: Mask | null;
  /** A dry run asks the plugin nothing. */
  dryRun: boolean;
}

/** The resource as the manager knows it when the pick starts. */
export interface ResourceDevices {
  /** What the container already holds of the resource (a restart): nothing to allocate. */
  existing: ContainerAllocation | undefined;
  /** The last ListAndWatch message's devices, in the plugin's order (read when needed). */
  devices: () => ReadonlyMap<string, DeviceView> | undefined;
  healthy: ReadonlySet<string> | undefined;
  /** Devices allocated to any container. */
  inUse: () => ReadonlySet<string>;
  /** The resource's endpoint at the time of asking (it may be replaced while a call is out). */
  endpoint: () => Endpoint | undefined;
}

/**
 * allocateContainerResources for one container and resource: devicesToAllocate, then Allocate with
 * the picked IDs (not in a dry run), and the allocation the kubelet records (devices per NUMA node,
 * the container's response). Null when the container already holds the devices. Throws the
 * kubelet's error text.
 */
export async function allocateContainerResources(
  req: AllocationRequest,
  r: ResourceDevices,
  log: Logger,
): Promise<ContainerAllocation | null> {
  const pick = await devicesToAllocate(req, {
    existing: r.existing?.deviceIds.length,
    devices: r.devices(),
    healthy: r.healthy,
    inUse: r.inUse(),
    preferred: (available, mustInclude, size) =>
      req.dryRun
        ? Promise.resolve(null)
        : callGetPreferredAllocationIfAvailable(req, r.endpoint(), available, mustInclude, size, log),
  });
  if (!pick) return null;
  const { picked, preferred } = pick;
  let response: deviceplugin.ContainerAllocateResponse = {
    envs: {},
    mounts: [],
    devices: [],
    annotations: {},
    cdiDevices: [],
  };
  if (!req.dryRun) {
    const ep = r.endpoint();
    if (!ep) throw new Error(`unknown Device Plugin ${req.resource}`);
    const resp = await ep.allocate(picked);
    const first = resp.containerResponses[0];
    if (!first) {
      throw new Error(
        `no containers return in allocation response &AllocateResponse{ContainerResponses:[]*ContainerAllocateResponse{},}`,
      );
    }
    response = first;
  }
  return {
    resource: req.resource,
    deviceIds: picked,
    byNuma: devicesByNuma(picked, r.devices()),
    response,
    preferred,
  };
}

/** The plugin's answer; null when it does not offer GetPreferredAllocation (not asked). */
async function callGetPreferredAllocationIfAvailable(
  req: AllocationRequest,
  endpoint: Endpoint | undefined,
  available: string[],
  mustInclude: string[],
  size: number,
  log: Logger,
): Promise<string[] | null> {
  if (!endpoint) throw new Error(`endpoint not found in cache for a registered resource: ${req.resource}`);
  if (!endpoint.options?.getPreferredAllocationAvailable) return null;
  log.debug(
    { resource: req.resource, podUid: req.podUid, container: req.container, rpc: 'GetPreferredAllocation' },
    'issuing a GetPreferredAllocation call for container',
  );
  return endpoint.getPreferredAllocation(available, mustInclude, size);
}
