// One resource = one DevicePlugin server on its own socket with its own registration. The
// coordinator of a device plugin: owns the device state (source + exclusion + fault overlay +
// replicas), the sockets (socket-server.ts: served, watched, served again) and the ListAndWatch
// streams, serves the DevicePlugin service (server.ts) and the plugin-watcher Registration service,
// keeps the CDI spec in step with the devices (cdi.ts), and emits the events the gateway and
// dashboard consume. Registration with the kubelet (serve, then register with retry; whether the
// kubelet still holds it; kubelet-restart recovery, re-serve + re-register in-process, never two
// servers at once) is the RegistrationRunner's (registration-runner.ts), driven by the transition
// table in registration-transitions.ts.
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import {
  KUBELET_SOCKET_NAME,
  PLUGINS_REGISTRY_PATH,
  type ConnectionRouter,
  type deviceplugin,
  type WatchFactory,
} from '@plugboard/proto';
import { DeviceState } from './device-state.js';
import { PluginError } from './errors.js';
import { RegistrationRunner } from './registration-runner.js';
import { fileWatchOf } from './restart-watch.js';
import { devicePluginServer, ListAndWatchStreams } from './server.js';
import { SocketServers, UnixSocketServer } from './socket-server.js';
import {
  allocateResponseBuilder,
  type AllocateResponseBuilder,
  type AllocateTemplate,
} from './allocation/response.js';
import { CdiSpecSync } from './cdi.js';
import { assertResourceName } from './resource-name.js';
import type {
  DeviceSource,
  PluginDevice,
  PreferredAllocationDecision,
  RegistrationMode,
  RegistrationState,
  ResourcePluginEvents,
} from './types.js';

export interface ResourcePluginOptions {
  /** Extended resource name, e.g. "example.com/gpu". */
  resourceName: string;
  source: DeviceSource;
  /** The kubelet's device-plugin directory (where kubelet.sock lives and our socket is created). */
  devicePluginDir: string;
  /** Socket file name in devicePluginDir; default derived from the resource name. */
  socketName?: string;
  /** Default <devicePluginDir>/kubelet.sock. */
  kubeletSocket?: string;
  /** Device IDs never advertised. */
  exclude?: readonly string[];
  /** Advertise each device N times as `<id>::<k>`. */
  replicas?: number;
  failRequestsGreaterThanOne?: boolean;
  allocate?: AllocateTemplate;
  /** Called by PreStartContainer; when set, `pre_start_required` is advertised. */
  preStart?: (deviceIds: string[]) => Promise<void>;
  /** Advertise GetPreferredAllocation (default true). */
  preferredAllocation?: boolean;
  registrationMode?: RegistrationMode;
  /** plugin-watcher mode: where the registration socket goes (default /var/lib/kubelet/plugins_registry). */
  pluginsRegistryDir?: string;
  logger?: Logger;
  /**
   * How bindUnixServer hands each connection of the plugin's sockets to grpc-js (natively unless
   * given); @plugboard/grpc-authority's routeConnection serves a kubelet < 1.26 dialling with the
   * socket path as `:authority`.
   */
  routeConnection?: ConnectionRouter;
  /** Polling fallback of the restart watch (default 1000 ms). */
  restartPollIntervalMs?: number;
  /** The socket directory's watch: fs.watch unless a test injects a failing one. */
  watch?: WatchFactory;
  /** Register retry backoff (default 100 ms doubling up to 5000 ms). */
  registrationRetry?: { initialMs?: number; maxMs?: number };
  /**
   * After a registration, how long the kubelet may take to open ListAndWatch before the plugin
   * counts as not held and (kubelet mode) registers again (default 10000 ms).
   */
  streamOpenGraceMs?: number;
  /** Preferred-allocation decisions kept for the dashboard (default 100). */
  preferredAllocationLogSize?: number;
}

/** File name used for a resource's socket: "example.com/gpu" → "example.com-gpu.sock". */
export function defaultSocketName(resourceName: string): string {
  return `${resourceName.replace(/[^A-Za-z0-9._-]/g, '-')}.sock`;
}

