// One DRA driver on one node, composed as upstream's drivers are: a Helper (helper.ts, the
// counterpart of k8s.io/dynamic-resource-allocation's kubeletplugin.Helper: sockets, registration,
// health streams, ResourceSlice publication) serving a DRAPlugin (draplugin.ts: prepare and unprepare),
// by default the CDI + checkpoint preparer (cdi-checkpoint-preparer.ts), which a driver author may
// replace with `preparer`. The driver itself owns what is Plugboard's own: the device source with its
// exclusion and fault overlay (DeviceState, shared with the device-plugin side), a fault's own
// taint, and the ResourceSlice entries of its devices.
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import type { ConnectionRouter, WatchFactory } from '@plugboard/proto';
import { DEFAULT_CDI_SPEC_DIR, type CdiContainerEdits } from '../cdi.js';
import { DeviceState } from '../device-state.js';
import { PluginError } from '../errors.js';
import { fileWatchOf } from '../restart-watch.js';
import type { DeviceSource, PluginDevice } from '../types.js';
import {
  SLICE_MAX_DEVICES,
  SLICE_MAX_DEVICES_WITH_TAINTS,
  type CounterSet,
  type DeviceAttribute,
  type DeviceCapacity,
  type DeviceTaint,
  type DeviceTaintEffect,
  type SliceDevice,
} from './api-types.js';
import { defaultCdiVendor } from './cdi.js';
import { CdiCheckpointPreparer, type DraClaimContext } from './cdi-checkpoint-preparer.js';
import { CHECKPOINT_FILE, type PreparedClaim } from './checkpoint.js';
import type { ClaimRef } from './claims.js';
import type { DRAPlugin } from './draplugin.js';
import { DeviceStatusWriter, type DeviceStatusOptions } from './device-status.js';
import {
  draPaths,
  Helper,
  type DraClaimOutcome,
  type DraRegistrationPhase,
  type DraRegistrationState,
  type HelperEvents,
} from './helper.js';
import { deviceClassFor, type DeviceClassOptions } from './device-class.js';
import type { DraKubeApi } from './kube-api.js';
import { driverNameProblem } from './names.js';
import type { PublicationStats } from './resource-slices.js';
import {
  deviceCounterSet,
  draDeviceName,
  FAULT_TAINT_VALUE,
  partitionSliceDevices,
  sliceDevice,
  type PartitionOptions,
  wholeSecondsUtc,
  type SliceDeviceOptions,
} from './slice-devices.js';

export type { DraClaimContext, DraClaimOutcome, DraRegistrationPhase, DraRegistrationState };

/** A device taint effect a fault may ask for (None: the taint is there, with no effect: a marker). */
export type FaultTaintEffect = DeviceTaintEffect;

export interface DraFaultOptions {
  /** The device may be absent now (a fault restored after a restart). */
  absentOk?: boolean;
  /** Also taint the device in its ResourceSlice (needs the `faultTaints` option). */
  taint?: FaultTaintEffect | null;
}

