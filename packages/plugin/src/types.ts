// Public data types shared by sources, the device state and the DevicePlugin service.
import type { DeviceHealth } from '@plugboard/proto';

export type { DeviceHealth };

/** A device as a source reports it: physical, before exclusion, fault overlay and replicas. */
export interface SourceDevice {
  /** Stable ID, unique within the resource (the kubelet limits IDs to 63 characters). */
  id: string;
  health: DeviceHealth;
  /** Why the device is unhealthy (null when healthy or unknown). */
  reason: string | null;
  /** NUMA node IDs the device is attached to; empty means no NUMA preference. */
  numaNodes: number[];
  /** Host device nodes handed to a container that gets this device (e.g. /dev/ttyUSB0). */
  deviceNodes: string[];
}

/**
 * Where a resource's devices come from. `list()` returns the current full set; `subscribe` calls
 * the listener whenever that set or a device's health changes (the caller re-reads `list()`).
 */
export interface DeviceSource {
  /** Short name for logs: 'simulated', 'paths', 'sysfs-pci', or your own. */
  readonly kind: string;
  /** Initial discovery; resolves when `list()` is meaningful. Watches start here. */
  start(): Promise<void>;
  list(): readonly SourceDevice[];
  subscribe(listener: () => void): () => void;
  /** Stops watches and timers. */
  stop(): Promise<void>;
}

/** A device as advertised to the kubelet (replicas included), with its last health transition. */
export interface PluginDevice {
  id: string;
  health: DeviceHealth;
  reason: string | null;
  /** ISO time of the last health transition (or of discovery). */
  since: string;
  numaNodes: number[];
  /** For a replica (`<id>::<k>`): the physical device ID; null for a physical device. */
  replicaOf: string | null;
  deviceNodes: string[];
}

export interface PreferredAllocationDecision {
  at: string;
  available: string[];
  mustInclude: string[];
  size: number;
  chosen: string[];
  reason: string;
  /** Time the plugin took to choose (one container request). */
  durationMs: number;
}

/**
 * `registered` holds only while the kubelet holds the plugin's ListAndWatch stream (or is about to
 * open it after Register). `waiting-for-kubelet`: the plugin was registered, then the kubelet let go
 * of it (stream closed, kubelet.sock removed, or no stream after Register); it re-registers when
 * the kubelet is back.
 */
export type RegistrationPhase =
  'starting' | 'registering' | 'registered' | 'waiting-for-kubelet' | 'failed' | 'stopped';

export interface RegistrationState {
  phase: RegistrationPhase;
  registeredAt: string | null;
  /**
   * When the kubelet stopped holding the plugin after it was registered; kept while it
   * re-registers, null once it is registered again (and before the first registration).
   */
  waitingSince: string | null;
  kubeletRestartsSeen: number;
  lastListAndWatchSend: string | null;
  error: string | null;
  /** How the plugin follows its socket directory (a kubelet restart): see FileWatchState. */
  fileWatch: FileWatchState;
}

/**
 * `watch`: fs.watch (inotify) besides the poll. `poll`: the poll alone, with the reason — inotify
 * instances exhausted (fs.inotify.max_user_instances, shared by every program of the node's user),
 * for one: a kubelet restart is then noticed within the poll interval rather than at once.
 */
export interface FileWatchState {
  mode: 'watch' | 'poll';
  reason: string | null;
}

export type RegistrationMode = 'kubelet' | 'plugin-watcher';

export type RestartDetectedBy = 'socket-deleted' | 'kubelet-sock-recreated' | 'stream-closed';

/** Why a registered plugin is no longer held by the kubelet. */
export type NotHeldCause = 'stream-closed' | 'kubelet-sock-removed' | 'no-stream';

/** Events of a ResourcePlugin, as `on(name, listener)` arguments. */
export interface ResourcePluginEvents {
  devices: [devices: PluginDevice[]];
  health: [event: { deviceId: string; health: DeviceHealth; reason: string | null; at: string }];
  registered: [event: { at: string; attempt: number }];
  'kubelet-restart': [event: { at: string; detectedBy: RestartDetectedBy }];
  allocate: [event: { deviceIds: string[][]; durationMs: number; ok: boolean; error?: string }];
  'preferred-allocation': [decision: PreferredAllocationDecision];
  'registration-error': [event: { error: string; attempt: number }];
  /** The kubelet let go of a registered plugin (phase `waiting-for-kubelet`); `reason` says how. */
  'waiting-for-kubelet': [event: { at: string; cause: NotHeldCause; reason: string }];
  /** A device list went out on ListAndWatch (`devices`), or the last stream closed (`devices: null`). */
  reported: [event: { at: string; devices: readonly PluginDevice[] | null }];
}
