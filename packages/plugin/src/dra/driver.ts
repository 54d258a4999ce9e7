// One DRA driver on one node: the TypeScript counterpart of k8s.io/dynamic-resource-allocation's
// kubeletplugin.Helper. It serves the DRAPlugin service (v1 + v1beta1) and the DRAResourceHealth
// service (v1 + v1alpha1) on <plugins dir>/<driver>/dra.sock, then exposes the registration socket
// <plugins_registry>/<driver>-reg.sock to the kubelet's plugin watcher (serve first, as upstream
// does); prepares claims with per-claim CDI specs and a checkpoint; streams device health; and
// shares the device sources and the fault overlay (DeviceState) with the device-plugin side.
// Unlike upstream's helper it re-creates either socket when it is deleted (the kubelet's plugin
// watcher then registers the driver again), answers claims one by one (a claim that cannot be read
// fails alone), and answers an already prepared claim from its checkpoint without asking the API
// server again.
import { EventEmitter } from 'node:events';
import { rename, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Server, ServerWritableStream } from '@grpc/grpc-js';
import { pino, type Logger } from 'pino';
import {
  bindUnixServer,
  closeUnixServer,
  DRA_PLUGIN_SERVICE_V1,
  DRA_PLUGIN_SERVICE_V1BETA1,
  DRA_PLUGIN_TYPE,
  DRA_RESOURCE_HEALTH_SERVICE_V1,
  DRA_RESOURCE_HEALTH_SERVICE_V1ALPHA1,
  DRA_SOCKET_NAME,
  drav1,
  drav1beta1,
  KUBELET_PLUGINS_PATH,
  PLUGINS_REGISTRY_PATH,
  type ConnectionRouter,
  type WatchFactory,
} from '@plugboard/proto';
import { DEFAULT_CDI_SPEC_DIR, type CdiContainerEdits } from '../cdi.js';
import { DeviceState } from '../device-state.js';
import { PluginError } from '../errors.js';
import { newServer } from '../grpc-status.js';
import { registrationServer } from '../registration.js';
import { fileWatchOf, RestartWatcher } from '../restart-watch.js';
import { ListAndWatchStreams } from '../server.js';
import type { DeviceSource, FileWatchState, PluginDevice } from '../types.js';
import {
  SLICE_MAX_DEVICES,
  SLICE_MAX_DEVICES_WITH_TAINTS,
  type DeviceAttribute,
  type DeviceTaint,
  type DeviceTaintEffect,
  type ResourceClaim,
  type SliceDevice,
} from './api-types.js';
import { cdiDeviceId, defaultCdiVendor, removeClaimSpec, writeClaimSpec, type ClaimCdi } from './cdi.js';
import {
  readCheckpoint,
  writeCheckpoint,
  CHECKPOINT_FILE,
  type PreparedClaim,
  type PreparedDevice,
} from './checkpoint.js';
import {
  baseRequestName,
  claimLabel,
  claimRefProblem,
  devicesToPrepare,
  type AllocatedDevice,
  type ClaimRef,
} from './claims.js';
import { encodeHealth, healthHeartbeatMs, healthServices } from './health.js';
import type { DraKubeApi } from './kube-api.js';
import { driverNameProblem } from './names.js';
import { draNodeServices } from './node-server.js';
import { ResourceSlicePublisher, type PublicationStats, type PublishedEvent } from './resource-slices.js';
import {
  draDeviceName,
  FAULT_TAINT_VALUE,
  sliceDevice,
  wholeSecondsUtc,
  type SliceDeviceOptions,
} from './slice-devices.js';

/** A device taint effect a fault may ask for. */
export type FaultTaintEffect = Exclude<DeviceTaintEffect, 'None'>;

export interface DraFaultOptions {
  /** The device may be absent now (a fault restored after a restart). */
  absentOk?: boolean;
  /** Also taint the device in its ResourceSlice (needs the `faultTaints` option). */
  taint?: FaultTaintEffect | null;
}

