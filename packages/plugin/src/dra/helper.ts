// The plumbing of one DRA driver on one node: the TypeScript counterpart of
// k8s.io/dynamic-resource-allocation/kubeletplugin's Helper (draplugin.go, v0.37). It owns the
// sockets (<plugins dir>/<driver>/dra.sock, then <plugins_registry>/<driver>-reg.sock for the
// kubelet's plugin watcher: serve first, as upstream does) and serves them again when they are
// deleted; the registration state; the DRAPlugin gRPC service (v1 + v1beta1), which reads each claim
// from the API server and hands it to the driver's DRAPlugin (PrepareResourceClaims /
// UnprepareResourceClaims); the DRAResourceHealth streams (v1 + v1alpha1) with their heartbeat; and
// ResourceSlice publication (PublishResources). What a claim's preparation does is the DRAPlugin's
// alone (default: cdi-checkpoint-preparer.ts). With a DeviceStatusWriter it also reports each
// prepared claim's devices in the claim's `status.devices` (device-status.ts), which upstream's helper
// leaves to the driver.
// Unlike upstream's helper it re-creates either socket when it is deleted (the plugin watcher then
// registers the driver again), reads and checks claims one by one (a claim that cannot be read fails
// alone, not the call), and does not read a claim the DRAPlugin says it holds prepared.
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import type { ServerWritableStream } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import {
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
import type { DeviceState } from '../device-state.js';
import { PluginError } from '../errors.js';
import { newServer } from '../grpc-status.js';
import { registrationServer } from '../registration.js';
import type { RestartWatcher } from '../restart-watch.js';
import { ListAndWatchStreams } from '../server.js';
import { SocketServers, UnixSocketServer } from '../socket-server.js';
import type { FileWatchState, PluginDevice } from '../types.js';
import type { CounterSet, ResourceClaim, SliceDevice } from './api-types.js';
import { baseRequestName, checkedAllocation, claimLabel, claimRefProblem, type ClaimRef } from './claims.js';
import type { ClaimToPrepare, DRAPlugin, PrepareResult, UnprepareResult } from './draplugin.js';
import { encodeHealth, healthHeartbeatMs, healthServices } from './health.js';
import type { DeviceStatusWriter } from './device-status.js';
import type { DraKubeApi } from './kube-api.js';
import { draNodeServices } from './node-server.js';
import { ResourceSlicePublisher, type PublicationStats, type PublishedEvent } from './resource-slices.js';

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

/** One claim's device status write. */
export interface DeviceStatusOutcome {
  uid: string;
  namespace: string;
  name: string;
  written: number;
  error: string | null;
}

/** The events the Helper emits (DraDriver emits them as its own). */
export interface HelperEvents {
  registered: [event: { at: string }];
  'registration-error': [event: { error: string }];
  prepared: [event: { claims: DraClaimOutcome[]; durationMs: number }];
  unprepared: [event: { claims: DraClaimOutcome[]; durationMs: number }];
  /** ResourceSlices were written (created, updated or deleted). */
  'slices-published': [event: PublishedEvent];
  /** Publishing failed; it is retried after `retryInMs`. */
  'slices-error': [event: { error: string; retryInMs: number }];
  /**
   * The `status.devices` entries of prepared claims were written (`written` 0: already so) or could
   * not be (`error`; the claims stay prepared).
   */
  'device-status': [event: { claims: DeviceStatusOutcome[] }];
  /** A deleted socket of the driver is served again. */
  'socket-restored': [event: { at: string; socket: string }];
  /** A NodeWatchResources message went out (the health the kubelet now has). */
  'health-sent': [event: { at: string; streams: number }];
  /** A NodeWatchResources stream opened or closed: `streams` are open now. */
  'health-streams': [event: { at: string; streams: number }];
}

export interface HelperOptions {
  driverName: string;
  nodeName: string;
  /** The pool of this node's devices (the ResourceSlices' and the health messages' pool). */
  poolName: string;
  kube: DraKubeApi;
  /** The driver's claims work. */
  plugin: DRAPlugin;
  /** Writes each prepared claim's `status.devices` (none: the driver reports no device status). */
  deviceStatus?: DeviceStatusWriter | null;
  /**
   * Run prepare and unprepare calls one at a time (default true, upstream's `Serialize`). A
   * DRAPlugin that serialises its own critical section (the default preparer does, to share
   * checkpoint writes between overlapping calls) turns it off.
   */
  serialize?: boolean;
  /** The devices whose health the health streams carry (with the fault overlay). */
  health: DeviceState;
  /** health_check_timeout_seconds sent with every device (0: the kubelet's default, 30 s). */
  healthCheckTimeoutSeconds?: number;
  /** The devices to publish (read on every sync; `publishResources()` says they changed). */
  resources: () => SliceDevice[];
  /** Counter sets of partitionable devices, published in a ResourceSlice of their own. */
  sharedCounters?: () => CounterSet[];
  /** The names a device has in the ResourceSlices (the health stream's device names). */
  healthDeviceNames?: (device: PluginDevice) => string[];
  /** Devices per ResourceSlice (128, or 64 when any device may carry a taint). */
  maxDevicesPerSlice: number;
  /** The kubelet's plugins directory; the driver serves <dir>/<driver>/dra.sock. */
  pluginsDir?: string;
  /** The kubelet plugin watcher's directory. */
  pluginsRegistryDir?: string;
  logger: Logger;
  /** Where the ResourceSlice publisher logs. */
  slicesLogger: Logger;
  /**
   * How bindUnixServer hands each connection of dra.sock and the registration socket to grpc-js
   * (natively unless given); see ResourcePluginOptions.routeConnection.
   */
  routeConnection?: ConnectionRouter;
  /** Polling fallback of the socket watch (default 1000 ms). */
  restartPollIntervalMs?: number;
  /** The socket directory's watch: fs.watch unless a test injects a failing one. */
  watch?: WatchFactory;
  /** Backoff of ResourceSlice publication after an API error. */
  publishRetry?: { initialMs?: number; maxMs?: number };
  /** List this node's ResourceSlices again and repair them at this interval. */
  resyncMs?: number;
}

/** The DRA driver's data directory, DRA socket and registration socket. */
export function draPaths(
  driverName: string,
  pluginsDir: string | undefined,
  pluginsRegistryDir: string | undefined,
): { dataDir: string; socketPath: string; registrationSocketPath: string } {
  const dataDir = join(pluginsDir ?? KUBELET_PLUGINS_PATH, driverName);
  return {
    dataDir,
    socketPath: join(dataDir, DRA_SOCKET_NAME),
    registrationSocketPath: join(pluginsRegistryDir ?? PLUGINS_REGISTRY_PATH, `${driverName}-reg.sock`),
  };
}

export class Helper extends EventEmitter<HelperEvents> {
  readonly driverName: string;
  readonly socketPath: string;
  readonly registrationSocketPath: string;
  readonly #options: HelperOptions;
  readonly #logger: Logger;
  readonly #health: ListAndWatchStreams;
  readonly #healthTimeoutSeconds: number;
  readonly #slices: ResourceSlicePublisher;
  readonly #dra: UnixSocketServer;
  readonly #registrationSocket: UnixSocketServer;
  readonly #sockets: SocketServers;
  #heartbeat: NodeJS.Timeout | null = null;
  /** Prepare and unprepare calls, one at a time (with `serialize`). */
  #serial: Promise<unknown> = Promise.resolve();
  #registration: Omit<DraRegistrationState, 'fileWatch'> = {
    phase: 'starting',
    registeredAt: null,
    infoCalls: 0,
    error: null,
  };
  #stopping = false;

  constructor(options: HelperOptions) {
    super();
    this.#options = options;
    this.driverName = options.driverName;
    const paths = draPaths(options.driverName, options.pluginsDir, options.pluginsRegistryDir);
    this.socketPath = paths.socketPath;
    this.registrationSocketPath = paths.registrationSocketPath;
    this.#logger = options.logger;
    this.#healthTimeoutSeconds = options.healthCheckTimeoutSeconds ?? 0;
    this.#health = new ListAndWatchStreams(
      options.health,
      () => this.emit('health-sent', { at: new Date().toISOString(), streams: this.#health.size }),
      (_generation, remaining, durationMs) => {
        this.#logger.info({ rpc: 'NodeWatchResources', durationMs, streams: remaining }, 'stream closed');
        this.emit('health-streams', { at: new Date().toISOString(), streams: remaining });
      },
      () => this.emit('health-streams', { at: new Date().toISOString(), streams: this.#health.size }),
      (devices) =>
        encodeHealth(
          devices,
          options.poolName,
          this.#healthTimeoutSeconds,
          Math.floor(Date.now() / 1000),
          options.healthDeviceNames,
        ),
    );
    this.#slices = new ResourceSlicePublisher({
      driverName: options.driverName,
      nodeName: options.nodeName,
      poolName: options.poolName,
      kube: options.kube,
      devices: options.resources,
      maxDevicesPerSlice: options.maxDevicesPerSlice,
      ...(options.sharedCounters ? { sharedCounters: options.sharedCounters } : {}),
      logger: options.slicesLogger,
      ...(options.publishRetry ? { retry: options.publishRetry } : {}),
      ...(options.resyncMs ? { resyncMs: options.resyncMs } : {}),
      onPublished: (event) => this.emit('slices-published', event),
      onError: (event) => this.emit('slices-error', event),
    });
    this.#dra = new UnixSocketServer({
      path: this.socketPath,
      build: () => this.#draServer(),
      logger: this.#logger,
      ...(options.routeConnection ? { routeConnection: options.routeConnection } : {}),
    });
    this.#registrationSocket = new UnixSocketServer({
      path: this.registrationSocketPath,
      build: () => this.#registrationServer(),
      logger: this.#logger,
      bindHidden: true,
      ...(options.routeConnection ? { routeConnection: options.routeConnection } : {}),
    });
    this.#sockets = new SocketServers({
      sockets: [this.#dra, this.#registrationSocket],
      kubeletSocket: null,
      pollIntervalMs: options.restartPollIntervalMs ?? 1000,
      ...(options.watch ? { watch: options.watch } : {}),
      logger: this.#logger,
      onSignal: () => this.#reserve(),
    });
  }

  /** Serves dra.sock, then the registration socket; starts publishing and the health heartbeat. */
  async start(): Promise<void> {
    await this.#sockets.serve();
    this.#registration.phase = 'registering';
    await this.#sockets.watch();
    this.#slices.start();
    this.#heartbeat = setInterval(() => this.#health.resend(), healthHeartbeatMs(this.#healthTimeoutSeconds));
    this.#heartbeat.unref();
  }

  /**
   * Stops publishing (the ResourceSlices stay, as upstream's helper leaves them), ends the health
   * streams, stops serving and removes both sockets, and waits for prepare and unprepare calls in
   * progress.
   */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    await this.#sockets.unwatch();
    await this.#slices.stop();
    this.#health.endAll();
    await this.#sockets.close();
    await this.#serial.catch(() => undefined);
  }

  /** After the DRAPlugin's work is done too: the phase reads `stopped`. */
  stopped(): void {
    this.#registration.phase = 'stopped';
  }

  registration(): DraRegistrationState {
    return { ...this.#registration, fileWatch: this.#sockets.watcher.watchMode };
  }

  /** The watch on the driver's sockets (its mode is part of `registration().fileWatch`). */
  get socketWatcher(): RestartWatcher {
    return this.#sockets.watcher;
  }

  /** The devices changed (health, presence, a taint): tell the health streams and publish. */
  devicesChanged(): void {
    this.#health.schedule();
    this.#slices.update();
  }

  /** The driver's resources changed: publish them (coalesced with a sync in progress). */
  publishResources(): void {
    this.#slices.update();
  }

  /** ResourceSlice publication: generation, slice names, request counts, last error. */
  publication(): PublicationStats {
    return this.#slices.stats();
  }

  /** Open NodeWatchResources streams. */
  get healthStreams(): number {
    return this.#health.size;
  }

  /** The device list the kubelet was last sent on NodeWatchResources, or null while none is open. */
  healthReported(): ReturnType<ListAndWatchStreams['reported']> {
    return this.#health.reported();
  }

  // --- serving -------------------------------------------------------------------------------

  #draServer(): ReturnType<typeof newServer> {
    const server = newServer();
    const node = draNodeServices(
      {
        prepare: (claims) => this.#prepare(claims),
        unprepare: (claims) => this.#unprepare(claims),
      },
      this.#logger,
    );
    server.addService(drav1.DRAPluginService, node.v1);
    server.addService(drav1beta1.DRAPluginService, node.v1beta1);
    const health = healthServices((call) => this.#watchHealth(call));
    server.addService(health.v1.definition, health.v1.impl);
    server.addService(health.v1alpha1.definition, health.v1alpha1.impl);
    return server;
  }

  #registrationServer(): ReturnType<typeof newServer> {
    return registrationServer(
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

  /** A socket of ours was deleted or replaced: serve whichever is gone again (one at a time). */
  #reserve(): void {
    if (this.#stopping) return;
    this.#sockets
      .reserve('missing', (socket) => {
        if (socket === this.#registrationSocket) {
          this.#registration.phase = 'registering';
          this.#logger.warn(
            { socket: socket.path },
            'registration socket was removed: serving it again for the plugin watcher',
          );
        } else {
          this.#logger.warn({ socket: socket.path }, 'DRA socket was removed: serving it again');
        }
        this.emit('socket-restored', { at: new Date().toISOString(), socket: socket.path });
      })
      .catch((err: unknown) => {
        const e = PluginError.from(err);
        this.#registration = { ...this.#registration, phase: 'failed', error: e.message };
        this.#logger.error({ err: e.message }, 'cannot serve again');
        this.emit('registration-error', { error: e.message });
      });
  }

  // --- NodePrepareResources / NodeUnprepareResources -----------------------------------------

  #serialized<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#options.serialize === false) return fn();
    const run = this.#serial.catch(() => undefined).then(fn);
    this.#serial = run;
    return run;
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
    const unique = new Map<string, ClaimRef>();
    for (const c of claims) {
      const problem = claimRefProblem(c);
      if (problem) fail(c, problem);
      else if (!unique.has(c.uid)) unique.set(c.uid, { namespace: c.namespace, name: c.name, uid: c.uid });
    }
    // Read the claims before serialising (upstream: "do slow API calls before serializing").
    const reads = await Promise.all([...unique.values()].map((ref) => this.#readClaim(ref)));
    const toPrepare: ClaimToPrepare[] = [];
    for (const read of reads) if (read.error === null) toPrepare.push({ ref: read.ref, claim: read.claim });
    const results = await this.#serialized(() => this.#options.plugin.prepareResourceClaims(toPrepare));
    const statusWrites: Promise<DeviceStatusOutcome>[] = [];
    for (const { ref, error, claim } of reads) {
      if (error !== null) {
        fail(ref, error);
        continue;
      }
      const result: PrepareResult = results.get(ref.uid) ?? {
        error: `the driver returned no result for claim ${claimLabel(ref)}`,
      };
      if ('error' in result) {
        fail(ref, result.error);
        continue;
      }
      response[ref.uid] = {
        devices: result.devices.map((d) => ({
          requestNames: d.requests.map(baseRequestName),
          poolName: d.poolName,
          deviceName: d.deviceName,
          cdiDeviceIds: [...d.cdiDeviceIds],
          ...(d.shareId !== undefined ? { shareId: d.shareId } : {}),
        })),
        error: '',
      };
      outcomes.push({ ...ref, devices: result.devices.map((d) => d.deviceName), error: null });
      if (this.#options.deviceStatus && result.devices.length > 0)
        statusWrites.push(this.#writeDeviceStatus(this.#options.deviceStatus, ref, result, claim));
    }
    // The status is reported before the kubelet hears back, so a running container's claim says so;
    // a failed write is logged and emitted, never a failed claim (its devices are prepared).
    if (statusWrites.length > 0) this.emit('device-status', { claims: await Promise.all(statusWrites) });
    this.emit('prepared', { claims: outcomes, durationMs: performance.now() - started });
    return response;
  }

  async #writeDeviceStatus(
    writer: DeviceStatusWriter,
    ref: ClaimRef,
    result: Extract<PrepareResult, { devices: unknown }>,
    claim: ResourceClaim | null,
  ): Promise<DeviceStatusOutcome> {
    try {
      const { written } = await writer.write(ref, result.devices, claim);
      if (written > 0)
        this.#logger.info({ claim: claimLabel(ref), devices: written }, 'device status written');
      return { ...ref, written, error: null };
    } catch (err) {
      const message = PluginError.from(err).message;
      this.#logger.warn({ claim: claimLabel(ref), uid: ref.uid, err: message }, 'device status not written');
      return { ...ref, written: 0, error: message };
    }
  }

  /** One claim from the API server, checked as upstream's helper checks it; or why not. */
  async #readClaim(
    ref: ClaimRef,
  ): Promise<{ ref: ClaimRef; claim: ResourceClaim | null; error: string | null }> {
    if (this.#options.plugin.isPrepared?.(ref.uid)) return { ref, claim: null, error: null };
    let claim: ResourceClaim | null;
    try {
      claim = await this.#options.kube.readResourceClaim(ref.namespace, ref.name);
    } catch (err) {
      return {
        ref,
        claim: null,
        error: `retrieve claim ${claimLabel(ref)}: ${PluginError.from(err).message}`,
      };
    }
    try {
      checkedAllocation(ref, claim);
    } catch (err) {
      return { ref, claim: null, error: PluginError.from(err).message };
    }
    return { ref, claim, error: null };
  }

  async #unprepare(
    claims: readonly drav1.Claim[],
  ): Promise<Record<string, drav1.NodeUnprepareResourceResponse>> {
    const started = performance.now();
    const response: Record<string, drav1.NodeUnprepareResourceResponse> = {};
    const outcomes: DraClaimOutcome[] = [];
    const refs: ClaimRef[] = [];
    for (const c of claims) {
      const ref: ClaimRef = { namespace: c.namespace, name: c.name, uid: c.uid };
      if (!claimRefProblem(ref)) refs.push(ref);
    }
    const results = await this.#serialized(() => this.#options.plugin.unprepareResourceClaims(refs));
    for (const c of claims) {
      const ref: ClaimRef = { namespace: c.namespace, name: c.name, uid: c.uid };
      const problem = claimRefProblem(ref);
      const result: UnprepareResult = problem
        ? { error: problem }
        : (results.get(ref.uid) ?? { error: `the driver returned no result for claim ${claimLabel(ref)}` });
      response[ref.uid] = { error: result.error ?? '' };
      outcomes.push({
        ...ref,
        devices: result.error === null ? [...(result.devices ?? [])] : [],
        error: result.error,
      });
    }
    this.emit('unprepared', { claims: outcomes, durationMs: performance.now() - started });
    return response;
  }
}