export interface DraDriverOptions {
  /** The driver name (a DNS subdomain, e.g. "gpu.example.com"). */
  driverName: string;
  /** The node this driver runs on (its ResourceSlices' spec.nodeName). */
  nodeName: string;
  source: DeviceSource;
  /** API server access (ResourceClaims, ResourceSlices). */
  kube: DraKubeApi;
  /** The kubelet's plugins directory; the driver serves <dir>/<driver>/dra.sock (default /var/lib/kubelet/plugins). */
  pluginsDir?: string;
  /** The kubelet plugin watcher's directory (default /var/lib/kubelet/plugins_registry). */
  pluginsRegistryDir?: string;
  /** Where CDI specs are written (default /var/run/cdi). */
  cdiDir?: string;
  /** CDI vendor and class of the device IDs (default `k8s.<driver>` and `device`). */
  cdi?: { vendor?: string; class?: string };
  /** Device IDs never advertised. */
  exclude?: readonly string[];
  /** > 1: every device takes that many allocations at once (consumable capacity). Default 1. */
  replicas?: number;
  /** Vendor attributes of a device for its ResourceSlice entry. */
  attributes?: (device: PluginDevice) => Record<string, DeviceAttribute>;
  /**
   * Vendor capacity of a device: a quantity ("80Gi"), or `{ value, requestPolicy }` for a device
   * shared with `allowMultipleAllocations` (how much one allocation consumes).
   */
  capacity?: (device: PluginDevice) => Record<string, string | DeviceCapacity>;
  /**
   * Publish every device with `allowMultipleAllocations: true` (consumable capacity, KEP-5075): the
   * scheduler allocates it to several claims, each with its own share ID and consumed capacity
   * (see `capacity`). Default false.
   */
  allowMultipleAllocations?: boolean;
  /**
   * Publish partitions of every device instead of the device (partitionable devices, KEP-4815):
   * the device's counters as a counter set named after it, in a ResourceSlice of its own, and each
   * partition as a device `<device>-<suffix>` consuming part of them (`evenPartitions` makes a whole,
   * halves, quarters…). The scheduler allocates partitions whose counters still fit; a prepared
   * partition is the device's (its container edits, health and faults are the device's).
   */
  partitions?: PartitionOptions;
  /** Taint unhealthy devices in the ResourceSlice (`key` default `<driver>/unhealthy`). */
  taints?: { effect: Exclude<DeviceTaintEffect, 'None'>; key?: string } | null;
  /**
   * Let a fault carry a taint of its own (`injectFault(id, reason, { taint })`: key `<driver>/fault`,
   * value `simulated`). Any device may then get a taint, so slices hold at most 64 devices, as with
   * `taints`. Default false.
   */
  faultTaints?: boolean;
  /** The pool of this node's devices (default: the node name, as upstream drivers do). */
  poolName?: string;
  /** Container edits of one prepared device (default: its device nodes and PLUGBOARD_DRA_DEVICE_<NAME>). */
  containerEdits?: (device: PluginDevice, claim: ClaimRef) => CdiContainerEdits;
  /**
   * Prepares and unprepares claims instead of the default CDI + checkpoint preparer (then
   * `cdiDir`, `cdi`, `containerEdits`, `prepare` and `unprepare` are not used). The Helper calls it
   * one call at a time, with each claim read from the API server and checked (found, the UID the
   * kubelet asked for, allocated).
   */
  preparer?: DRAPlugin;
  /**
   * Report each prepared device in its claim's `status.devices` (KEP-4817): a `Ready` condition
   * and what `report` adds (conditions, `data`, `networkData`). Needs `patch` on
   * `resourceclaims/status` and `associated-node:patch` (or `arbitrary-node:patch`) on
   * `resourceclaims/driver` named after the driver. A failed write is logged and emitted
   * (`device-status`); the claim stays prepared. Default: off.
   */
  deviceStatus?: DeviceStatusOptions | boolean;
  /** Runs when a claim is prepared (after its devices are checked); a throw fails that claim. */
  prepare?: (context: DraClaimContext) => Promise<void>;
  /** Runs when a prepared claim is unprepared; a throw fails that claim (it stays prepared). */
  unprepare?: (context: DraClaimContext) => Promise<void>;
  /** health_check_timeout_seconds sent with every device (0: the kubelet's default, 30 s). */
  healthCheckTimeoutSeconds?: number;
  /** The device ID is a PCI address (the sysfs-PCI source): publish `resource.kubernetes.io/pciBusID`. */
  pciBusIdFromId?: boolean;
  logger?: Logger;
  /**
   * How bindUnixServer hands each connection of dra.sock and the registration socket to grpc-js
   * (natively unless given); see ResourcePluginOptions.routeConnection.
   */
  routeConnection?: ConnectionRouter;
  /** Polling fallback of the socket watch (default 1000 ms). */
  restartPollIntervalMs?: number;
  /** The socket directory's watch: fs.watch unless a test injects a failing one. */
  watch?: WatchFactory;
  /** Backoff of ResourceSlice publication after an API error (default 250 ms doubling up to 30 s). */
  publishRetry?: { initialMs?: number; maxMs?: number };
  /** List this node's ResourceSlices again and repair them at this interval (default 30 s). */
  resyncMs?: number;
}

/** A DRA driver's events: the Helper's, and the devices' own. */
export interface DraDriverEvents extends HelperEvents {
  devices: [devices: PluginDevice[]];
  health: [event: { deviceId: string; health: PluginDevice['health']; reason: string | null; at: string }];
}

