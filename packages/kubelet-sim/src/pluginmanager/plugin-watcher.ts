// The kubelet's plugin manager (pkg/kubelet/pluginmanager, release-1.33) in one piece: the
// plugin watcher (pluginwatcher/plugin_watcher.go) sees sockets appear in the plugins_registry
// directory, and the reconciler and operation executor (reconciler/, operationexecutor/) ask each
// one GetInfo (pluginregistration v1), hand it to the handler registered for its type
// (ValidatePlugin, then RegisterPlugin) and report the outcome with NotifyRegistrationStatus. A
// socket that disappears is deregistered (DeRegisterPlugin).

import { watch, lstatSync, mkdirSync, readdirSync, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { credentials, Metadata } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { KUBELET_SOCKET_NAME, pluginregistration } from '@plugboard/proto';
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
}

interface Registered {
  handler: PluginHandler;
  name: string;
  endpoint: string;
}

export class PluginWatcher {
  private watcher: FSWatcher | null = null;
  /** Registration socket → the plugin it registered (null while registering or after a failure). */
  private readonly known = new Map<string, Registered | null>();
  private readonly log: Logger;

  constructor(private readonly o: PluginWatcherOptions) {
    this.log = o.logger.child({ component: 'plugin-watcher' });
  }

  start(): void {
    mkdirSync(this.o.dir, { recursive: true, mode: 0o750 });
    this.watcher = watch(this.o.dir, (_event, name) => {
      if (name) this.check(join(this.o.dir, name));
    });
    this.watcher.on('error', (err) => this.log.error({ err: String(err) }, 'plugin watcher failed'));
    this.log.info({ dir: this.o.dir }, 'plugin watcher started');
    this.scan();
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
    for (const name of readdirSync(this.o.dir)) this.check(join(this.o.dir, name));
  }

  private check(path: string): void {
    if (path.endsWith(`/${KUBELET_SOCKET_NAME}`) || path.split('/').pop()?.startsWith('.')) return;
    let isSocket = false;
    try {
      isSocket = lstatSync(path).isSocket();
    } catch {
      isSocket = false;
    }
    if (isSocket && !this.known.has(path)) {
      this.known.set(path, null);
      this.register(path).catch((err: unknown) =>
        this.log.error({ socket: path, err: String(err) }, 'plugin registration failed'),
      );
    } else if (!isSocket && this.known.has(path)) {
      const registered = this.known.get(path);
      this.known.delete(path);
      if (registered) registered.handler.deRegisterPlugin(registered.name, registered.endpoint);
    }
  }

  private async register(socket: string): Promise<void> {
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
        this.known.delete(socket);
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
        await notify({
          pluginRegistered: false,
          error: `RegisterPlugin error -- no handler registered for plugin type: ${info.type} at socket ${socket}`,
        });
        return;
      }
      const endpoint = info.endpoint || socket;
      const refuse = async (what: string, err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        const error = `RegisterPlugin error -- plugin ${what} failed with err: ${message}`;
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
      if (!this.known.has(socket)) {
        // The registration socket went away while we were registering it.
        handler.deRegisterPlugin(info.name, endpoint);
        return;
      }
      this.known.set(socket, { handler, name: info.name, endpoint });
      await notify({ pluginRegistered: true, error: '' });
    } finally {
      client.close();
    }
  }
}
