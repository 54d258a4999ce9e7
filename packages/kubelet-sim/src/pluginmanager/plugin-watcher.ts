// The kubelet's plugin watcher (pkg/kubelet/pluginmanager) for device plugins: sockets appearing
// in the plugins_registry directory are asked GetInfo (pluginregistration v1); a `DevicePlugin`
// is validated and registered with the device manager at the endpoint it names, and the outcome
// is reported back with NotifyRegistrationStatus. A socket that disappears deregisters the plugin.

import { watch, lstatSync, mkdirSync, readdirSync, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { credentials, Metadata } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { DEVICE_PLUGIN_TYPE, KUBELET_SOCKET_NAME, pluginregistration } from '@plugboard/proto';
import type { DeviceManager } from '../cm/devicemanager/manager.js';
import { goGrpcErrorText } from '../util/grpc-errors.js';

export interface PluginWatcherOptions {
  dir: string;
  deviceManager: DeviceManager;
  timeoutMs: number;
  logger: Logger;
  onRejected: (e: { resource: string; endpoint: string; error: string }) => void;
}

interface Registered {
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
      if (registered) this.o.deviceManager.deregisterFromWatcher(registered.name, registered.endpoint);
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
      if (info.type !== DEVICE_PLUGIN_TYPE) {
        await notify({
          pluginRegistered: false,
          error: `RegisterPlugin error -- no handler registered for plugin type: ${info.type} at socket ${socket}`,
        });
        return;
      }
      const endpoint = info.endpoint || socket;
      try {
        await this.o.deviceManager.registerFromWatcher(info.name, endpoint, info.supportedVersions);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        const error = /^(manager version|invalid name)/.test(message)
          ? `RegisterPlugin error -- plugin validation failed with err: ${message}`
          : `RegisterPlugin error -- plugin registration failed with err: ${message}`;
        this.o.onRejected({ resource: info.name, endpoint, error });
        await notify({ pluginRegistered: false, error });
        return;
      }
      if (!this.known.has(socket)) {
        // The registration socket went away while we were registering it.
        this.o.deviceManager.deregisterFromWatcher(info.name, endpoint);
        return;
      }
      this.known.set(socket, { name: info.name, endpoint });
      await notify({ pluginRegistered: true, error: '' });
    } finally {
      client.close();
    }
  }
}
