// The HTTP server: request and header timeouts, the REST handlers and the WebSocket upgrade, a
// listen error as a GatewayError, and a close that ends the stream's sockets before the server's.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GatewayError } from '../errors.js';
import type { HttpHandlers } from './routes.js';

export interface HttpServer {
  /** http://host:port */
  url: string;
  /** Closes the server; `closeStreams` runs first, as WebSocket sockets count as its connections. */
  close(closeStreams: () => Promise<void>): Promise<void>;
}

export async function listenHttp(
  listen: { host: string; port: number },
  handlers: HttpHandlers,
): Promise<HttpServer> {
  const server = createServer(
    { requestTimeout: 30_000, headersTimeout: 10_000 },
    (req, res) => void handlers.request(req, res),
  );
  server.on('upgrade', (req, socket, head) => handlers.upgrade(req, socket, head));
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new GatewayError(
          'unavailable',
          `cannot listen on ${listen.host}:${listen.port}: ${err.code ?? err.message}`,
          { cause: err },
        ),
      ),
    );
    server.listen(listen.port, listen.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}`,
    close: async (closeStreams) => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await closeStreams();
      server.closeAllConnections();
      await closed;
    },
  };
}
