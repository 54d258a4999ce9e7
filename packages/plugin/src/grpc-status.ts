// The one place a PluginError becomes a gRPC status, plus Unix-socket server helpers shared by
// the DevicePlugin and plugin-watcher servers.
import { mkdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Server, ServerCredentials, status, type ServiceError } from '@grpc/grpc-js';
import { PluginError, type PluginErrorCode } from './errors.js';

const STATUS_BY_CODE: Record<PluginErrorCode, status> = {
  'config-invalid': status.INVALID_ARGUMENT,
  'invalid-resource-name': status.INVALID_ARGUMENT,
  'invalid-argument': status.INVALID_ARGUMENT,
  'not-found': status.NOT_FOUND,
  'registration-failed': status.UNAVAILABLE,
  'source-failed': status.UNAVAILABLE,
  'pre-start-failed': status.INTERNAL,
  stopped: status.UNAVAILABLE,
  internal: status.INTERNAL,
};

export function toServiceError(err: unknown): Partial<ServiceError> {
  const e = PluginError.from(err);
  return { code: STATUS_BY_CODE[e.code], details: e.message, message: e.message };
}

async function removeStale(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** Binds a server to a Unix socket, replacing a stale socket file left by an earlier process. */
export async function bindUnixServer(server: Server, socketPath: string): Promise<void> {
  // The kubelet creates its directories; creating them here only matters for local runs.
  await mkdir(dirname(socketPath), { recursive: true });
  await removeStale(socketPath);
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(`unix://${socketPath}`, ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    );
  });
}

/** Closes a server at once (open streams are cancelled) and removes its socket file. */
export async function closeUnixServer(server: Server, socketPath: string | null): Promise<void> {
  server.forceShutdown();
  if (socketPath !== null) await removeStale(socketPath).catch(() => undefined);
}

export function newServer(): Server {
  // Small messages, local peers: no need for large defaults.
  return new Server({ 'grpc.max_receive_message_length': 4 * 1024 * 1024 });
}
