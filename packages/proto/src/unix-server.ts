// Serving a gRPC server on a Unix socket, the way both sides of the kubelet's APIs do it: the
// plugin's DevicePlugin and plugin-watcher servers, and kubelet-sim's Registration and
// PodResources servers. One place owns the details: a stale socket file from an earlier process
// goes before binding, and closing resolves only once the listener and its sessions are closed,
// so a caller that binds the same path again (a kubelet restart, a plugin re-serving) never races
// the old server's close.
//
// The listener is our own net.Server, which hands each connection to grpc-js through a connection
// injector. By default a connection is handed over as the socket itself, as bindAsync serves it. A
// caller may pass a ConnectionRouter that sits between the two: @plugboard/grpc-authority's
// routeConnection serves the raw socket path that grpc-go < 1.57, grpc-java, older Python gRPC and
// kubelets < 1.26 send as `:authority` on a Unix socket (Node's HTTP/2 layer refuses it; a grpc-go
// server, a real kubelet, accepts it). It is injected rather than imported so that this package
// stays the wire only: the HTTP/2 and HPACK code is loaded by the servers that opt in to it.
// Refused connections and streams are logged with the reason — without a router, and on a
// router's native path, only what Node reports: a connection its HTTP/2 layer closes with an error
// (a stream nghttp2 resets there, or a GOAWAY it sends without a JS error, is not seen).

import { mkdir, unlink } from 'node:fs/promises';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import { dirname } from 'node:path';
import type { Duplex } from 'node:stream';
import { ServerCredentials, type Server } from '@grpc/grpc-js';

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
  /**
   * How each connection reaches the server; the socket itself, at once, unless given.
   * @plugboard/grpc-authority's routeConnection accepts a raw socket path as `:authority`.
   */
  routeConnection?: ConnectionRouter;
}

/** How a connection was handed to the server. */
export type ConnectionRoute = 'native' | 'rewriting' | 'refused';

/** A connection or stream refused before or by the server's HTTP/2 layer, with the reason. */
export interface ConnectionRefusal {
  scope: 'connection' | 'stream';
  /** The stream refused; for a connection, the last stream the server acted on (0: not known). */
  streamId: number;
  /** The HTTP/2 error code sent, or the error Node's HTTP/2 layer closed the connection with. */
  code: string;
  reason: string;
}

/** What a ConnectionRouter tells bindUnixServer, which logs it. */
export interface ConnectionRouterEvents {
  onRefused?: (refusal: ConnectionRefusal) => void;
  /** A connection's first rewritten `:authority` (null: the request had none). */
  onRewritten?: (e: { streamId: number; authority: string | null }) => void;
}

export type RoutedUnixConnection =
  | { route: 'native'; connection: Socket }
  /** `reason`: why the connection needs the rewriting stream in its place. */
  | { route: 'rewriting'; connection: Duplex; reason: string }
  | { route: 'refused' };

/**
 * Hands a client's connection to the server, once: the socket itself, a stream standing in for it,
 * or nothing (the router refused and closed it). `onRouted` may be called later than the call.
 */
export type ConnectionRouter = (
  socket: Socket,
  events: ConnectionRouterEvents,
  onRouted: (routed: RoutedUnixConnection) => void,
) => void;

/** Without a router: the socket itself, as bindAsync serves it; an error Node's HTTP/2 layer closes it with is reported. */
const serveNatively: ConnectionRouter = (socket, events, onRouted) => {
  // Also keeps an error before the server's own listener is attached from being an uncaught one.
  socket.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code?.startsWith('ERR_HTTP2') !== true) return;
    events.onRefused?.({ scope: 'connection', streamId: 0, code: err.code, reason: err.message });
  });
  onRouted({ route: 'native', connection: socket });
};

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
/**
 * The longest path a Unix socket address holds on Linux: sun_path is 108 bytes with the
 * terminating NUL. A longer path cannot be bound as given (Node shortens it silently) nor dialled
 * (the kubelet's dial fails "connect: invalid argument"), even when a rename put the file there.
 */
export const UNIX_SOCKET_PATH_MAX_BYTES = 107;

/** Why `socketPath` cannot be a Unix socket address, or null when it can. */
export function unixSocketPathProblem(socketPath: string): string | null {
  const bytes = Buffer.byteLength(socketPath);
  return bytes > UNIX_SOCKET_PATH_MAX_BYTES
    ? `the socket path ${socketPath} is ${bytes} bytes, longer than a Unix socket address holds (${UNIX_SOCKET_PATH_MAX_BYTES}): use a shorter directory`
    : null;
}

export async function bindUnixServer(
  server: Server,
  socketPath: string,
  opts: BindUnixServerOptions = {},
): Promise<void> {
  const problem = unixSocketPathProblem(socketPath);
  if (problem) throw new Error(problem);
  await mkdir(dirname(socketPath), {
    recursive: true,
    ...(opts.directoryMode !== undefined ? { mode: opts.directoryMode } : {}),
  });
  await removeSocketFile(socketPath);
  const injector = server.createConnectionInjector(ServerCredentials.createInsecure());
  const log = opts.log;
  const sockets = new Set<Socket>();
  const routes: Record<ConnectionRoute, number> = { native: 0, rewriting: 0, refused: 0 };
  const routeConnection = opts.routeConnection ?? serveNatively;
  const events: ConnectionRouterEvents = {
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
    routeConnection(socket, events, (routed) => {
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
 * through a router's rewriting stream, or refused before it saw them.
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
