// Registration with the kubelet, both ways it supports (the plugin-watcher server also registers
// DRA drivers, see dra/driver.ts):
//  - 'kubelet': call v1beta1.Registration/Register on kubelet.sock (the plugin must already serve,
//    since the kubelet dials back for GetDevicePluginOptions while handling Register);
//  - 'plugin-watcher': serve pluginregistration.Registration in the plugins_registry directory;
//    the kubelet finds the socket, calls GetInfo, then NotifyRegistrationStatus.
import { access } from 'node:fs/promises';
import { credentials, Metadata, status, type Server, type ServiceError } from '@grpc/grpc-js';
import {
  DEVICE_PLUGIN_API_VERSION,
  DEVICE_PLUGIN_TYPE,
  deviceplugin,
  pluginregistration,
} from '@plugboard/proto';
import { PluginError } from './errors.js';
import { newServer } from './grpc-status.js';

export async function socketExists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The Registration client of one plugin, kept for its life: a gRPC channel dials kubelet.sock anew
 * on every (re)connect, so a restarted kubelet needs no new channel. One channel per Register call
 * (as this once was) leaves connections behind with @grpc/grpc-js 1.14: a channel closed while its
 * subchannel backs off after a failed connect (a stale kubelet.sock) reconnects when the backoff
 * ends, to the next kubelet, and holds that connection, owned by nobody.
 */
export class KubeletRegistrationClient {
  readonly kubeletSocket: string;
  readonly #client: deviceplugin.RegistrationClient;

  /** `maxBackoffMs` caps the channel's reconnect backoff: how soon a returning kubelet is reached. */
  constructor(kubeletSocket: string, backoff: { initialMs: number; maxMs: number }) {
    this.kubeletSocket = kubeletSocket;
    this.#client = new deviceplugin.RegistrationClient(
      `unix://${kubeletSocket}`,
      credentials.createInsecure(),
      {
        'grpc.initial_reconnect_backoff_ms': backoff.initialMs,
        'grpc.max_reconnect_backoff_ms': backoff.maxMs,
      },
    );
  }

  /** One Register call; rejects with a PluginError carrying the kubelet's message. */
  async register(request: deviceplugin.RegisterRequest, timeoutMs = 5000): Promise<void> {
    try {
      await new Promise<void>((resolve, reject) => {
        this.#client.register(
          request,
          new Metadata(),
          { deadline: Date.now() + timeoutMs },
          (err: ServiceError | null) => (err ? reject(err) : resolve()),
        );
      });
    } catch (err) {
      const e = err as ServiceError;
      throw new PluginError(
        'registration-failed',
        `Register on ${this.kubeletSocket} failed: ${e.details || e.message}`,
        { cause: err },
      );
    }
  }

  close(): void {
    this.#client.close();
  }
}

/**
 * Whether a `register` failure means that no kubelet answered (nothing listening on a
 * stale kubelet.sock, a kubelet going away mid-call) rather than a kubelet refusing the request.
 */
export function kubeletUnreachable(err: unknown): boolean {
  const cause = err instanceof PluginError ? err.cause : err;
  return (cause as Partial<ServiceError> | null | undefined)?.code === status.UNAVAILABLE;
}

export function registerRequest(
  endpoint: string,
  resourceName: string,
  options: deviceplugin.DevicePluginOptions,
): deviceplugin.RegisterRequest {
  return { version: DEVICE_PLUGIN_API_VERSION, endpoint, resourceName, options };
}

export interface PluginWatcherHandlers {
  /** A returned string is answered as the call's error (upstream's DRA helper answers a refusal so). */
  onStatus: (status: pluginregistration.RegistrationStatus) => string | void;
  onInfo?: () => void;
}

/** A pluginregistration.Registration server describing one plugin (`info` as GetInfo answers it). */
export function registrationServer(
  info: pluginregistration.PluginInfo,
  handlers: PluginWatcherHandlers,
): Server {
  const server = newServer();
  const impl: pluginregistration.RegistrationServer = {
    getInfo: (_call, callback) => {
      handlers.onInfo?.();
      callback(null, info);
    },
    notifyRegistrationStatus: (call, callback) => {
      const error = handlers.onStatus(call.request);
      if (typeof error === 'string') callback({ code: status.UNKNOWN, details: error }, null);
      else callback(null, {});
    },
  };
  server.addService(pluginregistration.RegistrationService, impl);
  return server;
}

/** A pluginregistration.Registration server describing one device plugin. */
export function pluginWatcherServer(
  resourceName: string,
  endpoint: string,
  handlers: PluginWatcherHandlers,
): Server {
  return registrationServer(
    {
      type: DEVICE_PLUGIN_TYPE,
      name: resourceName,
      endpoint,
      supportedVersions: [DEVICE_PLUGIN_API_VERSION],
    },
    handlers,
  );
}
