// One resource = one DevicePlugin server on its own socket with its own registration. Owns the
// lifecycle in the kubelet's order (serve, then register with retry), whether the kubelet still
// holds the registration (its ListAndWatch stream), kubelet-restart recovery (re-serve + re-register
// in-process, never two servers at once), the fault overlay, the CDI spec (kept in step by cdi.ts's
// CdiSpecSync) and the events the gateway and dashboard consume.
import { EventEmitter } from 'node:events';
import { basename, join } from 'node:path';
import { pino, type Logger } from 'pino';
import { Backoff } from '@plugboard/apimachinery';
import {
  KUBELET_SOCKET_NAME,
  PLUGINS_REGISTRY_PATH,
  type ConnectionRouter,
  type deviceplugin,
  type WatchFactory,
} from '@plugboard/proto';
import { DeviceState } from './device-state.js';
import { PluginError } from './errors.js';
import {
  KubeletRegistrationClient,
  kubeletUnreachable,
  pluginWatcherServer,
  registerRequest,
  socketExists,
} from './registration.js';
import {
  registrationTransition,
  type RegistrationAction,
  type RegistrationSignal,
} from './registration-transitions.js';
import { fileWatchOf, type RestartSignal } from './restart-watch.js';
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
  NotHeldCause,
  PluginDevice,
  PreferredAllocationDecision,
  RegistrationMode,
  RegistrationPhase,
  RegistrationState,
  ResourcePluginEvents,
  RestartDetectedBy,
} from './types.js';

/** How long a closed ListAndWatch stream waits for filesystem restart signals before acting. */
const STREAM_CLOSED_GRACE_MS = 1000;
/**
 * How long the kubelet may take to open ListAndWatch after a registration before the plugin counts
 * as not held: the kubelet's own dial timeout for a registering plugin, so a slow but working
 * kubelet never makes the phase flap.
 */
const STREAM_OPEN_GRACE_MS = 10_000;
/** Cap of the Registration channel's reconnect backoff: a returning kubelet is reached this soon. */
const REGISTRATION_RECONNECT_MAX_MS = 1000;

