// The device manager's Registration server (pkg/kubelet/cm/devicemanager/plugin/v1beta1 server.go,
// release-1.33) on `<dir>/kubelet.sock`: Start cleans the directory of every Unix socket (not the
// checkpoint) and serves; Register checks the API version and the resource name, checks that the
// endpoint names a socket inside the directory, then connects the client inside the call (the
// plugin must already be serving). Refusals reach the plugin as Go errors: status UNKNOWN.

import { lstatSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Server, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { routeConnection } from '@plugboard/grpc-authority';
import {
  bindUnixServer,
  closeUnixServer,
  deviceplugin,
  DEVICE_PLUGIN_API_VERSION,
  KUBELET_CHECKPOINT_FILE,
  KUBELET_SOCKET_NAME,
} from '@plugboard/proto';
import { KubeletSimError } from '../../../../errors.js';
import { unknownStatus } from '../../../../util/grpc-errors.js';
import { isExtendedResourceName } from '@plugboard/topology';
import type { RegisteredVia } from '../../types.js';

/** What the server and the plugin-watcher handler need from the manager (api.go's ClientHandler role). */
export interface ClientHandler {
  /** Dial the plugin, GetDevicePluginOptions, then PluginConnected and ListAndWatch. */
  connectClient(resource: string, socketPath: string, via: RegisteredVia): Promise<void>;
  /** The plugin is gone (DeRegisterPlugin): disconnect it and start its grace period. */
  disconnectClient(resource: string, socketPath: string): void;
}

export interface RegistrationServerOptions {
  devicePluginDir: string;
  handler: ClientHandler;
  onRejected: (e: { resource: string; endpoint: string; error: string }) => void;
  log: Logger;
}

export class RegistrationServer {
  readonly socketPath: string;
  private server: Server | null = null;

  constructor(private readonly o: RegistrationServerOptions) {
    this.socketPath = join(o.devicePluginDir, KUBELET_SOCKET_NAME);
  }

  /** Deletes every socket in the directory, then serves Registration on kubelet.sock. */
  async start(): Promise<void> {
    mkdirSync(this.o.devicePluginDir, { recursive: true, mode: 0o750 });
    this.cleanupPluginDirectory();
    const server = new Server();
    server.addService(deviceplugin.RegistrationService, {
      register: this.register.bind(this),
    } satisfies deviceplugin.RegistrationServer);
    // A grpc-go server accepts a plugin that dials with the raw socket path as :authority (grpc-go
    // < 1.57, grpc-java, older Python gRPC); so does this one, through the rewriter.
    await bindUnixServer(server, this.socketPath, { log: this.o.log, routeConnection });
    this.server = server;
    this.o.log.info({ socket: this.socketPath }, 'device plugin registration server listening');
  }

  /** Stops serving; in-flight calls such as a Register still dialling its plugin are cancelled. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await closeUnixServer(server, this.socketPath);
    else rmSync(this.socketPath, { force: true });
  }

  private register(
    call: ServerUnaryCall<deviceplugin.RegisterRequest, deviceplugin.Empty>,
    callback: sendUnaryData<deviceplugin.Empty>,
  ): void {
    const req = call.request;
    const log = this.o.log.child({ resource: req.resourceName, rpc: 'Register' });
    log.info({ endpoint: req.endpoint, version: req.version }, 'got registration request from device plugin');
    this.validateAndConnect(req).then(
      () => callback(null, {}),
      (err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        log.warn({ err: message }, 'bad registration request from device plugin');
        this.o.onRejected({ resource: req.resourceName, endpoint: req.endpoint, error: message });
        callback(unknownStatus(message), null);
      },
    );
  }

  private async validateAndConnect(req: deviceplugin.RegisterRequest): Promise<void> {
    if (req.version !== DEVICE_PLUGIN_API_VERSION) {
      throw new KubeletSimError(
        'RegistrationRejected',
        `requested API version "${req.version}" is not supported by kubelet. Supported version is ["${DEVICE_PLUGIN_API_VERSION}"]`,
      );
    }
    if (!isExtendedResourceName(req.resourceName)) {
      throw new KubeletSimError('RegistrationRejected', `the ResourceName "${req.resourceName}" is invalid`);
    }
    await this.o.handler.connectClient(req.resourceName, this.endpointPath(req.endpoint), 'kubelet.sock');
  }

  /** `endpoint` must name a Unix socket directly inside the device-plugin directory. */
  private endpointPath(endpoint: string): string {
    const dir = this.o.devicePluginDir;
    if (endpoint === '' || endpoint !== basename(endpoint) || endpoint === '.' || endpoint === '..') {
      throw new KubeletSimError(
        'RegistrationRejected',
        `failed to dial device plugin: endpoint "${endpoint}" must be a socket file name inside ${dir}`,
      );
    }
    if (endpoint === KUBELET_SOCKET_NAME) {
      throw new KubeletSimError(
        'RegistrationRejected',
        `failed to dial device plugin: endpoint "${endpoint}" is the kubelet's own socket`,
      );
    }
    const path = join(dir, endpoint);
    let isSocket = false;
    try {
      isSocket = lstatSync(path).isSocket();
    } catch {
      throw new KubeletSimError(
        'RegistrationRejected',
        `failed to dial device plugin: ${path}: no such file or directory`,
      );
    }
    if (!isSocket)
      throw new KubeletSimError(
        'RegistrationRejected',
        `failed to dial device plugin: ${path} is not a Unix socket`,
      );
    return path;
  }

  /** CleanupPluginDirectory: every Unix socket goes, other files and the checkpoint stay. */
  private cleanupPluginDirectory(): void {
    for (const name of readdirSync(this.o.devicePluginDir)) {
      if (name === KUBELET_CHECKPOINT_FILE) continue;
      const path = join(this.o.devicePluginDir, name);
      try {
        if (lstatSync(path).isSocket()) rmSync(path, { force: true });
      } catch (err) {
        this.o.log.warn({ path, err: String(err) }, 'failed to remove file');
      }
    }
  }
}