/** The claim a prepare or unprepare hook works on. */
export interface DraClaimContext {
  claim: ClaimRef;
  /** The devices of the claim this driver prepared (empty in unprepare after a restart). */
  devices: { device: PluginDevice; deviceName: string; requestNames: string[]; shareId?: string }[];
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
  /** Vendor capacity of a device, as quantities ("80Gi"). */
  capacity?: (device: PluginDevice) => Record<string, string>;
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

export type DraRegistrationPhase = 'starting' | 'registering' | 'registered' | 'failed' | 'stopped';

export interface DraRegistrationState {
  phase: DraRegistrationPhase;
  /** When the kubelet last confirmed the registration (NotifyRegistrationStatus). */
  registeredAt: string | null;
  /** GetInfo calls answered: one per discovery of the registration socket by a kubelet. */
  infoCalls: number;
  error: string | null;
  /** How the driver follows its socket directory (a kubelet cleaning it up). */
  fileWatch: FileWatchState;
}

export interface DraClaimOutcome {
  uid: string;
  namespace: string;
  name: string;
  devices: string[];
  error: string | null;
}

export interface DraDriverEvents {
  devices: [devices: PluginDevice[]];
  health: [event: { deviceId: string; health: PluginDevice['health']; reason: string | null; at: string }];
  registered: [event: { at: string }];
  'registration-error': [event: { error: string }];
  prepared: [event: { claims: DraClaimOutcome[]; durationMs: number }];
  unprepared: [event: { claims: DraClaimOutcome[]; durationMs: number }];
  /** ResourceSlices were written (created, updated or deleted). */
  'slices-published': [event: PublishedEvent];
  /** Publishing failed; it is retried after `retryInMs`. */
  'slices-error': [event: { error: string; retryInMs: number }];
  /** A deleted socket of the driver is served again. */
  'socket-restored': [event: { at: string; socket: string }];
  /** A NodeWatchResources message went out (the health the kubelet now has). */
  'health-sent': [event: { at: string; streams: number }];
  /** A NodeWatchResources stream opened or closed: `streams` are open now. */
  'health-streams': [event: { at: string; streams: number }];
}

/** Env-var-safe form of a device name: gpu-0 → GPU_0. */
const envName = (name: string): string => name.toUpperCase().replace(/[^A-Z0-9]+/g, '_');

function defaultContainerEdits(device: PluginDevice): CdiContainerEdits {
  return {
    env: [`PLUGBOARD_DRA_DEVICE_${envName(draDeviceName(device.id))}=${device.id}`],
    ...(device.deviceNodes.length ? { deviceNodes: device.deviceNodes.map((path) => ({ path })) } : {}),
  };
}

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
  readonly #health: ListAndWatchStreams;
  readonly #cdi: ClaimCdi;
  readonly #watcher: RestartWatcher;
  readonly #healthTimeoutSeconds: number;
  readonly #slices: ResourceSlicePublisher;
  readonly #sliceDevice: SliceDeviceOptions;
  readonly #sliceDeviceCache = new WeakMap<
    PluginDevice,
    { faulted: boolean; faultTaint: DeviceTaint | undefined; device: SliceDevice }
  >();
  /** The key of the taint on unhealthy devices; null when the driver does not taint. */
  readonly #taintKey: string | null;
  /** The key of a fault's own taint: `<driver>/fault`. */
  readonly faultTaintKey: string;
  /** Faults that asked for a taint: device ID → the taint (kept as one object while unchanged). */
  readonly #faultTaints = new Map<string, DeviceTaint>();
  #byName = new Map<string, PluginDevice>();
  #byNameVersion = -1;
  #prepared = new Map<string, PreparedClaim>();
  /**
   * Checking, CDI specs and hooks of prepare and unprepare run one call at a time (upstream's helper
   * serialises them by default); the checkpoint write after them is shared (#commit).
   */
  #serial: Promise<unknown> = Promise.resolve();
  /** The checkpoint write in flight, and the one that will follow it. */
  #checkpointWrite: Promise<void> | null = null;
  #checkpointNext: Promise<void> | null = null;
  #server: Server | null = null;
  #registrationServer: Server | null = null;
  #heartbeat: NodeJS.Timeout | null = null;
  #reserving: Promise<void> = Promise.resolve();
  #registration: Omit<DraRegistrationState, 'fileWatch'> = {
    phase: 'starting',
    registeredAt: null,
    infoCalls: 0,
    error: null,
  };
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
    this.dataDir = join(options.pluginsDir ?? KUBELET_PLUGINS_PATH, options.driverName);
    this.socketPath = join(this.dataDir, DRA_SOCKET_NAME);
    this.registrationSocketPath = join(
      options.pluginsRegistryDir ?? PLUGINS_REGISTRY_PATH,
      `${options.driverName}-reg.sock`,
    );
    this.checkpointPath = join(this.dataDir, CHECKPOINT_FILE);
    this.#healthTimeoutSeconds = options.healthCheckTimeoutSeconds ?? 0;
    this.#taintKey = options.taints ? (options.taints.key ?? `${options.driverName}/unhealthy`) : null;
    this.faultTaintKey = `${options.driverName}/fault`;
    this.#cdi = {
      vendor: options.cdi?.vendor ?? defaultCdiVendor(options.driverName),
      class: options.cdi?.class ?? 'device',
      specDir: options.cdiDir ?? DEFAULT_CDI_SPEC_DIR,
    };
    this.#logger = (options.logger ?? pino({ level: 'silent' })).child({
      component: 'dra-driver',
      driver: options.driverName,
    });
    this.#state = new DeviceState({ source: options.source, exclude: options.exclude ?? [] });
    this.#health = new ListAndWatchStreams(
      this.#state,
      () => this.emit('health-sent', { at: new Date().toISOString(), streams: this.#health.size }),
      (_generation, remaining, durationMs) => {
        this.#logger.info({ rpc: 'NodeWatchResources', durationMs, streams: remaining }, 'stream closed');
        this.emit('health-streams', { at: new Date().toISOString(), streams: remaining });
      },
      () => this.emit('health-streams', { at: new Date().toISOString(), streams: this.#health.size }),
      (devices) =>
        encodeHealth(devices, this.poolName, this.#healthTimeoutSeconds, Math.floor(Date.now() / 1000)),
    );
    this.#sliceDevice = {
      replicas: options.replicas ?? 1,
      taint: options.taints && this.#taintKey ? { effect: options.taints.effect, key: this.#taintKey } : null,
      faulted: (id) => this.#state.faults().has(id),
      faultTaint: (id) => this.#faultTaints.get(id) ?? null,
      ...(options.attributes ? { attributes: options.attributes } : {}),
      ...(options.capacity ? { capacity: options.capacity } : {}),
      ...(options.pciBusIdFromId ? { pciBusIdFromId: true } : {}),
    };
    this.#slices = new ResourceSlicePublisher({
      driverName: this.driverName,
      nodeName: this.nodeName,
      poolName: this.poolName,
      kube: options.kube,
      devices: () => this.sliceDevices(),
      // With taints on, any device may carry one: keep the slicing stable at the lower limit.
      maxDevicesPerSlice:
        options.taints || options.faultTaints ? SLICE_MAX_DEVICES_WITH_TAINTS : SLICE_MAX_DEVICES,
      logger: (options.logger ?? pino({ level: 'silent' })).child({
        component: 'dra-resource-slices',
        driver: options.driverName,
      }),
      ...(options.publishRetry ? { retry: options.publishRetry } : {}),
      ...(options.resyncMs ? { resyncMs: options.resyncMs } : {}),
      onPublished: (event) => this.emit('slices-published', event),
      onError: (event) => this.emit('slices-error', event),
    });
    this.#state.on('devices', (devices) => {
      this.#health.schedule();
      this.#slices.update();
      this.emit('devices', devices);
    });
    this.#state.on('health', (event) => {
      this.#logger.info(
        { device: event.deviceId, health: event.health, reason: event.reason },
        'device health changed',
      );
      this.emit('health', event);
    });
    this.#watcher = new RestartWatcher({
      ownSockets: () => [this.socketPath, this.registrationSocketPath],
      kubeletSocket: null,
      pollIntervalMs: options.restartPollIntervalMs ?? 1000,
      ...(options.watch ? { watch: options.watch } : {}),
      logger: this.#logger,
      onSignal: () => this.#reserve(),
    });
  }

  /** Discovers devices, reads the checkpoint, serves dra.sock, then exposes the registration socket. */
  async start(): Promise<void> {
    if (this.#started) throw new PluginError('internal', `${this.driverName} already started`);
    this.#started = true;
    this.#prepared = await readCheckpoint(this.checkpointPath, this.driverName);
    try {
      await this.#options.source.start();
    } catch (err) {
      throw new PluginError(
        'source-failed',
        `${this.driverName}: ${this.#options.source.kind} source failed to start: ${PluginError.from(err).message}`,
        { cause: err },
      );
    }
    this.#state.attach();
    await this.#serveDra();
    await this.#serveRegistration();
    this.#registration.phase = 'registering';
    await this.#watcher.start();
    this.#slices.start();
    this.#heartbeat = setInterval(() => this.#health.resend(), healthHeartbeatMs(this.#healthTimeoutSeconds));
    this.#heartbeat.unref();
    this.#logger.info(
      {
        socket: this.socketPath,
        registrationSocket: this.registrationSocketPath,
        devices: this.#state.devices().length,
        preparedClaims: this.#prepared.size,
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
    this.#watcher.stop();
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    await this.#slices.stop();
    await this.#reserving;
    this.#health.endAll();
    if (this.#registrationServer)
      await closeUnixServer(this.#registrationServer, this.registrationSocketPath);
    if (this.#server) await closeUnixServer(this.#server, this.socketPath);
    this.#registrationServer = null;
    this.#server = null;
    await this.#serial.catch(() => undefined);
    await (this.#checkpointNext ?? this.#checkpointWrite)?.catch(() => undefined);
    this.#state.detach();
    await this.#options.source.stop();
    this.#registration.phase = 'stopped';
    this.#logger.info('stopped');
  }

  devices(): PluginDevice[] {
    return this.#state.devices();
  }

  registration(): DraRegistrationState {
    return { ...this.#registration, fileWatch: fileWatchOf(this.#watcher, this.#options.source) };
  }

  /** Claims prepared on this node (from the checkpoint and since), by UID. */
  preparedClaims(): PreparedClaim[] {
    return [...this.#prepared.values()];
  }

  /** This node's devices as its ResourceSlices list them (what is published, or about to be). */
  sliceDevices(): SliceDevice[] {
    return this.#state.devices().map((d) => {
      // DeviceState keeps an unchanged device's object; so does this, for the publisher's compare.
      const faulted = this.#state.faults().has(d.id);
      const faultTaint = this.#faultTaints.get(d.id);
      const cached = this.#sliceDeviceCache.get(d);
      if (cached?.faulted === faulted && cached.faultTaint === faultTaint) return cached.device;
      const device = sliceDevice(d, this.#sliceDevice);
      this.#sliceDeviceCache.set(d, { faulted, faultTaint, device });
      return device;
    });
  }

  /** ResourceSlice publication: generation, slice names, request counts, last error. */
  publication(): PublicationStats {
    return this.#slices.stats();
  }

  /** Open NodeWatchResources streams. */
  get healthStreams(): number {
    return this.#health.size;
  }

  /**
   * The device list (with health) the kubelet was last sent on NodeWatchResources, or null while no
   * stream is open. The same array until the next send, as DeviceState keeps its list.
   */
  healthReported(): readonly PluginDevice[] | null {
    return this.#health.reported();
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
    if (this.#faultTaints.get(id) !== before) this.#slices.update();
    this.#logger.info({ device: deviceId, reason, taint }, 'fault injected');
  }

  clearFault(deviceId: string): void {
    const id = this.#idOf(deviceId);
    this.#state.clearFault(id);
    if (this.#faultTaints.delete(id)) this.#slices.update();
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
          taint: (this.#faultTaints.get(id)?.effect as FaultTaintEffect | undefined) ?? null,
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
      this.#byName = new Map(this.#state.devices().map((d) => [draDeviceName(d.id), d]));
      this.#byNameVersion = this.#state.version;
    }
    return this.#byName.get(name);
  }

  // --- serving -------------------------------------------------------------------------------

  async #serveDra(): Promise<void> {
    const server = newServer();
    const node = draNodeServices(
      { prepare: (claims) => this.#prepare(claims), unprepare: (claims) => this.#unprepare(claims) },
      this.#logger,
    );
    server.addService(drav1.DRAPluginService, node.v1);
    server.addService(drav1beta1.DRAPluginService, node.v1beta1);
    const health = healthServices((call) => this.#watchHealth(call));
    server.addService(health.v1.definition, health.v1.impl);
    server.addService(health.v1alpha1.definition, health.v1alpha1.impl);
    await this.#bind(server, this.socketPath);
    this.#server = server;
  }

  async #serveRegistration(): Promise<void> {
    const server = registrationServer(
      {
        type: DRA_PLUGIN_TYPE,
        name: this.driverName,
        endpoint: this.socketPath,
        supportedVersions: [
          DRA_PLUGIN_SERVICE_V1,
          DRA_PLUGIN_SERVICE_V1BETA1,
          DRA_RESOURCE_HEALTH_SERVICE_V1,
          DRA_RESOURCE_HEALTH_SERVICE_V1ALPHA1,
        ],
      },
      {
        onInfo: () => {
          this.#registration.infoCalls++;
          if (this.#registration.phase !== 'stopped') this.#registration.phase = 'registering';
        },
        onStatus: (status) => this.#onRegistrationStatus(status.pluginRegistered, status.error),
      },
    );
    // Bound under a hidden name (the plugin watcher skips dot files), then renamed into place: the
    // socket appears to the kubelet already listening. A socket file exists from bind(), a moment
    // before listen(); a kubelet that sees it then gets ECONNREFUSED and retries a second later.
    const hidden = join(
      dirname(this.registrationSocketPath),
      `.${basename(this.registrationSocketPath)}.binding`,
    );
    await this.#bind(server, hidden);
    try {
      await rename(hidden, this.registrationSocketPath);
    } catch (err) {
      await closeUnixServer(server, hidden);
      throw new PluginError(
        'internal',
        `cannot serve on ${this.registrationSocketPath}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    this.#registrationServer = server;
  }

  async #bind(server: Server, path: string): Promise<void> {
    try {
      await bindUnixServer(server, path, {
        log: this.#logger,
        routeConnection: this.#options.routeConnection,
      });
    } catch (err) {
      server.forceShutdown();
      throw new PluginError('internal', `cannot serve on ${path}: ${(err as Error).message}`, { cause: err });
    }
  }

  #onRegistrationStatus(registered: boolean, error: string): string | undefined {
    const at = new Date().toISOString();
    if (registered) {
      this.#registration = { ...this.#registration, phase: 'registered', registeredAt: at, error: null };
      this.#logger.info('registered with the kubelet');
      // A (re)starting kubelet deletes the node's ResourceSlices of drivers that are not
      // registered: check them again now rather than at the next resync.
      this.#slices.resync();
      this.emit('registered', { at });
      return undefined;
    }
    const text = error || 'the kubelet refused the registration';
    this.#registration = { ...this.#registration, phase: 'failed', error: text };
    this.#logger.error({ err: text }, 'the kubelet refused the registration');
    this.emit('registration-error', { error: text });
    // What upstream's registration server answers to a refusal.
    return `failed registration process: ${text}`;
  }

  #watchHealth(call: ServerWritableStream<unknown, Buffer>): void {
    this.#logger.info({ rpc: 'NodeWatchResources', streams: this.#health.size + 1 }, 'stream opened');
    this.#health.add(call, 0);
  }

  /** A socket of ours was deleted or replaced: bind whichever is gone again (one at a time). */
  #reserve(): void {
    this.#reserving = this.#reserving.then(async () => {
      if (this.#stopping) return;
      this.#watcher.pause();
      try {
        const gone = await this.#missingSockets();
        if (gone.dra && this.#server) {
          await closeUnixServer(this.#server, null);
          this.#server = null;
          await this.#serveDra();
          this.#logger.warn({ socket: this.socketPath }, 'DRA socket was removed: serving it again');
          this.emit('socket-restored', { at: new Date().toISOString(), socket: this.socketPath });
        }
        if (gone.registration && this.#registrationServer) {
          await closeUnixServer(this.#registrationServer, null);
          this.#registrationServer = null;
          await this.#serveRegistration();
          this.#registration.phase = 'registering';
          this.#logger.warn(
            { socket: this.registrationSocketPath },
            'registration socket was removed: serving it again for the plugin watcher',
          );
          this.emit('socket-restored', { at: new Date().toISOString(), socket: this.registrationSocketPath });
        }
        await this.#watcher.rememberOwnSockets();
      } catch (err) {
        const e = PluginError.from(err);
        this.#registration = { ...this.#registration, phase: 'failed', error: e.message };
        this.#logger.error({ err: e.message }, 'cannot serve again');
        this.emit('registration-error', { error: e.message });
      } finally {
        this.#watcher.resume();
      }
    });
  }

  async #missingSockets(): Promise<{ dra: boolean; registration: boolean }> {
    const isSocket = (p: string): Promise<boolean> =>
      stat(p).then(
        (s) => s.isSocket(),
        () => false,
      );
    return {
      dra: !(await isSocket(this.socketPath)),
      registration: !(await isSocket(this.registrationSocketPath)),
    };
  }

  // --- NodePrepareResources / NodeUnprepareResources -----------------------------------------

  /**
   * Group commit of the checkpoint: resolves once a write that started after this call has
   * finished (`changed`), or once the write in flight has (`!changed`: state made by an earlier call
   * this one relies on). Every call that changes state while a write runs shares the next write, so
   * concurrent prepares cost one fsync, not one each.
   */
  #commit(changed: boolean): Promise<void> {
    if (!changed)
      return (this.#checkpointNext ?? this.#checkpointWrite ?? Promise.resolve()).then(() => undefined);
    if (this.#checkpointNext) return this.#checkpointNext;
    const next = (this.#checkpointWrite ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => {
        // Changes from now on need another write.
        this.#checkpointNext = null;
        const write = writeCheckpoint(this.checkpointPath, this.driverName, this.#prepared);
        this.#checkpointWrite = write;
        void write
          .finally(() => {
            if (this.#checkpointWrite === write) this.#checkpointWrite = null;
          })
          .catch(() => undefined);
        return write;
      });
    this.#checkpointNext = next;
    return next;
  }

  #serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#serial.catch(() => undefined).then(fn);
    this.#serial = run;
    return run;
  }

  #responseDevices(claim: PreparedClaim): drav1.Device[] {
    return claim.devices.map((d) => ({
      requestNames: d.requestNames,
      poolName: d.poolName,
      deviceName: d.deviceName,
      cdiDeviceIds: d.cdiDeviceIds,
      ...(d.shareId !== undefined ? { shareId: d.shareId } : {}),
    }));
  }

  async #prepare(claims: readonly drav1.Claim[]): Promise<Record<string, drav1.NodePrepareResourceResponse>> {
    const started = performance.now();
    const response: Record<string, drav1.NodePrepareResourceResponse> = {};
    const outcomes: DraClaimOutcome[] = [];
    const fail = (ref: ClaimRef, message: string): void => {
      response[ref.uid] = { devices: [], error: message };
      outcomes.push({ ...ref, devices: [], error: message });
      this.#logger.warn({ claim: claimLabel(ref), uid: ref.uid, err: message }, 'claim not prepared');
    };
    // Read the claims first, outside the serialised section (upstream: "do slow API calls before
    // serializing"); a claim prepared already is answered from the checkpoint.
    const unique = new Map<string, ClaimRef>();
    for (const c of claims) {
      const problem = claimRefProblem(c);
      if (problem) fail(c, problem);
      else if (!unique.has(c.uid)) unique.set(c.uid, { namespace: c.namespace, name: c.name, uid: c.uid });
    }
    const reads = await Promise.all(
      [...unique.values()].map(async (ref) => {
        if (this.#prepared.has(ref.uid)) return { ref, claim: undefined, error: null };
        try {
          return {
            ref,
            claim: await this.#options.kube.readResourceClaim(ref.namespace, ref.name),
            error: null,
          };
        } catch (err) {
          return {
            ref,
            claim: undefined,
            error: `retrieve claim ${claimLabel(ref)}: ${PluginError.from(err).message}`,
          };
        }
      }),
    );
    const added: PreparedClaim[] = [];
    await this.#serialized(async () => {
      for (const { ref, claim, error } of reads) {
        if (error !== null) {
          fail(ref, error);
          continue;
        }
        const existing = this.#prepared.get(ref.uid);
        if (existing) {
          response[ref.uid] = { devices: this.#responseDevices(existing), error: '' };
          outcomes.push({ ...ref, devices: existing.devices.map((d) => d.deviceName), error: null });
          continue;
        }
        try {
          const prepared = await this.#prepareClaim(ref, claim ?? null);
          this.#prepared.set(ref.uid, prepared);
          added.push(prepared);
          response[ref.uid] = { devices: this.#responseDevices(prepared), error: '' };
          outcomes.push({ ...ref, devices: prepared.devices.map((d) => d.deviceName), error: null });
        } catch (err) {
          fail(ref, PluginError.from(err).message);
        }
      }
    });
    // Answer once the checkpoint holds what this call prepared (or what an earlier call that this
    // one found prepared still has in flight). Calls that overlap share one write.
    try {
      await this.#commit(added.length > 0);
    } catch (err) {
      // Not recorded: not prepared. Undo, so a later call starts over.
      const message = PluginError.from(err).message;
      for (const prepared of added) {
        if (this.#prepared.get(prepared.uid) === prepared) this.#prepared.delete(prepared.uid);
        await removeClaimSpec(this.#cdi, prepared.uid).catch(() => undefined);
        const outcome = outcomes.find((o) => o.uid === prepared.uid);
        if (outcome) outcome.error = message;
        response[prepared.uid] = { devices: [], error: message };
      }
      this.#logger.error({ err: message }, 'checkpoint write failed: claims not prepared');
    }
    const durationMs = performance.now() - started;
    this.emit('prepared', { claims: outcomes, durationMs });
    return response;
  }

  /** Checks one claim, writes its CDI spec and runs the prepare hook; the caller records it. */
  async #prepareClaim(ref: ClaimRef, claim: ResourceClaim | null): Promise<PreparedClaim> {
    const allocated = devicesToPrepare(ref, claim, {
      driverName: this.driverName,
      poolName: this.poolName,
      nodeName: this.nodeName,
      deviceByName: (name) => this.#deviceByName(name),
      taintKeys: (device) => {
        const fault = this.#faultTaints.get(device.id);
        const keys = this.#taintKey === null ? [] : [this.#taintKey];
        return fault ? [...keys, fault.key] : keys;
      },
    });
    this.#assertNotInUse(ref, allocated);
    const devices: PreparedDevice[] = allocated.map(({ result, device }) => {
      const cdiName = result.shareID ? `${result.device}-${result.shareID}` : result.device;
      return {
        requestNames: [baseRequestName(result.request)],
        poolName: result.pool,
        deviceName: result.device,
        deviceId: device.id,
        cdiDeviceIds: [cdiDeviceId(this.#cdi, ref.uid, cdiName)],
        ...(result.shareID ? { shareId: result.shareID } : {}),
      };
    });
    const edits = this.#options.containerEdits ?? defaultContainerEdits;
    await writeClaimSpec(
      this.#cdi,
      ref.uid,
      allocated.map(({ result, device }) => ({
        deviceName: result.shareID ? `${result.device}-${result.shareID}` : result.device,
        edits: edits(device, ref),
      })),
    );
    if (this.#options.prepare) {
      try {
        await this.#options.prepare(this.#context(ref, devices));
      } catch (err) {
        await removeClaimSpec(this.#cdi, ref.uid).catch(() => undefined);
        throw new PluginError(
          'internal',
          `prepare hook for claim ${claimLabel(ref)} failed: ${PluginError.from(err).message}`,
          {
            cause: err,
          },
        );
      }
    }
    this.#logger.info(
      { claim: claimLabel(ref), uid: ref.uid, devices: devices.map((d) => d.deviceName) },
      'claim prepared',
    );
    return {
      uid: ref.uid,
      namespace: ref.namespace,
      name: ref.name,
      devices,
      preparedAt: new Date().toISOString(),
    };
  }

  /**
   * The last line of defence upstream asks drivers for: a device prepared for another claim is not
   * handed out again, unless devices take multiple allocations (replicas).
   */
  #assertNotInUse(ref: ClaimRef, allocated: readonly AllocatedDevice[]): void {
    if ((this.#options.replicas ?? 1) > 1) return;
    const holders = new Map<string, PreparedClaim>();
    for (const claim of this.#prepared.values())
      for (const d of claim.devices) holders.set(d.deviceName, claim);
    const busy = allocated
      .map(({ result }) => ({ device: result.device, holder: holders.get(result.device) }))
      .filter((b): b is { device: string; holder: PreparedClaim } => b.holder !== undefined);
    if (busy.length > 0) {
      throw new PluginError(
        'invalid-argument',
        busy
          .map(
            (b) =>
              `device ${b.device} is already prepared for claim ${claimLabel(b.holder)} (UID ${b.holder.uid})`,
          )
          .join('; '),
      );
    }
  }

  #context(ref: ClaimRef, devices: readonly PreparedDevice[]): DraClaimContext {
    return {
      claim: ref,
      devices: devices.flatMap((d) => {
        const device = this.#state.get(d.deviceId);
        return device
          ? [
              {
                device,
                deviceName: d.deviceName,
                requestNames: d.requestNames,
                ...(d.shareId !== undefined ? { shareId: d.shareId } : {}),
              },
            ]
          : [];
      }),
    };
  }

  async #unprepare(
    claims: readonly drav1.Claim[],
  ): Promise<Record<string, drav1.NodeUnprepareResourceResponse>> {
    const started = performance.now();
    const response: Record<string, drav1.NodeUnprepareResourceResponse> = {};
    const outcomes: DraClaimOutcome[] = [];
    let changed = false;
    await this.#serialized(async () => {
      for (const c of claims) {
        const ref: ClaimRef = { namespace: c.namespace, name: c.name, uid: c.uid };
        const problem = claimRefProblem(ref);
        if (problem) {
          response[ref.uid] = { error: problem };
          outcomes.push({ ...ref, devices: [], error: problem });
          continue;
        }
        const prepared = this.#prepared.get(ref.uid);
        // Idempotent: unpreparing a claim that is not prepared (any more) succeeds.
        try {
          if (prepared) {
            if (this.#options.unprepare) await this.#options.unprepare(this.#context(ref, prepared.devices));
            this.#prepared.delete(ref.uid);
            changed = true;
          }
          await removeClaimSpec(this.#cdi, ref.uid);
          response[ref.uid] = { error: '' };
          outcomes.push({ ...ref, devices: prepared?.devices.map((d) => d.deviceName) ?? [], error: null });
          if (prepared) this.#logger.info({ claim: claimLabel(ref), uid: ref.uid }, 'claim unprepared');
        } catch (err) {
          const message = `unprepare claim ${claimLabel(ref)}: ${PluginError.from(err).message}`;
          response[ref.uid] = { error: message };
          outcomes.push({ ...ref, devices: [], error: message });
          this.#logger.warn({ claim: claimLabel(ref), uid: ref.uid, err: message }, 'claim not unprepared');
        }
      }
    });
    await this.#commit(changed);
    this.emit('unprepared', { claims: outcomes, durationMs: performance.now() - started });
    return response;
  }
}
