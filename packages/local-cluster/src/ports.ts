// Ports: a free one for each component that needs no fixed port, and a clear refusal when a port
// asked for is taken.
import { createServer } from 'node:net';
import { LocalClusterError } from './errors.js';

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** Resolves if host:port can be bound, else throws port-busy naming who wanted it and how to move it. */
export function assertPortFree(port: number, host: string, who: string, flag: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', (err: NodeJS.ErrnoException) =>
      reject(
        new LocalClusterError(
          'port-busy',
          `port ${port} on ${host}, for ${who}, is in use (${err.code ?? err.message}): stop what listens there, or pass ${flag} with another port (0: any free port)`,
        ),
      ),
    );
    srv.listen(port, host, () => srv.close(() => resolve()));
  });
}
