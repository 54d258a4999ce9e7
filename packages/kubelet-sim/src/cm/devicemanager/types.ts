// The device manager's constants and the shapes it hands out (pkg/kubelet/cm/devicemanager
// types.go and the constants of endpoint.go/manager.go, release-1.33): plugin options, devices as
// the last ListAndWatch message described them, one resource's view for state(), and what
// Allocate returned for a container.

import type { Logger } from 'pino';
import type { deviceplugin } from '@plugboard/proto';
import type { DeviceAllocation, DeviceView } from '@plugboard/topology';
import type { CheckpointManager } from '../../checkpointmanager/checkpoint-manager.js';

// Devices, NUMA grouping and what a container got are @plugboard/topology's (the Topology Manager's side).
export { NODE_WITHOUT_TOPOLOGY, type DeviceView } from '@plugboard/topology';

/** The kubelet's endpointStopGracePeriod. */
export const DEFAULT_GRACE_PERIOD_MS = 5 * 60 * 1000;
/** The kubelet dials a registering plugin with a 10 s timeout. */
export const DEFAULT_DIAL_TIMEOUT_MS = 10_000;
/** KubeletPreStartContainerRPCTimeoutInSecs; the sim applies it to every plugin RPC. */
export const DEFAULT_RPC_TIMEOUT_MS = 30_000;
export interface PluginOptions {
  preStartRequired: boolean;
  getPreferredAllocationAvailable: boolean;
}

/** How the plugin registered: Register on kubelet.sock, or the plugin watcher (plugins_registry). */
export type RegisteredVia = 'kubelet.sock' | 'plugin-watcher';

export interface ResourceView {
  name: string;
  /** All devices (healthy + unhealthy); 0 after the grace period of a gone plugin. */
  capacity: number;
  /** Healthy devices only. */
  allocatable: number;
  /** True while a plugin is connected and its ListAndWatch stream is open. */
  registered: boolean;
  /** The plugin's socket path (absolute), null when restored from the checkpoint only. */
  endpoint: string | null;
  /** Options from the plugin's GetDevicePluginOptions answer (not from RegisterRequest). */
  options: PluginOptions | null;
  registeredAt: string | null;
  registeredVia: RegisteredVia | null;
  /** When the plugin's stream ended (or the kubelet restarted); null while connected. */
  disconnectedAt: string | null;
  /** When capacity drops to zero unless the plugin registers again. */
  graceExpiresAt: string | null;
  /** True once the grace period expired: the node reports capacity 0 for it. */
  removed: boolean;
  devices: DeviceView[];
  /** Device IDs allocated to containers. */
  allocated: string[];
}

/** What Allocate returned for one container and resource, kept like the kubelet's podDevices. */
export interface ContainerAllocation extends DeviceAllocation {
  response: deviceplugin.ContainerAllocateResponse;
}

export interface DeviceManagerOptions {
  devicePluginDir: string;
  gracePeriodMs?: number;
  dialTimeoutMs?: number;
  rpcTimeoutMs?: number;
  /** Where the checkpoint lives; files in the device-plugin directory by default. */
  checkpointManager?: CheckpointManager;
  logger: Logger;
}

export interface DeviceManagerEvents {
  registered: [{ resource: string; endpoint: string; options: PluginOptions }];
  'registration-rejected': [{ resource: string; endpoint: string; error: string }];
  devices: [{ resource: string; devices: DeviceView[] }];
  disconnected: [{ resource: string }];
  'resource-removed': [{ resource: string }];
  /** Anything that changes node capacity/allocatable or device health. */
  changed: [];
}
