// The kubelet's plugin manager (pkg/kubelet/pluginmanager, release-1.33) in one piece: the
// plugin watcher (pluginwatcher/plugin_watcher.go) sees sockets appear in the plugins_registry
// directory, and the reconciler and operation executor (reconciler/, operationexecutor/) ask each
// one GetInfo (pluginregistration v1), hand it to the handler registered for its type
// (ValidatePlugin, then RegisterPlugin) and report the outcome with NotifyRegistrationStatus. A
// socket that disappears is deregistered (DeRegisterPlugin); one that is replaced by a new socket
// under the same name (another inode or creation time: the reconciler's new timestamp) is
// deregistered and registered again. Operations on one socket run one after the other, as the
// operation executor's per-socket exclusivity has them. Handlers exist for `DevicePlugin` (the
// device manager) and `DRAPlugin` (the DRA manager); refusals are logged with their reason.
// As upstream's operation generator, the kubelet dials with grpc.WithBlock (10 s: a socket that is
// bound but not yet listening is waited for, not failed) and gives GetInfo 1 s and
// NotifyRegistrationStatus 5 s. A registration that fails in any way (dial, GetInfo, no handler,
// validation, the handler's refusal) leaves the socket in the desired state of the world, so the
// reconciler tries it again, no sooner than goroutinemap's exponential backoff allows (500 ms,
// doubling, at most 2 min 2 s).
// Where inotify is unavailable (every fs.inotify.max_user_instances taken) the directory is polled,
// as the kubelet's reconciler loop would still find the sockets; `watchMode` says which.

import { lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { credentials, Metadata } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { Backoff } from '@plugboard/apimachinery';
import {
  KUBELET_SOCKET_NAME,
  pluginregistration,
  watchDirectory,
  type DirectoryWatch,
  type DirectoryWatchMode,
  type WatchFactory,
} from '@plugboard/proto';
import { goGrpcErrorText } from '../util/grpc-errors.js';

/** pluginmanager/cache.PluginHandler: what a plugin type's owner (the device manager) implements. */
export interface PluginHandler {
  /** Throws when the plugin is not acceptable (the kubelet's error text). */
  validatePlugin(name: string, endpoint: string, versions: string[]): void;
  registerPlugin(name: string, endpoint: string, versions: string[]): Promise<void>;
  deRegisterPlugin(name: string, endpoint: string): void;
}

export interface PluginWatcherOptions {
  dir: string;
  /** Handlers by PluginInfo.type (the kubelet registers the device manager's for `DevicePlugin`). */
  handlers: ReadonlyMap<string, PluginHandler>;
  /** The dial timeout (operation_generator.go's dialTimeoutDuration: 10 s). */
  timeoutMs: number;
  logger: Logger;
  onRejected: (e: { resource: string; endpoint: string; error: string }) => void;
  /** Poll interval when the directory cannot be watched (default 1000 ms, the reconciler's loop). */
  pollMs?: number;
  /** fs.watch unless a test injects a failing one. */
  watch?: WatchFactory;
}

interface Registered {
  handler: PluginHandler;
  name: string;
  endpoint: string;
}

interface Known {
  /** The socket's identity (inode and creation time): a re-created socket has another. */
  id: string;
  registered: Registered | null;
  /** After a failed registration: its backoff, and the timer of the next try. */
  retry: { backoff: Backoff; timer: NodeJS.Timeout | null } | null;
}

/** operation_generator.go: GetInfo's and NotifyRegistrationStatus's timeouts. */
const GET_INFO_TIMEOUT_MS = 1000;
const NOTIFY_TIMEOUT_MS = 5000;
/** goroutinemap/exponentialbackoff: the first wait after a failure and its cap. */
const RETRY_BACKOFF = { duration: 500, factor: 2, steps: Infinity, cap: 122_000 } as const;

/** A Unix socket's identity, null when `path` is not a socket (or gone). */
function socketId(path: string): string | null {
  try {
    const st = lstatSync(path);
    return st.isSocket() ? `${st.ino}:${st.birthtimeMs || st.ctimeMs}` : null;
  } catch {
    return null;
  }
}

export class PluginWatcher {
  private watcher: DirectoryWatch | null = null;
  /** Registration socket → its identity and the plugin it registered (null while registering or after a failure). */
  private readonly known = new Map<string, Known>();
  /** The operation queued or running per socket. */
  private readonly ops = new Map<string, Promise<void>>();
  private readonly log: Logger;

  constructor(private readonly o: PluginWatcherOptions) {
    this.log = o.logger.child({ component: 'plugin-watcher' });
  }

  start(): void {
    mkdirSync(this.o.dir, { recursive: true, mode: 0o750 });
    this.watcher = watchDirectory(
      this.o.dir,
      (name) => (name ? this.check(join(this.o.dir, name)) : this.scan()),
      {
        pollMs: this.o.pollMs ?? 1000,
        persistent: true,
        logger: this.log,
        ...(this.o.watch ? { watch: this.o.watch } : {}),
      },
    );
    this.log.info({ dir: this.o.dir, mode: this.watcher.mode }, 'plugin watcher started');
    this.scan();
  }

  /** How the registry directory is followed: fs.watch, or polling (with the reason) when it cannot be. */
  get watchMode(): { mode: DirectoryWatchMode; reason: string | null } | null {
    return this.watcher ? { mode: this.watcher.mode, reason: this.watcher.reason } : null;
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = null;
    this.forgetAll();
  }

  /** A (re)starting kubelet discovers every registration socket again. */
  rescan(): void {
    this.forgetAll();
    this.scan();
  }

  private forgetAll(): void {
    for (const k of this.known.values()) this.cancelRetry(k);
    this.known.clear();
  }

  private cancelRetry(k: Known): void {
    if (k.retry?.timer) clearTimeout(k.retry.timer);
    k.retry = null;
  }

  /** A failed registration: the reconciler tries the socket again after the backoff. */
  private scheduleRetry(socket: string, entry: Known): void {
    if (this.known.get(socket) !== entry) return;
    entry.retry ??= { backoff: new Backoff(RETRY_BACKOFF), timer: null };
    const retry = entry.retry;
    const delayMs = retry.backoff.step();
    retry.timer = setTimeout(() => {
      retry.timer = null;
      this.check(socket);
    }, delayMs);
    retry.timer.unref();
    this.log.info({ socket, retryInMs: delayMs }, 'plugin registration will be retried');
  }

  private scan(): void {
    let names: string[];
    try {
      names = readdirSync(this.o.dir);
    } catch (err) {
      this.log.error({ dir: this.o.dir, err: String(err) }, 'reading the plugin registry failed');
      return;
    }
    for (const name of names) this.check(join(this.o.dir, name));
  }

  private check(path: string): void {
    if (path.endsWith(`/${KUBELET_SOCKET_NAME}`) || path.split('/').pop()?.startsWith('.')) return;
    const run = (this.ops.get(path) ?? Promise.resolve())
      .then(() => this.reconcile(path))
      .catch((err: unknown) =>
        this.log.error({ socket: path, err: String(err) }, 'plugin registration failed'),
      );
    this.ops.set(path, run);
    void run.finally(() => {
      if (this.ops.get(path) === run) this.ops.delete(path);
    });
  }

  /** Brings one socket's registration in line with what is on disk. */
  private async reconcile(path: string): Promise<void> {
    const id = socketId(path);
    const known = this.known.get(path);
    if (id !== null && known?.id === id) {
      // Registered, or a failed one whose retry is not due yet; its timer calls check() when it is.
      if (known.registered || known.retry?.timer) return;
      await this.register(path, known);
      return;
    }
    if (known) {
      this.cancelRetry(known);
      this.known.delete(path);
      if (known.registered) {
        this.log.info(
          { socket: path, name: known.registered.name, recreated: id !== null },
          'deregistering plugin: its registration socket is gone',
        );
        known.registered.handler.deRegisterPlugin(known.registered.name, known.registered.endpoint);
      }
    }
    if (id === null) return;
    const entry: Known = { id, registered: null, retry: null };
    this.known.set(path, entry);
    await this.register(path, entry);
  }

  private async register(socket: string, entry: Known): Promise<void> {
    const registered = await this.tryRegister(socket, entry);
    if (registered) this.cancelRetry(entry);
    else this.scheduleRetry(socket, entry);
  }

  /** operation_generator.go's GenerateRegisterPluginFunc; false when it failed (and is to be retried). */
  private async tryRegister(socket: string, entry: Known): Promise<boolean> {
    const client = new pluginregistration.RegistrationClient(
      `unix://${socket}`,
      credentials.createInsecure(),
    );
    const within = (ms: number) => ({ deadline: Date.now() + ms });
    const failed = (err: string, fields: Record<string, unknown> = {}): false => {
      this.log.warn({ socket, ...fields, err }, 'plugin registration failed');
      return false;
    };
    /** notifyPlugin: null when the status was delivered, else the error. */
    const notify = (status: pluginregistration.RegistrationStatus) =>
      new Promise<string | null>((resolve) => {
        client.notifyRegistrationStatus(status, new Metadata(), within(NOTIFY_TIMEOUT_MS), (err) =>
          resolve(err ? goGrpcErrorText(err) : null),
        );
      });
    try {
      // grpc.DialContext(…, grpc.WithBlock()): wait for the connection, up to the dial timeout.
      const dialError = await new Promise<Error | undefined>((resolve) =>
        client.waitForReady(Date.now() + this.o.timeoutMs, resolve),
      );
      if (dialError)
        return failed(`RegisterPlugin error -- dial failed at socket ${socket}, err: ${dialError.message}`);
      let info: pluginregistration.PluginInfo;
      try {
        info = await new Promise<pluginregistration.PluginInfo>((resolve, reject) =>
          client.getInfo({}, new Metadata(), within(GET_INFO_TIMEOUT_MS), (err, res) =>
            err ? reject(err) : resolve(res),
          ),
        );
      } catch (err) {
        return failed(
          `RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket ${socket}, err: ${goGrpcErrorText(err)}`,
        );
      }
      const handler = this.o.handlers.get(info.type);
      if (!handler) {
        const error = `RegisterPlugin error -- no handler registered for plugin type: ${info.type} at socket ${socket}`;
        this.log.warn(
          { socket, type: info.type, name: info.name, err: error },
          'plugin registration refused',
        );
        await notify({ pluginRegistered: false, error });
        return false;
      }
      const endpoint = info.endpoint || socket;
      const refuse = async (what: string, err: unknown): Promise<false> => {
        const message = err instanceof Error ? err.message : String(err);
        const error = `RegisterPlugin error -- plugin ${what} failed with err: ${message}`;
        this.log.warn(
          { socket, type: info.type, name: info.name, endpoint, err: error },
          'plugin registration refused',
        );
        this.o.onRejected({ resource: info.name, endpoint, error });
        await notify({ pluginRegistered: false, error });
        return false;
      };
      try {
        handler.validatePlugin(info.name, endpoint, info.supportedVersions);
      } catch (err) {
        return await refuse('validation', err);
      }
      try {
        await handler.registerPlugin(info.name, endpoint, info.supportedVersions);
      } catch (err) {
        return await refuse('registration', err);
      }
      if (this.known.get(socket) !== entry) {
        // The kubelet restarted (or stopped) while this plugin was being registered.
        handler.deRegisterPlugin(info.name, endpoint);
        return true;
      }
      entry.registered = { handler, name: info.name, endpoint };
      this.log.info({ socket, type: info.type, name: info.name, endpoint }, 'plugin registered');
      const notifyError = await notify({ pluginRegistered: true, error: '' });
      if (notifyError !== null && this.known.get(socket) === entry) {
        // Upstream deregisters a plugin that was not told it is registered, and tries again.
        entry.registered = null;
        handler.deRegisterPlugin(info.name, endpoint);
        return failed(
          `RegisterPlugin error -- failed to send registration status at socket ${socket}, err: ${notifyError}`,
          { name: info.name },
        );
      }
      return true;
    } finally {
      client.close();
    }
  }
}
