// Builders of the contract's values for tests (`@plugboard/api/testing`): one definition of the
// pieces the workspaces' fixtures put together — the gateway serving a snapshot, a plugin registered
// with its kubelet, a running container, a published DRA device, an extended resource's per-node
// view and its pods — typed by the contract itself, so a field added to it is added here once. Each
// builder gives the plain case; the caller's overrides win. The gateway's, the dashboard's,
// `kubectl plugboard`'s and this package's tests use them; nothing here runs outside tests.
import type { Timestamp } from './common.ts';
import type { DraDeviceState } from './dra.ts';
import type { ExtendedResourcePod, ExtendedResourceView } from './extended-resources.ts';
import type { ContainerState, GatewayInfo, RegistrationState } from './node.ts';

/**
 * The gateway serving a snapshot, started at `startedAt`: version 0.1.0, faults enabled, no token
 * needed, faults not persisted; `over` wins.
 */
export function gatewayInfo(startedAt: Timestamp, over: Partial<GatewayInfo> = {}): GatewayInfo {
  return {
    version: '0.1.0',
    startedAt,
    faultsEnabled: true,
    authRequired: false,
    persistence: { enabled: false },
    ...over,
  };
}

/** A device plugin registered with its kubelet at `at`, its ListAndWatch last sent to at `at`. */
export function pluginRegisteredAt(at: Timestamp): RegistrationState {
  return {
    phase: 'registered',
    registeredAt: at,
    waitingSince: null,
    kubeletRestartsSeen: 0,
    lastListAndWatchSend: at,
    error: null,
  };
}

/**
 * Container `main`, running, never restarted, holding nothing (no devices, exclusive CPUs, memory or
 * DRA devices; no allocatedResourcesStatus); `over` wins.
 */
export function containerState(over: Partial<ContainerState> = {}): ContainerState {
  return {
    name: 'main',
    devices: {},
    cpuIds: [],
    memory: [],
    dynamicResources: [],
    restartCount: 0,
    state: 'running',
    stateReason: null,
    allocatedResourcesStatus: [],
    ...over,
  };
}

/** What names a DRA device, and when its health last changed. */
export type DraDeviceIdentity = Pick<DraDeviceState, 'driver' | 'pool' | 'name' | 'since'>;

/**
 * Device `name` of `driver`'s pool `pool` (key `${driver}/${pool}/${name}`, its source ID its name):
 * published, healthy as the driver and the kubelet see it since `since`, untainted, no fault, not
 * allocated; no attributes, capacity or NUMA node unless `device` gives them.
 */
export function draDeviceState(device: DraDeviceIdentity & Partial<DraDeviceState>): DraDeviceState {
  const { driver, pool, name, since, ...over } = device;
  return {
    key: `${driver}/${pool}/${name}`,
    driver,
    pool,
    name,
    sourceId: name,
    attributes: {},
    capacity: {},
    numaNodes: [],
    published: true,
    health: 'Healthy',
    reason: null,
    since,
    kubeletHealth: 'Healthy',
    taints: [],
    fault: null,
    allocations: [],
    ...over,
  };
}

/** The views and pods of one extended resource name, for tests of the migration view. */
export interface ExtendedResourceFixtures {
  /**
   * The name's view on a node, served as `v.servedBy` says; unless `v` says more: not in the Node's
   * status, no DeviceClass maps it, no driver, no pod asks for it.
   */
  view: (v: Partial<ExtendedResourceView> & Pick<ExtendedResourceView, 'servedBy'>) => ExtendedResourceView;
  /**
   * Container `main` of pod `key` asking for one of the name, held `via` an API: through the device
   * plugin's device, or (with the special claim `claim`, its first request as the scheduler names
   * it) through the DRA device; 'unknown': no device yet.
   */
  pod: (key: string, via: ExtendedResourcePod['via'], claim?: string | null) => ExtendedResourcePod;
}

/**
 * Fixtures of the extended resource `name`, whose pods hold `held.plugin` (a device plugin's device
 * key) or `held.dra` (a DRA device's key).
 */
export function extendedResourceFixtures(
  name: string,
  held: { plugin: string; dra: string },
): ExtendedResourceFixtures {
  return {
    view: (v) => ({
      name,
      nodeStatus: null,
      deviceClasses: [],
      deviceClass: null,
      drivers: [],
      pods: [],
      ...v,
    }),
    pod: (key, via, claim = null) => ({
      pod: key,
      container: 'main',
      count: 1,
      via,
      claim,
      request: claim ? 'container-0-request-0' : null,
      devices: via === 'device-plugin' ? [held.plugin] : via === 'dra' ? [held.dra] : [],
    }),
  };
}
