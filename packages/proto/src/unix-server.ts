// Serving a gRPC server on a Unix socket, the way both sides of the kubelet's APIs do it: the
// plugin's DevicePlugin and plugin-watcher servers, and kubelet-sim's Registration and
// PodResources servers. One place owns the details: a stale socket file from an earlier process
// goes before binding, and closing resolves only once the listener and its sessions are closed,
// so a caller that binds the same path again (a kubelet restart, a plugin re-serving) never races
// the old server's close.

import { mkdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ServerCredentials, type Server } from '@grpc/grpc-js';

export interface BindUnixServerOptions {
  /** Mode for directories created on the way to the socket (e.g. 0o750); the umask's default otherwise. */
  directoryMode?: number;
}

async function removeSocketFile(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Binds `server` to `unix://<socketPath>`: creates the socket's directory when missing and
 * replaces a stale socket file left by an earlier process.
 */
export async function bindUnixServer(
  server: Server,
  socketPath: string,
  opts: BindUnixServerOptions = {},
): Promise<void> {
  await mkdir(dirname(socketPath), {
    recursive: true,
    ...(opts.directoryMode !== undefined ? { mode: opts.directoryMode } : {}),
  });
  await removeSocketFile(socketPath);
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(`unix://${socketPath}`, ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    );
  });
}

/**
 * Closes `server` at once (in-flight calls and open streams are cancelled) and resolves once its
 * listener is closed; then removes the socket file if it is still there (best effort). Pass null
 * for a server that was never bound to a path of its own.
 */
export async function closeUnixServer(server: Server, socketPath: string | null): Promise<void> {
  // tryShutdown's callback fires once every listener and session is closed; forceShutdown right
  // after cancels what is in flight (a Register still dialling its plugin, a ListAndWatch stream)
  // instead of waiting for it.
  await new Promise<void>((resolve) => {
    server.tryShutdown(() => resolve());
    server.forceShutdown();
  });
  if (socketPath !== null) await removeSocketFile(socketPath).catch(() => undefined);
}