const HELPER_EVENTS = [
  'registered',
  'registration-error',
  'prepared',
  'unprepared',
  'slices-published',
  'slices-error',
  'device-status',
  'socket-restored',
  'health-sent',
  'health-streams',
] as const satisfies readonly (keyof HelperEvents)[];
export class DraDriver extends EventEmitter<DraDriverEvents> {
  readonly driverName: string;
  readonly nodeName: string;
  readonly poolName: string;
  /** <plugins dir>/<driver>: dra.sock, the checkpoint (and the fault directory of the CLI). */
  readonly dataDir: string;
  readonly socketPath: string;
  readonly registrationSocketPath: string;
  readonly checkpointPath: string;
  readonly #options: DraDriverOptions;
  readonly #logger: Logger;
  readonly #state: DeviceState;
  readonly #helper: Helper;
  /** The default preparer; null when the driver was given its own. */
  readonly #preparer: CdiCheckpointPreparer | null;
  readonly #sliceDevice: SliceDeviceOptions;
  readonly #sliceDeviceCache = new WeakMap<
    PluginDevice,
    { faulted: boolean; faultTaint: DeviceTaint | undefined; devices: SliceDevice[] }
  >();
  /** The key of the taint on unhealthy devices; null when the driver does not taint. */
  readonly #taintKey: string | null;
  /** The key of a fault's own taint: `<driver>/fault`. */
  readonly faultTaintKey: string;
  /** Faults that asked for a taint: device ID → the taint (kept as one object while unchanged). */
  readonly #faultTaints = new Map<string, DeviceTaint>();
  #byName = new Map<string, PluginDevice>();
  #byNameVersion = -1;
  #started = false;
  #stopping = false;

