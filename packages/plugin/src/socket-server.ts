// The one way a device plugin and a DRA driver serve gRPC on a Unix socket of their own: serve,
// serve again when the socket file is removed (a restarting kubelet cleans its directories, an
// operator deletes a socket), stop and remove. Owns the server objects (one per socket, never two
// at once) and the watch on the socket files; what a removal means (a kubelet restart to count and
// register again after, or only a socket to restore) is the caller's. The counterpart of
// upstream's kubeletplugin nonblockinggrpcserver.go (and the endpoint/registrar listeners), which
// serves but never re-serves.
import { createHash } from 'node:crypto';
import { rename, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Server } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import {
  bindUnixServer,
  closeUnixServer,
  type ConnectionRouter,
  type DirectoryWatchLogger,
  type WatchFactory,
  unixSocketPathProblem,
} from '@plugboard/proto';
import { PluginError } from './errors.js';
import { RestartWatcher, type RestartSignal } from './restart-watch.js';

export interface UnixSocketServerOptions {
  path: string;
  /** Builds the gRPC server; called for every (re-)serve, so handlers close over live state. */
  build: () => Server;
  logger: Logger;
  /**
   * Bind under a hidden name (the plugin watcher skips dot files) and rename into place, so the
   * socket appears already listening: a socket file exists from bind(), a moment before listen(),
   * and a kubelet that finds it then gets ECONNREFUSED and retries only a second later. The hidden
   * name is short (`.<8 hex>.binding`): it must fit a Unix socket address (107 bytes) wherever the
   * final path does — `.<socket name>.binding` did not under a real node's 70-byte plugins_registry,
   * Node shortened it silently and the rename failed with ENOENT.
   */
  bindHidden?: boolean;
  /**
   * How bindUnixServer hands each connection to grpc-js (natively unless given): @plugboard/grpc-authority's
   * routeConnection serves a kubelet < 1.26 dialling with the socket path as `:authority`.
   */
  routeConnection?: ConnectionRouter;
}

/** One gRPC server on one Unix socket. */
export class UnixSocketServer {
  readonly path: string;
  readonly #options: UnixSocketServerOptions;
  #server: Server | null = null;

  constructor(options: UnixSocketServerOptions) {
    this.path = options.path;
    this.#options = options;
  }

  /** Whether a server is bound (it may still have lost its file). */
  get serving(): boolean {
    return this.#server !== null;
  }

  async serve(): Promise<void> {
    // Checked for the final path too: a hidden bind renamed to a path too long would sit there
    // unreachable (a kubelet's dial fails 'invalid argument') while the driver waited to register.
    const problem = unixSocketPathProblem(this.path);
    if (problem) throw new PluginError('invalid-argument', problem);
    const server = this.#options.build();
    const bindPath = this.#options.bindHidden
      ? join(
          dirname(this.path),
          `.${createHash('sha256').update(basename(this.path)).digest('hex').slice(0, 8)}.binding`,
        )
      : this.path;
    try {
      await bindUnixServer(server, bindPath, {
        log: this.#options.logger,
        routeConnection: this.#options.routeConnection,
      });
    } catch (err) {
      server.forceShutdown();
      throw new PluginError('internal', `cannot serve on ${bindPath}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    if (bindPath !== this.path) {
      try {
        await rename(bindPath, this.path);
      } catch (err) {
        await closeUnixServer(server, bindPath);
        throw new PluginError('internal', `cannot serve on ${this.path}: ${(err as Error).message}`, {
          cause: err,
        });
      }
    }
    this.#server = server;
  }

  /** The socket file is gone or is not a socket any more. */
  async missing(): Promise<boolean> {
    return stat(this.path).then(
      (s) => !s.isSocket(),
      () => true,
    );
  }

  /** Closes the server (its file is gone or not ours) and serves a new one. */
  async reserve(): Promise<void> {
    await this.close(false);
    await this.serve();
  }

  /** Closes the server; `removeFile` also removes the socket file. */
  async close(removeFile: boolean): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (server) await closeUnixServer(server, removeFile ? this.path : null);
  }
}

export interface SocketServersOptions {
  /** In serving order; stopped in reverse. */
  sockets: readonly UnixSocketServer[];
  /** kubelet.sock when its re-creation and removal are signals too (kubelet registration mode). */
  kubeletSocket: string | null;
  pollIntervalMs: number;
  /** The socket directories' watch: fs.watch unless a test injects a failing one. */
  watch?: WatchFactory;
  /** Where a watch that falls back to polling is reported. */
  logger?: DirectoryWatchLogger;
  onSignal: (signal: RestartSignal) => void;
}

/**
 * The sockets of one device plugin or DRA driver and the watch on them. Re-serving is serialised
 * (one server per socket at any time) and does not signal itself: the watch pauses while it binds.
 */
export class SocketServers {
  readonly sockets: readonly UnixSocketServer[];
  /** The filesystem watch: own sockets (and kubelet.sock). */
  readonly watcher: RestartWatcher;
  #reserving: Promise<unknown> = Promise.resolve();
  #stopped = false;

  constructor(options: SocketServersOptions) {
    this.sockets = options.sockets;
    this.watcher = new RestartWatcher({
      ownSockets: () => this.sockets.map((s) => s.path),
      kubeletSocket: options.kubeletSocket,
      pollIntervalMs: options.pollIntervalMs,
      ...(options.watch ? { watch: options.watch } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      onSignal: options.onSignal,
    });
  }

  /** Serves every socket in order. */
  async serve(): Promise<void> {
    for (const socket of this.sockets) await socket.serve();
  }

  /** Starts the watch (after serving: the files there now are ours). */
  watch(): Promise<void> {
    return this.watcher.start();
  }

  /**
   * Serves again, after any re-serve in progress: `'missing'` the sockets whose file is gone
   * (`onServed` after each), `'all'` every socket (all closed first, then all served). Resolves with
   * the sockets served again; rejects when one cannot be served (the rest stay as they are).
   */
  reserve(
    which: 'missing' | 'all',
    onServed?: (socket: UnixSocketServer) => void,
  ): Promise<UnixSocketServer[]> {
    const run = this.#reserving
      .catch(() => undefined)
      .then(async () => {
        if (this.#stopped) return [];
        this.watcher.pause();
        try {
          let served: UnixSocketServer[];
          if (which === 'all') {
            for (const socket of this.sockets) await socket.close(true);
            for (const socket of this.sockets) await socket.serve();
            served = [...this.sockets];
          } else {
            const missing = await Promise.all(this.sockets.map((s) => s.missing()));
            served = this.sockets.filter((s, i) => missing[i] && s.serving);
            for (const socket of served) {
              await socket.reserve();
              onServed?.(socket);
            }
          }
          await this.watcher.rememberOwnSockets();
          return served;
        } finally {
          this.watcher.resume();
        }
      });
    this.#reserving = run;
    return run;
  }

  /** Stops the watch and waits for a re-serve in progress; the servers stay up until `close`. */
  async unwatch(): Promise<void> {
    this.#stopped = true;
    this.watcher.stop();
    await this.#reserving.catch(() => undefined);
  }

  /** Stops serving and removes the socket files, the last served first. */
  async close(): Promise<void> {
    for (const socket of [...this.sockets].reverse()) await socket.close(true);
  }
}