export class ResourcePlugin extends EventEmitter<ResourcePluginEvents> {
  readonly resourceName: string;
  readonly socketPath: string;
  /** plugin-watcher mode: the pluginregistration socket; null in kubelet mode. */
  readonly registrationSocketPath: string | null;
  readonly #options: ResourcePluginOptions;
  readonly #state: DeviceState;
  readonly #streams: ListAndWatchStreams;
  readonly #logger: Logger;
  readonly #pluginOptions: deviceplugin.DevicePluginOptions;
  readonly #sockets: SocketServers;
  readonly #registration: RegistrationRunner;
  readonly #decisions: PreferredAllocationDecision[] = [];
  readonly #buildResponse: AllocateResponseBuilder;
  /** The CDI spec kept in step with the devices; null unless `allocate.cdi.enabled`. */
  readonly #cdi: CdiSpecSync | null;
  #stopping = false;
  #started = false;

  constructor(options: ResourcePluginOptions) {
    super();
    assertResourceName(options.resourceName);
    if (options.replicas !== undefined && (!Number.isInteger(options.replicas) || options.replicas < 1)) {
      throw new PluginError('config-invalid', `replicas must be a positive integer, got ${options.replicas}`);
    }
    this.#options = options;
    this.resourceName = options.resourceName;
    // Compiled once; an unknown template variable fails here, before anything is served.
    this.#buildResponse = allocateResponseBuilder(options.resourceName, options.allocate);
    const socketName = options.socketName ?? defaultSocketName(options.resourceName);
    this.socketPath = join(options.devicePluginDir, socketName);
    const kubeletSocket = options.kubeletSocket ?? join(options.devicePluginDir, KUBELET_SOCKET_NAME);
    this.registrationSocketPath =
      options.registrationMode === 'plugin-watcher'
        ? join(
            options.pluginsRegistryDir ?? PLUGINS_REGISTRY_PATH,
            socketName.replace(/\.sock$/, '-registration.sock'),
          )
        : null;
    this.#logger = (options.logger ?? pino({ level: 'silent' })).child({
      component: 'plugin',
      resource: options.resourceName,
    });
    this.#pluginOptions = {
      preStartRequired: options.preStart !== undefined,
      getPreferredAllocationAvailable: options.preferredAllocation ?? true,
    };
    this.#state = new DeviceState({
      source: options.source,
      exclude: options.exclude ?? [],
      replicas: options.replicas ?? 1,
    });
    const cdi = options.allocate?.cdi;
    this.#cdi = cdi?.enabled ? new CdiSpecSync(cdi, () => this.#state.devices()) : null;
    this.#streams = new ListAndWatchStreams(
      this.#state,
      () => {
        const at = new Date().toISOString();
        this.#registration.recordSend(at);
        this.emit('reported', { at, devices: this.#streams.reported() });
      },
      (generation, remaining, durationMs) => {
        if (remaining === 0) this.emit('reported', { at: new Date().toISOString(), devices: null });
        this.#registration.onStreamClosed(generation, remaining, durationMs);
      },
      (generation) => this.#registration.onStreamOpened(generation),
    );
    this.#state.on('devices', (devices) => {
      this.#streams.schedule();
      if (this.#cdi) {
        this.#cdi
          .sync()
          .catch((err: unknown) =>
            this.#logger.error({ err: PluginError.from(err).message }, 'CDI spec write failed'),
          );
      }
      this.emit('devices', devices);
    });
    this.#state.on('health', (event) => {
      this.#logger.info(
        { device: event.deviceId, health: event.health, reason: event.reason },
        'device health changed',
      );
      this.emit('health', event);
    });
    const sockets = [
      new UnixSocketServer({
        path: this.socketPath,
        build: () => this.#server(),
        logger: this.#logger,
        ...(options.routeConnection ? { routeConnection: options.routeConnection } : {}),
      }),
    ];
    if (this.registrationSocketPath !== null) {
      sockets.push(
        new UnixSocketServer({
          path: this.registrationSocketPath,
          build: () => this.#registration.pluginWatcherServer(),
          logger: this.#logger,
          ...(options.routeConnection ? { routeConnection: options.routeConnection } : {}),
        }),
      );
    }
    this.#sockets = new SocketServers({
      sockets,
      kubeletSocket: this.registrationSocketPath ? null : kubeletSocket,
      pollIntervalMs: options.restartPollIntervalMs ?? 1000,
      ...(options.watch ? { watch: options.watch } : {}),
      logger: this.#logger,
      onSignal: (signal) => this.#registration.onRestartSignal(signal),
    });
    this.#registration = new RegistrationRunner({
      resourceName: options.resourceName,
      socketPath: this.socketPath,
      kubeletSocket,
      mode: this.registrationSocketPath === null ? 'kubelet' : 'plugin-watcher',
      pluginOptions: this.#pluginOptions,
      sockets: this.#sockets,
      openStreams: () => this.#streams.size,
      ...(options.registrationRetry ? { registrationRetry: options.registrationRetry } : {}),
      ...(options.streamOpenGraceMs !== undefined ? { streamOpenGraceMs: options.streamOpenGraceMs } : {}),
      logger: this.#logger,
    });
    this.#registration.on('registered', (event) => this.emit('registered', event));
    this.#registration.on('registration-error', (event) => this.emit('registration-error', event));
    this.#registration.on('waiting-for-kubelet', (event) => this.emit('waiting-for-kubelet', event));
    this.#registration.on('kubelet-restart', (event) => this.emit('kubelet-restart', event));
  }

  /** Discovers devices, serves the socket(s), then registers (retrying in the background). */
  async start(): Promise<void> {
    if (this.#started) throw new PluginError('internal', `${this.resourceName} already started`);
    this.#started = true;
    await this.#state.start(this.resourceName);
    // The spec must exist before a kubelet can call Allocate and hand out its names.
    if (this.#cdi) await this.#cdi.sync();
    await this.#sockets.serve();
    await this.#sockets.watch();
    this.#logger.info(
      {
        socket: this.socketPath,
        mode: this.registrationSocketPath ? 'plugin-watcher' : 'kubelet',
        devices: this.#state.devices().length,
      },
      'serving',
    );
    this.#registration.start();
  }

  devices(): PluginDevice[] {
    return this.#state.devices();
  }

  registration(): RegistrationState {
    return {
      ...this.#registration.state(),
      fileWatch: fileWatchOf(this.#sockets.watcher, this.#options.source),
    };
  }

  /** The options sent at registration and returned by GetDevicePluginOptions. */
  pluginOptions(): deviceplugin.DevicePluginOptions {
    return { ...this.#pluginOptions };
  }

  /** Open ListAndWatch streams. */
  get listAndWatchStreams(): number {
    return this.#streams.size;
  }

  /**
   * Holds a device Unhealthy until `clearFault`, even while the source stops listing it. The device
   * must be advertised now unless `absentOk` (restoring a fault whose device may be unplugged).
   */
  injectFault(deviceId: string, reason: string, options: { absentOk?: boolean } = {}): void {
    this.#state.injectFault(deviceId, reason, options);
    this.#logger.info({ device: deviceId, reason, present: this.#state.present(deviceId) }, 'fault injected');
  }

  clearFault(deviceId: string): void {
    this.#state.clearFault(deviceId);
    this.#logger.info({ device: deviceId }, 'fault cleared');
  }

  /** Active faults of the overlay: device ID → reason and whether the device is advertised now. */
  faults(): Map<string, { reason: string; present: boolean }> {
    return new Map(
      [...this.#state.faults()].map(([id, reason]) => [id, { reason, present: this.#state.present(id) }]),
    );
  }

  /**
   * What the kubelet was last told on ListAndWatch (the health it allocates by), or null while no
   * stream is open. Emitted as 'reported' whenever it changes.
   */
  reported(): readonly PluginDevice[] | null {
    return this.#streams.reported();
  }

  preferredAllocationLog(): PreferredAllocationDecision[] {
    return [...this.#decisions];
  }

  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#registration.halt();
    await this.#sockets.unwatch();
    await this.#registration.settle();
    this.#streams.endAll();
    await this.#sockets.close();
    this.#state.detach();
    await this.#options.source.stop();
    await this.#cdi?.settled();
    this.#registration.stopped();
    this.#logger.info('stopped');
  }

  // --- serving -------------------------------------------------------------------------------

  #server(): ReturnType<typeof devicePluginServer> {
    return devicePluginServer({
      resourceName: this.resourceName,
      options: this.#pluginOptions,
      state: this.#state,
      streams: this.#streams,
      generation: () => this.#registration.generation,
      buildResponse: this.#buildResponse,
      failRequestsGreaterThanOne: this.#options.failRequestsGreaterThanOne ?? false,
      preStart: this.#options.preStart ?? null,
      onPreferred: (decision) => {
        this.#decisions.push(decision);
        const max = this.#options.preferredAllocationLogSize ?? 100;
        if (this.#decisions.length > max) this.#decisions.splice(0, this.#decisions.length - max);
        this.#logger.info(
          { chosen: decision.chosen, size: decision.size, reason: decision.reason },
          'preferred allocation',
        );
        this.emit('preferred-allocation', decision);
      },
      onAllocate: (event) => this.emit('allocate', event),
      logger: this.#logger,
    });
  }
}