/** What a registration signal carries for its actions. */
interface SignalDetail {
  attempt?: number;
  error?: string;
  cause?: NotHeldCause;
  reason?: string;
  detectedBy?: RestartDetectedBy;
  /** The registration generation of a closed stream. */
  generation?: number;
}

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
  readonly #kubeletSocket: string;
  readonly #pluginOptions: deviceplugin.DevicePluginOptions;
  readonly #sockets: SocketServers;
  readonly #decisions: PreferredAllocationDecision[] = [];
  readonly #buildResponse: AllocateResponseBuilder;
  /** The CDI spec kept in step with the devices; null unless `allocate.cdi.enabled`. */
  readonly #cdi: CdiSpecSync | null;
  /** kubelet mode: one Registration channel for the plugin's life (see KubeletRegistrationClient). */
  #kubeletClient: KubeletRegistrationClient | null = null;
  #registration: Omit<RegistrationState, 'fileWatch'> = {
    phase: 'starting',
    registeredAt: null,
    waitingSince: null,
    kubeletRestartsSeen: 0,
    lastListAndWatchSend: null,
    error: null,
  };
  /** Bumped on every Register call / GetInfo: streams opened before it closing is expected. */
  #generation = 0;
  #loopId = 0;
  #wake: (() => void) | null = null;
  #restartChain: Promise<void> = Promise.resolve();
  #restarting = false;
  #stopping = false;
  #started = false;
  #lastStreamRestart = 0;
  /** Generation of the last successful registration and of the last stream the kubelet opened. */
  #registeredGeneration = -1;
  #openedGeneration = -1;
  /** Runs after a registration until the kubelet opens ListAndWatch. */
  #streamOpenTimer: NodeJS.Timeout | null = null;
  /** A restart was counted and no registration has succeeded since: further signals are the same restart. */
  #recovering = false;

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
    this.#kubeletSocket = options.kubeletSocket ?? join(options.devicePluginDir, KUBELET_SOCKET_NAME);
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
        this.#registration.lastListAndWatchSend = at;
        this.emit('reported', { at, devices: this.#streams.reported() });
      },
      (generation, remaining, durationMs) => {
        if (remaining === 0) this.emit('reported', { at: new Date().toISOString(), devices: null });
        this.#onStreamClosed(generation, remaining, durationMs);
      },
      (generation) => this.#onStreamOpened(generation),
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
          build: () => this.#registrationServer(),
          logger: this.#logger,
          ...(options.routeConnection ? { routeConnection: options.routeConnection } : {}),
        }),
      );
    }
    this.#sockets = new SocketServers({
      sockets,
      kubeletSocket: this.registrationSocketPath ? null : this.#kubeletSocket,
      pollIntervalMs: options.restartPollIntervalMs ?? 1000,
      ...(options.watch ? { watch: options.watch } : {}),
      logger: this.#logger,
      onSignal: (signal) => this.#onRestartSignal(signal),
    });
  }

  /** Discovers devices, serves the socket(s), then registers (retrying in the background). */
  async start(): Promise<void> {
    if (this.#started) throw new PluginError('internal', `${this.resourceName} already started`);
    this.#started = true;
    try {
      await this.#options.source.start();
    } catch (err) {
      throw new PluginError(
        'source-failed',
        `${this.resourceName}: ${this.#options.source.kind} source failed to start: ${PluginError.from(err).message}`,
        { cause: err },
      );
    }
    this.#state.attach();
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
    this.#signal('start');
  }

  devices(): PluginDevice[] {
    return this.#state.devices();
  }

  registration(): RegistrationState {
    return { ...this.#registration, fileWatch: fileWatchOf(this.#sockets.watcher, this.#options.source) };
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
    this.#loopId++;
    this.#wake?.();
    this.#clearStreamOpenTimer();
    await this.#sockets.unwatch();
    await this.#restartChain;
    this.#kubeletClient?.close();
    this.#kubeletClient = null;
    this.#streams.endAll();
    await this.#sockets.close();
    this.#state.detach();
    await this.#options.source.stop();
    await this.#cdi?.settled();
    this.#signal('stop');
    this.#logger.info('stopped');
  }

  // --- serving -------------------------------------------------------------------------------

  #server(): ReturnType<typeof devicePluginServer> {
    return devicePluginServer({
      resourceName: this.resourceName,
      options: this.#pluginOptions,
      state: this.#state,
      streams: this.#streams,
      generation: () => this.#generation,
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

  /** plugin-watcher mode: the pluginregistration server the kubelet's plugin watcher finds. */
  #registrationServer(): ReturnType<typeof pluginWatcherServer> {
    return pluginWatcherServer(this.resourceName, this.socketPath, {
      onInfo: () => {
        this.#generation++;
        this.#signal('get-info');
      },
      onStatus: (status) => this.#onWatcherStatus(status.pluginRegistered, status.error),
    });
  }

  // --- registration --------------------------------------------------------------------------

  /**
   * Applies a signal through the transition table (registration-transitions.ts): sets the phase,
   * then runs the transition's actions. Returns false when the signal does not apply in this phase.
   */
  #signal(signal: RegistrationSignal, detail: SignalDetail = {}): boolean {
    const transition = registrationTransition(this.#registration.phase, signal);
    if (transition === null) return false;
    this.#registration.phase = transition.to;
    for (const action of transition.actions) this.#run(action, transition.to, detail);
    return true;
  }

  #run(action: RegistrationAction, phase: RegistrationPhase, detail: SignalDetail): void {
    switch (action) {
      case 'register':
        // A plugin watcher comes back through the registration socket on its own.
        if (this.registrationSocketPath === null) this.#registerLoop();
        return;
      case 'record-registered':
        this.#recordRegistered(detail.attempt ?? this.#generation);
        return;
      case 'record-error':
        this.#recordError(detail.error ?? 'registration failed', detail.attempt ?? 0, phase);
        return;
      case 'not-held':
        this.#notHeld(detail.cause ?? 'stream-closed', detail.reason ?? 'the kubelet let go');
        return;
      case 'await-restart-signals':
        if (this.registrationSocketPath === null) this.#awaitRestartSignals(detail.generation ?? 0);
        return;
      case 'restart':
        this.#restart(detail.detectedBy ?? 'socket-deleted');
        return;
      case 'retry-now':
        this.#wake?.();
        return;
    }
  }

  #recordRegistered(attempt: number): void {
    const at = new Date().toISOString();
    this.#recovering = false;
    this.#registeredGeneration = this.#generation;
    this.#registration = {
      ...this.#registration,
      registeredAt: at,
      waitingSince: null,
      error: null,
    };
    this.#logger.info({ attempt }, 'registered with kubelet');
    // The kubelet opens ListAndWatch while handling the registration or right after it.
    if (this.#openedGeneration < this.#generation || this.#streams.size === 0) this.#startStreamOpenTimer();
    this.emit('registered', { at, attempt });
  }

  /** After a first registration, a kubelet that cannot be reached is waited for, not a failure. */
  #recordError(error: string, attempt: number, phase: RegistrationPhase): void {
    // Retries while the kubelet is down repeat the same error: log a change once, repeats at debug.
    const repeated = this.#registration.error === error;
    const waitingSince =
      phase === 'waiting-for-kubelet'
        ? (this.#registration.waitingSince ?? new Date().toISOString())
        : this.#registration.waitingSince;
    this.#registration = { ...this.#registration, waitingSince, error };
    this.#logger[repeated ? 'debug' : 'warn']({ attempt, err: error }, 'registration failed');
    this.emit('registration-error', { error, attempt });
  }

  /**
   * The kubelet let go of a registered plugin: its registration is void until the kubelet takes it
   * back (a kubelet also drops a plugin whose stream ended, after a grace period).
   */
  #notHeld(cause: NotHeldCause, reason: string): void {
    this.#clearStreamOpenTimer();
    const at = new Date().toISOString();
    this.#registration = { ...this.#registration, waitingSince: at, error: reason };
    this.#logger.warn({ cause, reason }, 'no longer held by the kubelet: waiting for it');
    this.emit('waiting-for-kubelet', { at, cause, reason });
  }

  #startStreamOpenTimer(): void {
    this.#clearStreamOpenTimer();
    const generation = this.#generation;
    const ms = this.#options.streamOpenGraceMs ?? STREAM_OPEN_GRACE_MS;
    this.#streamOpenTimer = setTimeout(() => {
      this.#streamOpenTimer = null;
      if (this.#stopping || this.#restarting || generation !== this.#generation) return;
      // kubelet mode: its dial-back failed, and registering again is how a plugin retries.
      this.#signal('stream-open-timeout', {
        cause: 'no-stream',
        reason: `the kubelet accepted the registration but opened no ListAndWatch stream within ${ms} ms`,
      });
    }, ms);
    this.#streamOpenTimer.unref();
  }

  #clearStreamOpenTimer(): void {
    if (this.#streamOpenTimer) clearTimeout(this.#streamOpenTimer);
    this.#streamOpenTimer = null;
  }

  #onStreamOpened(generation: number): void {
    this.#openedGeneration = Math.max(this.#openedGeneration, generation);
    if (generation < this.#generation) return;
    this.#clearStreamOpenTimer();
    // The stream of the registration in force, later than the grace: the kubelet holds it after all.
    if (generation === this.#registeredGeneration && !this.#stopping && !this.#restarting) {
      this.#signal('stream-opened', { attempt: generation });
    }
  }

  #onWatcherStatus(registered: boolean, error: string): void {
    if (registered) this.#signal('registered', { attempt: this.#generation });
    else {
      this.#signal('register-failed', {
        error: error || 'kubelet refused the registration',
        attempt: this.#generation,
      });
    }
  }

  /** Registers until it succeeds; a newer loop (after a restart) supersedes this one. */
  #registerLoop(): void {
    const loopId = ++this.#loopId;
    const initial = this.#options.registrationRetry?.initialMs ?? 100;
    const max = this.#options.registrationRetry?.maxMs ?? 5000;
    const request = registerRequest(basename(this.socketPath), this.resourceName, this.#pluginOptions);
    const current = (): boolean => !this.#stopping && loopId === this.#loopId;
    const client = (this.#kubeletClient ??= new KubeletRegistrationClient(this.#kubeletSocket, {
      initialMs: initial,
      maxMs: Math.min(max, REGISTRATION_RECONNECT_MAX_MS),
    }));
    // Once registered, an absent or unreachable kubelet is one to wait for.
    const wasRegistered = this.#registration.registeredAt !== null;
    this.#signal('register-attempt');
    void (async () => {
      const retry = new Backoff({ duration: initial, factor: 2, steps: Infinity, cap: max });
      for (let attempt = 1; current(); attempt++) {
        if (!(await socketExists(this.#kubeletSocket))) {
          if (!current()) return;
          this.#signal(wasRegistered ? 'kubelet-lost' : 'kubelet-absent', {
            error: `kubelet socket ${this.#kubeletSocket} not found`,
            attempt,
          });
        } else {
          this.#generation++;
          try {
            await this.#sockets.watcher.rememberKubeletSocket();
            await client.register(request);
            if (!current()) return;
            this.#signal('registered', { attempt });
            return;
          } catch (err) {
            if (!current()) return;
            this.#signal(wasRegistered && kubeletUnreachable(err) ? 'kubelet-lost' : 'register-failed', {
              error: PluginError.from(err).message,
              attempt,
            });
          }
        }
        await this.#sleep(retry.step());
      }
    })();
  }

  /** Backoff sleep that a kubelet.sock appearing cuts short. */
  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = () => {
        this.#wake = null;
        done();
      };
    });
  }

  // --- kubelet restarts ----------------------------------------------------------------------

  #onRestartSignal(signal: RestartSignal): void {
    if (this.#stopping || this.#restarting) return;
    if (signal === 'socket-deleted') {
      // Only a (re)starting kubelet deletes our socket, whatever our registration phase.
      this.#signal('socket-deleted', { detectedBy: 'socket-deleted' });
    } else if (signal === 'kubelet-sock-removed') {
      // A kubelet going away: it takes no registrations and holds none.
      this.#signal('kubelet-sock-removed', {
        cause: 'kubelet-sock-removed',
        reason: `kubelet socket ${this.#kubeletSocket} was removed`,
      });
    } else {
      // A new kubelet.sock: a kubelet that knows nothing of us (or, before a registration, "try now").
      this.#signal('kubelet-sock-created', { detectedBy: 'kubelet-sock-recreated' });
    }
  }

  #onStreamClosed(generation: number, remaining: number, durationMs: number): void {
    this.#logger.info({ rpc: 'ListAndWatch', durationMs, streams: remaining }, 'stream closed');
    if (this.#stopping || this.#restarting || remaining > 0 || generation < this.#generation) return;
    // A registration stands only while the kubelet holds its stream.
    this.#signal('stream-closed', {
      cause: 'stream-closed',
      reason: 'the kubelet closed the ListAndWatch stream',
      generation,
    });
  }

  /**
   * kubelet mode, after a closed stream: give the filesystem signals (a restart that deletes
   * sockets) time to win; then re-register if the kubelet simply dropped the stream. With
   * kubelet.sock gone the kubelet is down: its return (the socket re-created) is the signal to act
   * on, not this. If the kubelet died and its stale kubelet.sock is still there, Register fails and
   * retries until the new kubelet deletes our socket, which is then the same restart, not a second.
   */
  #awaitRestartSignals(generation: number): void {
    setTimeout(() => {
      void this.#sockets.watcher.check().then(async () => {
        if (!(await socketExists(this.#kubeletSocket))) return;
        if (this.#stopping || this.#restarting || this.#streams.size > 0) return;
        if (generation < this.#generation) return;
        if (Date.now() - this.#lastStreamRestart < 1000) return;
        if (registrationTransition(this.#registration.phase, 'stream-closed-unexplained') === null) return;
        this.#lastStreamRestart = Date.now();
        this.#signal('stream-closed-unexplained', { detectedBy: 'stream-closed' });
      });
    }, STREAM_CLOSED_GRACE_MS).unref();
  }

  /** Re-serves (when our socket is gone) and re-registers; serialised, never two servers. */
  #restart(detectedBy: RestartDetectedBy): void {
    this.#restarting = true;
    this.#loopId++; // cancel a running registration loop
    this.#restartChain = this.#restartChain
      .then(async () => {
        if (this.#stopping) return;
        const at = new Date().toISOString();
        // A restarted kubelet holds nothing of a registration made with the one before.
        const waitingSince =
          this.#registration.waitingSince ?? (this.#registration.registeredAt === null ? null : at);
        this.#registration = { ...this.#registration, waitingSince };
        if (!this.#recovering) {
          this.#recovering = true;
          this.#registration.kubeletRestartsSeen++;
          this.#signal('restart-begun');
          this.#logger.warn({ detectedBy }, 'kubelet restart detected');
          this.emit('kubelet-restart', { at, detectedBy });
        } else {
          this.#signal('restart-begun');
          this.#logger.info({ detectedBy }, 'further restart signal while recovering');
        }
        const gone = await Promise.all(this.#sockets.sockets.map((socket) => socket.missing()));
        if (detectedBy === 'socket-deleted' || gone.includes(true)) {
          await this.#sockets.reserve('all');
          this.#logger.info({ socket: this.socketPath }, 're-serving');
        }
        this.#signal('served-again');
      })
      .catch((err: unknown) => {
        const e = PluginError.from(err);
        this.#logger.error({ err: e.message }, 'restart recovery failed');
        this.#signal('restart-failed', { error: e.message, attempt: 0 });
      })
      .finally(() => {
        this.#restarting = false;
      });
  }
}
