// The dashboard's single origin: serves the Next.js pages, proxies REST to the gateways
// (/api/nodes/{node}/…), proxies each node's live stream (/api/nodes/{node}/stream) and serves the
// aggregated cluster summaries (/api/cluster, /api/cluster/stream).
// Run: `node --import tsx apps/web/server.ts` (one pid; PORT default 3000, HOST default 127.0.0.1).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import next from 'next';
import { pino } from 'pino';
import { WebSocketServer } from 'ws';
import { loadWebConfig, type WebConfig } from './server/config';
import { ClusterHub } from './server/cluster-hub';
import { sendProblem, WebError } from './server/errors';
import { kubernetesDirectory, staticDirectory, type GatewayDirectory } from './server/gateway-directory';
import { createRestProxy, originAllowed } from './server/rest-proxy';
import { createStreamProxy } from './server/stream-proxy';

const NODE_API = /^\/api\/nodes\/([^/]+)\/(.+)$/;

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
  const hub = new ClusterHub(directory, logger, cfg.readToken);
  const app = next({ dev: cfg.dev, dir: dirname(fileURLToPath(import.meta.url)), quiet: !cfg.dev });
  await app.prepare();
  const handle = app.getRequestHandler();
  const proxyRest = createRestProxy(cfg, directory, logger);
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 64 << 10 });
  const proxyStream = createStreamProxy(wss, directory, logger, cfg.readToken);

  const handleApi = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const m = NODE_API.exec(url.pathname);
    if (m && m[2] !== 'stream') {
      await proxyRest(req, res, decodeURIComponent(m[1]!), m[2]!, url.search);
      return;
    }
    if (url.pathname === '/api/cluster') {
      if (req.method !== 'GET') throw new WebError('method-not-allowed', 'GET only');
      const { seq, doc } = await hub.current();
      const body = JSON.stringify({ seq, cluster: doc });
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(body);
      return;
    }
    if (url.pathname === '/api/config') {
      // What the browser may need to know about this server (never secrets).
      const body = JSON.stringify({ faultsEnabled: cfg.faultsEnabled, discovery: directory.status() });
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(body);
      return;
    }
    if (url.pathname === '/api/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      return;
    }
    throw new WebError('not-found', `no API route ${url.pathname}`);
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname.startsWith('/api/')) {
      handleApi(req, res, url).catch((err: unknown) => sendProblem(res, WebError.from(err)));
      return;
    }
    handle(req, res).catch((err: unknown) => {
      logger.error({ err: (err as Error).message }, 'page render failed');
      if (!res.headersSent) res.writeHead(500).end('internal error');
    });
  });

  const nextUpgrade = app.getUpgradeHandler();
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const isOurs = url.pathname === '/api/cluster/stream' || /^\/api\/nodes\/[^/]+\/stream$/.test(url.pathname);
    if (!isOurs) {
      if (cfg.dev) {
        void nextUpgrade(req, socket, head);
        return;
      }
      socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
      return;
    }
    // Browsers always send Origin on WebSocket upgrades; a foreign page must not read the stream.
    if (!originAllowed(req, cfg.allowedOrigins)) {
      logger.warn({ component: 'stream', origin: req.headers.origin }, 'rejected WebSocket from foreign origin');
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    if (url.pathname === '/api/cluster/stream') {
      wss.handleUpgrade(req, socket, head, (ws) => hub.subscribe(ws));
      return;
    }
    const node = decodeURIComponent(url.pathname.split('/')[3]!);
    proxyStream(req, socket, head, node, url.searchParams);
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
      await hub.stop();
      for (const ws of wss.clients) ws.terminate();
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
        srv.stop().then(() => process.exit(0), () => process.exit(1));
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    },
    (err: unknown) => {
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'EADDRINUSE') console.error(`plugboard web: port ${cfg.port} is in use; set PORT=… to pick another`);
      else console.error(`plugboard web: failed to start: ${e.message}`);
      process.exit(1);
    },
  );
}
