// The dashboard's single origin: serves the Next.js pages, proxies REST to the gateways
// (/api/nodes/{node}/…), proxies each node's live stream (/api/nodes/{node}/stream) and serves the
// aggregated cluster summaries (/api/cluster, /api/cluster/stream).
// Run: `node --import tsx apps/web/server.ts`, or after `npm run build -w @plugboard/web`
// `node apps/web/dist/server.js` (one pid; PORT default 3000, HOST default 127.0.0.1).
import { createServer } from 'node:http';
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import next from 'next';
import { pino } from 'pino';
import { loadWebConfig, type WebConfig } from './server/config';
import { createApiServer } from './server/api-server';
import { provideClusterSnapshot } from './server/cluster-snapshot';
import { kubernetesDirectory, staticDirectory, type GatewayDirectory } from './server/gateway-directory';

/** apps/web: this file's directory, or its parent when running as the compiled dist/server.js. */
const here = dirname(fileURLToPath(import.meta.url));
const WEB_DIR = basename(here) === 'dist' ? dirname(here) : here;

export interface WebServer {
  url: string;
  stop(): Promise<void>;
}

export async function startWebServer(cfg: WebConfig): Promise<WebServer> {
  const logger = pino({ level: cfg.logLevel, base: { component: 'web' } });
  const directory: GatewayDirectory =
    cfg.discovery.mode === 'static'
      ? staticDirectory(cfg.discovery.source, cfg.discovery.gateways)
      : await kubernetesDirectory(cfg.discovery, logger);
  const api = createApiServer(cfg, directory, logger);
  // The overview page renders its first summary from the hub (app/page.tsx).
  provideClusterSnapshot((maxWaitMs) => api.clusterSnapshot(maxWaitMs));
  const app = next({ dev: cfg.dev, dir: WEB_DIR, quiet: !cfg.dev });
  await app.prepare();
  const handle = app.getRequestHandler();
  const nextUpgrade = app.getUpgradeHandler();

  const server = createServer((req, res) => {
    if (api.handleRequest(req, res)) return;
    handle(req, res).catch((err: unknown) => {
      logger.error({ err: (err as Error).message }, 'page render failed');
      if (!res.headersSent) res.writeHead(500).end('internal error');
    });
  });
  server.on('upgrade', (req, socket, head) => {
    if (api.handleUpgrade(req, socket, head)) return;
    // Only the dev server has upgrades of its own (hot reload).
    if (cfg.dev) void nextUpgrade(req, socket, head);
    else socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(cfg.port, cfg.host, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : cfg.port;
  const host = cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host;
  const url = `http://${host}:${port}`;
  logger.info(
    { url, gateways: directory.list().length, discovery: directory.status().source },
    `Plugboard dashboard listening on ${url}`,
  );

  return {
    url,
    async stop() {
      provideClusterSnapshot(null);
      await api.stop();
      await directory.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await app.close();
    },
  };
}

const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  let cfg: WebConfig;
  try {
    cfg = loadWebConfig();
  } catch (err) {
    console.error(`plugboard web: ${(err as Error).message}`);
    process.exit(2);
  }
  startWebServer(cfg).then(
    (srv) => {
      // The line the demo and tests wait for.
      console.log(`PLUGBOARD_WEB_URL=${srv.url}`);
      const shutdown = () => {
        const force = setTimeout(() => process.exit(1), 5000);
        force.unref();
        srv.stop().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    },
    (err: unknown) => {
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'EADDRINUSE')
        console.error(`plugboard web: port ${cfg.port} is in use; set PORT=… to pick another`);
      else console.error(`plugboard web: failed to start: ${e.message}`);
      process.exit(1);
    },
  );
}