  constructor(options: DraDriverOptions) {
    super();
    const problem = driverNameProblem(options.driverName);
    if (problem) throw new PluginError('config-invalid', `driver name "${options.driverName}" ${problem}`);
    if (!options.nodeName)
      throw new PluginError('config-invalid', `${options.driverName}: a node name is required`);
    if (options.replicas !== undefined && (!Number.isInteger(options.replicas) || options.replicas < 1)) {
      throw new PluginError('config-invalid', `replicas must be a positive integer, got ${options.replicas}`);
    }
    this.#options = options;
    this.driverName = options.driverName;
    this.nodeName = options.nodeName;
    this.poolName = options.poolName ?? options.nodeName;
    const paths = draPaths(options.driverName, options.pluginsDir, options.pluginsRegistryDir);
    this.dataDir = paths.dataDir;
    this.socketPath = paths.socketPath;
    this.registrationSocketPath = paths.registrationSocketPath;
    this.checkpointPath = join(this.dataDir, CHECKPOINT_FILE);
    this.#taintKey = options.taints ? (options.taints.key ?? `${options.driverName}/unhealthy`) : null;
    this.faultTaintKey = `${options.driverName}/fault`;
    const baseLogger = options.logger ?? pino({ level: 'silent' });
    this.#logger = baseLogger.child({ component: 'dra-driver', driver: options.driverName });
    this.#state = new DeviceState({ source: options.source, exclude: options.exclude ?? [] });
    this.#sliceDevice = {
      replicas: options.replicas ?? 1,
      taint: options.taints && this.#taintKey ? { effect: options.taints.effect, key: this.#taintKey } : null,
      faulted: (id) => this.#state.faults().has(id),
      faultTaint: (id) => this.#faultTaints.get(id) ?? null,
      ...(options.attributes ? { attributes: options.attributes } : {}),
      ...(options.capacity ? { capacity: options.capacity } : {}),
      ...(options.allowMultipleAllocations ? { allowMultipleAllocations: true } : {}),
      ...(options.pciBusIdFromId ? { pciBusIdFromId: true } : {}),
    };
    // The default preparer, unless the driver brings its own DRAPlugin.
    const preparer = options.preparer
      ? null
      : new CdiCheckpointPreparer({
          driverName: this.driverName,
          nodeName: this.nodeName,
          poolName: this.poolName,
          devices: {
            byName: (name) => this.#deviceByName(name),
            byId: (id) => this.#state.get(id),
            taintKeys: (device) => {
              const fault = this.#faultTaints.get(device.id);
              const keys = this.#taintKey === null ? [] : [this.#taintKey];
              return fault ? [...keys, fault.key] : keys;
            },
          },
          cdi: {
            vendor: options.cdi?.vendor ?? defaultCdiVendor(options.driverName),
            class: options.cdi?.class ?? 'device',
            specDir: options.cdiDir ?? DEFAULT_CDI_SPEC_DIR,
          },
          checkpointPath: this.checkpointPath,
          replicas: options.replicas ?? 1,
          ...(options.containerEdits ? { containerEdits: options.containerEdits } : {}),
          ...(options.prepare ? { prepare: options.prepare } : {}),
          ...(options.unprepare ? { unprepare: options.unprepare } : {}),
          logger: this.#logger,
        });
    this.#preparer = preparer;
    this.#helper = new Helper({
      driverName: this.driverName,
      nodeName: this.nodeName,
      poolName: this.poolName,
      kube: options.kube,
      plugin: preparer ?? (options.preparer as DRAPlugin),
      deviceStatus: options.deviceStatus
        ? new DeviceStatusWriter(
            this.driverName,
            this.nodeName,
            options.kube,
            options.deviceStatus === true ? {} : options.deviceStatus,
          )
        : null,
      // The default preparer serialises its own checks and hooks, and shares checkpoint writes
      // between overlapping calls outside that section.
      serialize: options.preparer !== undefined,
      health: this.#state,
      healthCheckTimeoutSeconds: options.healthCheckTimeoutSeconds ?? 0,
      resources: () => this.sliceDevices(),
      ...(options.partitions ? { sharedCounters: () => this.sharedCounters() } : {}),
      healthDeviceNames: (device) => this.#sliceNames(device),
      // With taints on, any device may carry one: keep the slicing stable at the lower limit (the
      // same limit holds for devices that consume counters).
      maxDevicesPerSlice:
        options.taints || options.faultTaints || options.partitions
          ? SLICE_MAX_DEVICES_WITH_TAINTS
          : SLICE_MAX_DEVICES,
      ...(options.pluginsDir !== undefined ? { pluginsDir: options.pluginsDir } : {}),
      ...(options.pluginsRegistryDir !== undefined ? { pluginsRegistryDir: options.pluginsRegistryDir } : {}),
      logger: this.#logger,
      slicesLogger: baseLogger.child({ component: 'dra-resource-slices', driver: options.driverName }),
      ...(options.routeConnection ? { routeConnection: options.routeConnection } : {}),
      ...(options.restartPollIntervalMs !== undefined
        ? { restartPollIntervalMs: options.restartPollIntervalMs }
        : {}),
      ...(options.watch ? { watch: options.watch } : {}),
      ...(options.publishRetry ? { publishRetry: options.publishRetry } : {}),
      ...(options.resyncMs ? { resyncMs: options.resyncMs } : {}),
    });
    // The Helper's events are the driver's (an untyped hop: both maps name the same payloads).
    const helperEvents = this.#helper as EventEmitter;
    const driverEvents = this as EventEmitter;
    for (const name of HELPER_EVENTS) {
      helperEvents.on(name, (event: unknown) => driverEvents.emit(name, event));
    }
    this.#state.on('devices', (devices) => {
      this.#helper.devicesChanged();
      this.emit('devices', devices);
    });
    this.#state.on('health', (event) => {
      this.#logger.info(
        { device: event.deviceId, health: event.health, reason: event.reason },
        'device health changed',
      );
      this.emit('health', event);
    });
  }

  /** Discovers devices, reads the checkpoint, serves dra.sock, then exposes the registration socket. */
  async start(): Promise<void> {
    if (this.#started) throw new PluginError('internal', `${this.driverName} already started`);
    this.#started = true;
    await this.#preparer?.start();
    await this.#state.start(this.driverName);
    await this.#helper.start();
    this.#logger.info(
      {
        socket: this.socketPath,
        registrationSocket: this.registrationSocketPath,
        devices: this.#state.devices().length,
        preparedClaims: this.preparedClaims().length,
      },
      'serving',
    );
  }

  /**
   * Stops serving and removes both sockets. ResourceSlices are left in place, as upstream's helper
   * leaves them: the kubelet deletes a driver's slices itself when it stays unregistered, and a
   * driver that restarts (an upgrade) keeps its devices visible to the scheduler meanwhile.
   */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    await this.#helper.stop();
    await this.#preparer?.stop();
    this.#state.detach();
    await this.#options.source.stop();
    this.#helper.stopped();
    this.#logger.info('stopped');
  }

  devices(): PluginDevice[] {
    return this.#state.devices();
  }

  registration(): DraRegistrationState {
    // The Helper knows its sockets' watch; a scanning device source's watch is the driver's.
    return {
      ...this.#helper.registration(),
      fileWatch: fileWatchOf(this.#helper.socketWatcher, this.#options.source),
    };
  }

  /**
   * Claims prepared on this node (from the checkpoint and since), by UID; with a preparer of the
   * driver's own, what its `preparedClaims()` says (none without one).
   */
  preparedClaims(): PreparedClaim[] {
    if (this.#preparer) return this.#preparer.preparedClaims();
    return this.#options.preparer?.preparedClaims?.() ?? [];
  }

  /** This node's devices as its ResourceSlices list them (what is published, or about to be). */
  /**
   * The DeviceClass selecting this driver's devices, optionally with an `extendedResourceName`
   * (device-class.ts): a manifest to apply, never created by the driver itself.
   */
  deviceClass(options: DeviceClassOptions): ReturnType<typeof deviceClassFor> {
    return deviceClassFor(this.driverName, options);
  }

  sliceDevices(): SliceDevice[] {
    return this.#state.devices().flatMap((d) => {
      // DeviceState keeps an unchanged device's object; so does this, for the publisher's compare.
      const faulted = this.#state.faults().has(d.id);
      const faultTaint = this.#faultTaints.get(d.id);
      const cached = this.#sliceDeviceCache.get(d);
      if (cached?.faulted === faulted && cached.faultTaint === faultTaint) return cached.devices;
      const device = sliceDevice(d, this.#sliceDevice);
      const partitions = this.#options.partitions;
      const devices = partitions ? partitionSliceDevices(device, d, partitions) : [device];
      this.#sliceDeviceCache.set(d, { faulted, faultTaint, devices });
      return devices;
    });
  }

  /** The counter sets of partitioned devices, one per device (none without `partitions`). */
  sharedCounters(): CounterSet[] {
    const partitions = this.#options.partitions;
    if (!partitions) return [];
    return this.#state.devices().map((d) => deviceCounterSet(d, partitions));
  }

  /** The names a device has in the ResourceSlices: its own, or its partitions'. */
  #sliceNames(device: PluginDevice): string[] {
    const name = draDeviceName(device.id);
    const partitions = this.#options.partitions;
    return partitions ? partitions.partitions(device).map((p) => `${name}-${p.suffix}`) : [name];
  }

  /** ResourceSlice publication: generation, slice names, request counts, last error. */
  publication(): PublicationStats {
    return this.#helper.publication();
  }

  /** Open NodeWatchResources streams. */
  get healthStreams(): number {
    return this.#helper.healthStreams;
  }

  /**
   * The device list (with health) the kubelet was last sent on NodeWatchResources, or null while no
   * stream is open. The same array until the next send, as DeviceState keeps its list.
   */
  healthReported(): readonly PluginDevice[] | null {
    return this.#helper.healthReported();
  }

  /**
   * Holds a device Unhealthy until `clearFault`; the health stream (and a taint) follow at once.
   * `taint` (with the `faultTaints` option) also puts `<driver>/fault=simulated:<effect>` on the
   * device in its ResourceSlice until the fault is cleared or injected again without it.
   */
  injectFault(deviceId: string, reason: string, options: DraFaultOptions = {}): void {
    const id = this.#idOf(deviceId);
    const taint = options.taint ?? null;
    if (taint && !this.#options.faultTaints) {
      throw new PluginError(
        'invalid-argument',
        `${this.driverName} was not started with faultTaints: a fault cannot taint ${deviceId}`,
      );
    }
    const before = this.#faultTaints.get(id);
    if (taint === null) this.#faultTaints.delete(id);
    else if (before?.effect !== taint) {
      this.#faultTaints.set(id, {
        key: this.faultTaintKey,
        value: FAULT_TAINT_VALUE,
        effect: taint,
        timeAdded: wholeSecondsUtc(new Date().toISOString()),
      });
    }
    try {
      this.#state.injectFault(id, reason, { ...(options.absentOk ? { absentOk: true } : {}) });
    } catch (err) {
      if (before) this.#faultTaints.set(id, before);
      else this.#faultTaints.delete(id);
      throw err;
    }
    // Only the taint changed (the device's health did not): the overlay emitted nothing for it.
    if (this.#faultTaints.get(id) !== before) this.#helper.publishResources();
    this.#logger.info({ device: deviceId, reason, taint }, 'fault injected');
  }

  clearFault(deviceId: string): void {
    const id = this.#idOf(deviceId);
    this.#state.clearFault(id);
    if (this.#faultTaints.delete(id)) this.#helper.publishResources();
    this.#logger.info({ device: deviceId }, 'fault cleared');
  }

  /** Active faults: device ID → reason, whether the device is advertised now, the fault's taint. */
  faults(): Map<string, { reason: string; present: boolean; taint: FaultTaintEffect | null }> {
    return new Map(
      [...this.#state.faults()].map(([id, reason]) => [
        id,
        {
          reason,
          present: this.#state.present(id),
          taint: this.#faultTaints.get(id)?.effect ?? null,
        },
      ]),
    );
  }

  /** A device's source ID from its ID or its ResourceSlice name. */
  #idOf(idOrName: string): string {
    return this.#state.get(idOrName) ? idOrName : (this.#deviceByName(idOrName)?.id ?? idOrName);
  }

  #deviceByName(name: string): PluginDevice | undefined {
    if (this.#byNameVersion !== this.#state.version) {
      this.#byName = new Map(
        this.#state.devices().flatMap((d) => this.#sliceNames(d).map((name) => [name, d] as const)),
      );
      this.#byNameVersion = this.#state.version;
    }
    return this.#byName.get(name);
  }
}
