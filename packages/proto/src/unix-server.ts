// Serving a gRPC server on a Unix socket, the way both sides of the kubelet's APIs do it: the
// plugin's DevicePlugin and plugin-watcher servers, and kubelet-sim's Registration and
// PodResources servers. One place owns the details: a stale socket file from an earlier process
// goes before binding, and closing resolves only once the listener and its sessions are closed,
// so a caller that binds the same path again (a kubelet restart, a plugin re-serving) never races
// the old server's close.
//
// The listener is our own net.Server, which hands each connection to grpc-js through a connection
// injector: Node's HTTP/2 layer refuses the raw socket path that grpc-go < 1.57, grpc-java, older
// Python gRPC and kubelets < 1.26 send as `:authority` on a Unix socket, where a grpc-go server (a
// real kubelet) accepts it. routeConnection (h2-authority-rewriter.ts) reads each connection up to
// its first request: one whose `:authority` nghttp2 accepts is handed over as the socket itself
// (native, as bindAsync would serve it); one that needs a rewrite goes through an
// AuthorityRewritingSocket for its whole life. Refused connections and streams are logged with the
// reason — on the native path only what Node reports: a connection its HTTP/2 layer closes with an
// error (a stream nghttp2 resets there, or a GOAWAY it sends without a JS error, is not seen).

import { mkdir, unlink } from 'node:fs/promises';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { ServerCredentials, type Server } from '@grpc/grpc-js';
import {
  routeConnection,
  type ConnectionRoute,
  type ConnectionRoutingOptions,
} from './h2-authority-rewriter.js';

/** The logger calls bindUnixServer makes; a pino logger fits. */
export interface UnixServerLogger {
  warn(fields: object, message: string): void;
  debug(fields: object, message: string): void;
}

export interface BindUnixServerOptions {
  /** Mode for directories created on the way to the socket (e.g. 0o750); the umask's default otherwise. */
  directoryMode?: number;
  /**
   * Where a refused connection or stream is logged (warn, with `socket`, `scope`, `streamId`,
   * `code` and `reason`), and a connection's first rewritten `:authority` (debug).
   */
  log?: UnixServerLogger;
}

interface Listener {
  server: NetServer;
  sockets: Set<Socket>;
  routes: Record<ConnectionRoute, number>;
}

// A server may be bound to more than one path.
const listeners = new WeakMap<Server, Listener[]>();

async function removeSocketFile(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Binds `server` to `socketPath`: creates the socket's directory when missing and replaces a stale
 * socket file left by an earlier process.
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
  const injector = server.createConnectionInjector(ServerCredentials.createInsecure());
  const log = opts.log;
  const sockets = new Set<Socket>();
  const routes: Record<ConnectionRoute, number> = { native: 0, rewriting: 0, refused: 0 };
  const routing: ConnectionRoutingOptions = {
    onRefused: (refusal) =>
      log?.warn(
        { socket: socketPath, ...refusal },
        refusal.scope === 'connection' ? 'gRPC connection refused' : 'gRPC stream refused',
      ),
    onRewritten: ({ streamId, authority }) =>
      log?.debug(
        { socket: socketPath, streamId, authority },
        "client's :authority is one Node's HTTP/2 layer refuses (a raw socket path, as grpc-go < 1.57 sends): serving it as localhost",
      ),
  };
  const listener = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    routeConnection(socket, routing, (routed) => {
      routes[routed.route]++;
      if (routed.route === 'refused') return;
      if (routed.route === 'rewriting' && routed.reason !== 'first-request') {
        log?.debug(
          { socket: socketPath, reason: routed.reason },
          'no first request to judge the connection by: serving it through the :authority rewriter',
        );
      }
      injector.injectConnection(routed.connection);
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(socketPath, () => {
        listener.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    injector.destroy();
    throw err;
  }
  listener.on('error', (err) =>
    log?.warn({ socket: socketPath, err: err.message }, 'Unix socket listener error'),
  );
  listeners.set(server, [...(listeners.get(server) ?? []), { server: listener, sockets, routes }]);
}

/**
 * How `server`'s connections (on every path it is bound to) were handed to it so far: natively,
 * through the :authority rewriter, or refused before it saw them.
 */
export function connectionRoutes(server: Server): Record<ConnectionRoute, number> {
  const total: Record<ConnectionRoute, number> = { native: 0, rewriting: 0, refused: 0 };
  for (const { routes } of listeners.get(server) ?? []) {
    for (const route of Object.keys(total) as ConnectionRoute[]) total[route] += routes[route];
  }
  return total;
}

/**
 * Closes `server` at once (in-flight calls and open streams are cancelled) and resolves once its
 * listener is closed; then removes the socket file if it is still there (best effort). Pass null
 * for a server that was never bound to a path of its own.
 */
export async function closeUnixServer(server: Server, socketPath: string | null): Promise<void> {
  const bound = listeners.get(server) ?? [];
  listeners.delete(server);
  // A listener's close callback fires once its handle is closed — libuv unlinks the socket path
  // then — and every connection is gone.
  const listenersClosed = Promise.all(
    bound.map((listener) => new Promise<void>((resolve) => listener.server.close(() => resolve()))),
  );
  // tryShutdown's callback fires once every session is closed; forceShutdown right after cancels
  // what is in flight (a Register still dialling its plugin, a ListAndWatch stream) instead of
  // waiting for it.
  await new Promise<void>((resolve) => {
    server.tryShutdown(() => resolve());
    server.forceShutdown();
  });
  // A session's close lets its socket flush and end; one whose client does not read goes now.
  for (const listener of bound) for (const socket of listener.sockets) socket.destroy();
  await listenersClosed;
  if (socketPath !== null) await removeSocketFile(socketPath).catch(() => undefined);
}
