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
// Where inotify is unavailable (every fs.inotify.max_user_instances taken) the directory is polled,
// as the kubelet's reconciler loop would still find the sockets; `watchMode` says which.

import { lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { credentials, Metadata } from '@grpc/grpc-js';
import type { Logger } from 'pino';
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
}

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
    this.known.clear();
  }

  /** A (re)starting kubelet discovers every registration socket again. */
  rescan(): void {
    this.known.clear();
    this.scan();
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
    if (id !== null && known?.id === id) return;
    if (known) {
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
    const entry: Known = { id, registered: null };
    this.known.set(path, entry);
    await this.register(path, entry);
  }

  private async register(socket: string, entry: Known): Promise<void> {
    const client = new pluginregistration.RegistrationClient(
      `unix://${socket}`,
      credentials.createInsecure(),
    );
    const deadline = () => ({ deadline: Date.now() + this.o.timeoutMs });
    const notify = (status: pluginregistration.RegistrationStatus) =>
      new Promise<void>((resolve) => {
        client.notifyRegistrationStatus(status, new Metadata(), deadline(), (err) => {
          if (err) this.log.warn({ socket, err: goGrpcErrorText(err) }, 'NotifyRegistrationStatus failed');
          resolve();
        });
      });
    try {
      let info: pluginregistration.PluginInfo;
      try {
        info = await new Promise<pluginregistration.PluginInfo>((resolve, reject) =>
          client.getInfo({}, new Metadata(), deadline(), (err, res) => (err ? reject(err) : resolve(res))),
        );
      } catch (err) {
        if (this.known.get(socket) === entry) this.known.delete(socket);
        this.log.warn(
          {
            socket,
            err: `RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket ${socket}, err: ${goGrpcErrorText(err)}`,
          },
          'plugin registration failed',
        );
        return;
      }
      const handler = this.o.handlers.get(info.type);
      if (!handler) {
        const error = `RegisterPlugin error -- no handler registered for plugin type: ${info.type} at socket ${socket}`;
        this.log.warn(
          { socket, type: info.type, name: info.name, err: error },
          'plugin registration refused',
        );
        await notify({ pluginRegistered: false, error });
        return;
      }
      const endpoint = info.endpoint || socket;
      const refuse = async (what: string, err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        const error = `RegisterPlugin error -- plugin ${what} failed with err: ${message}`;
        this.log.warn(
          { socket, type: info.type, name: info.name, endpoint, err: error },
          'plugin registration refused',
        );
        this.o.onRejected({ resource: info.name, endpoint, error });
        await notify({ pluginRegistered: false, error });
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
        return;
      }
      entry.registered = { handler, name: info.name, endpoint };
      this.log.info({ socket, type: info.type, name: info.name, endpoint }, 'plugin registered');
      await notify({ pluginRegistered: true, error: '' });
    } finally {
      client.close();
    }
  }
}
