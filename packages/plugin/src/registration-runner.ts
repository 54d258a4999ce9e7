// Runs a device plugin's registration with the kubelet: the executing side of the transition table
// in registration-transitions.ts. Turns what happens (the plugin served, Register answered, a
// ListAndWatch stream opened or closed, a restart signal from the socket watch, the plugin
// watcher's GetInfo and NotifyRegistrationStatus) into signals and runs the transitions' actions:
// the Register loop on kubelet.sock with its wait.Backoff, the stream open and closed grace timers,
// kubelet-restart recovery (re-serve what is gone through SocketServers, register again; serialised,
// never two servers at once). Records the state `registration()` reports and emits the registration
// events. The sockets, the ListAndWatch streams and everything else of the plugin are its owner's
// (ResourcePlugin); what it reads of them it is handed.
import { EventEmitter } from 'node:events';
import { basename } from 'node:path';
import type { Logger } from 'pino';
import { Backoff } from '@plugboard/apimachinery';
import type { deviceplugin } from '@plugboard/proto';
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
import type { RestartSignal } from './restart-watch.js';
import type { SocketServers } from './socket-server.js';
import type {
  NotHeldCause,
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

/** The ResourcePlugin events a registration emits (ResourcePlugin re-emits them as its own). */
export type RegistrationEvents = Pick<
  ResourcePluginEvents,
  'registered' | 'registration-error' | 'waiting-for-kubelet' | 'kubelet-restart'
>;

export interface RegistrationRunnerOptions {
  resourceName: string;
  /** The plugin's DevicePlugin socket: its file name is the endpoint registered. */
  socketPath: string;
  /** kubelet mode: where Register is called and whose presence is watched. */
  kubeletSocket: string;
  mode: RegistrationMode;
  /** The options sent with Register. */
  pluginOptions: deviceplugin.DevicePluginOptions;
  /** The plugin's sockets and their watch: re-served after a kubelet restart. */
  sockets: SocketServers;
  /** How many ListAndWatch streams are open now. */
  openStreams: () => number;
  /** Register retry backoff (default 100 ms doubling up to 5000 ms). */
  registrationRetry?: { initialMs?: number; maxMs?: number };
  /** After a registration, how long the kubelet may take to open ListAndWatch (default 10000 ms). */
  streamOpenGraceMs?: number;
  logger: Logger;
}

export class RegistrationRunner extends EventEmitter<RegistrationEvents> {
  readonly #options: RegistrationRunnerOptions;
  readonly #logger: Logger;
  readonly #sockets: SocketServers;
  /** kubelet mode: one Registration channel for the plugin's life (see KubeletRegistrationClient). */
  #kubeletClient: KubeletRegistrationClient | null = null;
  #state: Omit<RegistrationState, 'fileWatch'> = {
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
  #lastStreamRestart = 0;
  /** Generation of the last successful registration and of the last stream the kubelet opened. */
  #registeredGeneration = -1;
  #openedGeneration = -1;
  /** Runs after a registration until the kubelet opens ListAndWatch. */
  #streamOpenTimer: NodeJS.Timeout | null = null;
  /** A restart was counted and no registration has succeeded since: further signals are the same restart. */
  #recovering = false;

  constructor(options: RegistrationRunnerOptions) {
    super();
    this.#options = options;
    this.#logger = options.logger;
    this.#sockets = options.sockets;
  }

  /** The registration as recorded (without the file watch, which is the sockets'). */
  state(): Omit<RegistrationState, 'fileWatch'> {
    return { ...this.#state };
  }

  /** The registration generation in force: a ListAndWatch stream opened now belongs to it. */
  get generation(): number {
    return this.#generation;
  }

  /** Served: register (kubelet mode) or wait for the plugin watcher. */
  start(): void {
    this.#signal('start');
  }

  /** A device list went out on ListAndWatch. */
  recordSend(at: string): void {
    this.#state.lastListAndWatchSend = at;
  }

  /**
   * Stopping, first step: cancels the Register loop, its backoff sleep and the stream-open timer;
   * from here on signals start no recovery.
   */
  halt(): void {
    this.#stopping = true;
    this.#loopId++;
    this.#wake?.();
    this.#clearStreamOpenTimer();
  }

  /** Stopping, after the socket watch stopped: waits for a recovery in progress, closes the channel. */
  async settle(): Promise<void> {
    await this.#restartChain;
    this.#kubeletClient?.close();
    this.#kubeletClient = null;
  }

  /** Stopping, last step: the phase becomes `stopped`. */
  stopped(): void {
    this.#signal('stop');
  }

  /** plugin-watcher mode: the pluginregistration server the kubelet's plugin watcher finds. */
  pluginWatcherServer(): ReturnType<typeof pluginWatcherServer> {
    return pluginWatcherServer(this.#options.resourceName, this.#options.socketPath, {
      onInfo: () => {
        this.#generation++;
        this.#signal('get-info');
      },
      onStatus: (status) => this.#onWatcherStatus(status.pluginRegistered, status.error),
    });
  }

  /**
   * Applies a signal through the transition table (registration-transitions.ts): sets the phase,
   * then runs the transition's actions. Returns false when the signal does not apply in this phase.
   */
  #signal(signal: RegistrationSignal, detail: SignalDetail = {}): boolean {
    const transition = registrationTransition(this.#state.phase, signal);
    if (transition === null) return false;
    this.#state.phase = transition.to;
    for (const action of transition.actions) this.#run(action, transition.to, detail);
    return true;
  }

  #run(action: RegistrationAction, phase: RegistrationPhase, detail: SignalDetail): void {
    switch (action) {
      case 'register':
        // A plugin watcher comes back through the registration socket on its own.
        if (this.#options.mode === 'kubelet') this.#registerLoop();
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
        if (this.#options.mode === 'kubelet') this.#awaitRestartSignals(detail.generation ?? 0);
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
    this.#state = {
      ...this.#state,
      registeredAt: at,
      waitingSince: null,
      error: null,
    };
    this.#logger.info({ attempt }, 'registered with kubelet');
    // The kubelet opens ListAndWatch while handling the registration or right after it.
    if (this.#openedGeneration < this.#generation || this.#options.openStreams() === 0) {
      this.#startStreamOpenTimer();
    }
    this.emit('registered', { at, attempt });
  }

  /** After a first registration, a kubelet that cannot be reached is waited for, not a failure. */
  #recordError(error: string, attempt: number, phase: RegistrationPhase): void {
    // Retries while the kubelet is down repeat the same error: log a change once, repeats at debug.
    const repeated = this.#state.error === error;
    const waitingSince =
      phase === 'waiting-for-kubelet'
        ? (this.#state.waitingSince ?? new Date().toISOString())
        : this.#state.waitingSince;
    this.#state = { ...this.#state, waitingSince, error };
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
    this.#state = { ...this.#state, waitingSince: at, error: reason };
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

  /** The kubelet opened a ListAndWatch stream under `generation`. */
  onStreamOpened(generation: number): void {
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
    const kubeletSocket = this.#options.kubeletSocket;
    const request = registerRequest(
      basename(this.#options.socketPath),
      this.#options.resourceName,
      this.#options.pluginOptions,
    );
    const current = (): boolean => !this.#stopping && loopId === this.#loopId;
    const client = (this.#kubeletClient ??= new KubeletRegistrationClient(kubeletSocket, {
      initialMs: initial,
      maxMs: Math.min(max, REGISTRATION_RECONNECT_MAX_MS),
    }));
    // Once registered, an absent or unreachable kubelet is one to wait for.
    const wasRegistered = this.#state.registeredAt !== null;
    this.#signal('register-attempt');
    void (async () => {
      const retry = new Backoff({ duration: initial, factor: 2, steps: Infinity, cap: max });
      for (let attempt = 1; current(); attempt++) {
        if (!(await socketExists(kubeletSocket))) {
          if (!current()) return;
          this.#signal(wasRegistered ? 'kubelet-lost' : 'kubelet-absent', {
            error: `kubelet socket ${kubeletSocket} not found`,
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

  /** What the socket watch noticed (SocketServers' onSignal). */
  onRestartSignal(signal: RestartSignal): void {
    if (this.#stopping || this.#restarting) return;
    if (signal === 'socket-deleted') {
      // Only a (re)starting kubelet deletes our socket, whatever our registration phase.
      this.#signal('socket-deleted', { detectedBy: 'socket-deleted' });
    } else if (signal === 'kubelet-sock-removed') {
      // A kubelet going away: it takes no registrations and holds none.
      this.#signal('kubelet-sock-removed', {
        cause: 'kubelet-sock-removed',
        reason: `kubelet socket ${this.#options.kubeletSocket} was removed`,
      });
    } else {
      // A new kubelet.sock: a kubelet that knows nothing of us (or, before a registration, "try now").
      this.#signal('kubelet-sock-created', { detectedBy: 'kubelet-sock-recreated' });
    }
  }

  /** A ListAndWatch stream opened under `generation` closed; `remaining` streams are still open. */
  onStreamClosed(generation: number, remaining: number, durationMs: number): void {
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
        if (!(await socketExists(this.#options.kubeletSocket))) return;
        if (this.#stopping || this.#restarting || this.#options.openStreams() > 0) return;
        if (generation < this.#generation) return;
        if (Date.now() - this.#lastStreamRestart < 1000) return;
        if (registrationTransition(this.#state.phase, 'stream-closed-unexplained') === null) return;
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
        const waitingSince = this.#state.waitingSince ?? (this.#state.registeredAt === null ? null : at);
        this.#state = { ...this.#state, waitingSince };
        if (!this.#recovering) {
          this.#recovering = true;
          this.#state.kubeletRestartsSeen++;
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
          this.#logger.info({ socket: this.#options.socketPath }, 're-serving');
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
