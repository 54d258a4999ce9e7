// Registration with the kubelet, both ways it supports:
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

/** One Register call; rejects with a PluginError carrying the kubelet's message. */
export async function registerWithKubelet(
  kubeletSocket: string,
  request: deviceplugin.RegisterRequest,
  timeoutMs = 5000,
): Promise<void> {
  const client = new deviceplugin.RegistrationClient(`unix://${kubeletSocket}`, credentials.createInsecure());
  try {
    await new Promise<void>((resolve, reject) => {
      client.register(
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
      `Register on ${kubeletSocket} failed: ${e.details || e.message}`,
      { cause: err },
    );
  } finally {
    client.close();
  }
}

/**
 * Whether a `registerWithKubelet` failure means that no kubelet answered (nothing listening on a
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
  onStatus: (status: pluginregistration.RegistrationStatus) => void;
  onInfo?: () => void;
}

/** A pluginregistration.Registration server describing one device plugin. */
export function pluginWatcherServer(
  resourceName: string,
  endpoint: string,
  handlers: PluginWatcherHandlers,
): Server {
  const server = newServer();
  const impl: pluginregistration.RegistrationServer = {
    getInfo: (_call, callback) => {
      handlers.onInfo?.();
      callback(null, {
        type: DEVICE_PLUGIN_TYPE,
        name: resourceName,
        endpoint,
        supportedVersions: [DEVICE_PLUGIN_API_VERSION],
      });
    },
    notifyRegistrationStatus: (call, callback) => {
      handlers.onStatus(call.request);
      callback(null, {});
    },
  };
  server.addService(pluginregistration.RegistrationService, impl);
  return server;
}
