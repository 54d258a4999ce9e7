// The dashboard's API surface without the pages: REST proxy (/api/nodes/{node}/…), the node
// stream proxy (/api/nodes/{node}/stream), the cluster summaries (/api/cluster[/stream]), the
// migration view joined from them (/api/migration[?resource=]), /api/config and /api/healthz. server.ts mounts it in front of Next; tests mount it alone.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import type { WebConfig } from './config';
import { migrationView } from '../lib/migration-view';
import { ClusterHub } from './cluster-hub';
import type { ClusterSnapshot } from './cluster-snapshot';
import { sendProblem, WebError } from './errors';
import type { GatewayDirectory } from './gateway-directory';
import { createRestProxy, originAllowed } from './rest-proxy';
import { createStreamProxy } from './stream-proxy';

const NODE_API = /^\/api\/nodes\/([^/]+)\/(.+)$/;
const NODE_STREAM = /^\/api\/nodes\/([^/]+)\/stream$/;

export interface ApiServer {
  /** Handles /api/* requests; returns false for anything else. */
  handleRequest(req: IncomingMessage, res: ServerResponse): boolean;
  /** Handles upgrades of the dashboard's streams; returns false for anything else. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** The cluster hub's document for server-rendered pages (starts the hub like /api/cluster). */
  clusterSnapshot(maxWaitMs: number): Promise<ClusterSnapshot>;
  stop(): Promise<void>;
}

export function createApiServer(cfg: WebConfig, directory: GatewayDirectory, logger: Logger): ApiServer {
  const hub = new ClusterHub(directory, logger, cfg.readToken);
  const proxyRest = createRestProxy(cfg, directory, logger);
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 64 << 10 });
  const proxyStream = createStreamProxy(wss, directory, logger, cfg.readToken);

  const sendJson = (res: ServerResponse, value: unknown) => {
    const body = JSON.stringify(value);
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(body);
  };

  const route = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const m = NODE_API.exec(url.pathname);
    if (m && m[2] !== 'stream') {
      await proxyRest(req, res, decodeURIComponent(m[1]!), m[2]!, url.search);
      return;
    }
    if (url.pathname === '/api/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      return;
    }
    if (req.method !== 'GET') {
      res.setHeader('allow', 'GET');
      throw new WebError('method-not-allowed', `${req.method} is not allowed on ${url.pathname}; use GET`);
    }
    if (url.pathname === '/api/cluster') {
      const { seq, doc } = await hub.current();
      sendJson(res, { seq, cluster: doc });
      return;
    }
    if (url.pathname === '/api/migration') {
      const resource = url.searchParams.get('resource');
      if (resource === '')
        throw new WebError('bad-request', 'resource= is empty: give an extended resource name');
      const { seq, doc } = await hub.current();
      const migration = migrationView(doc);
      if (resource !== null) {
        migration.resources = migration.resources.filter((r) => r.name === resource);
        if (migration.resources.length === 0) {
          const unseen = migration.notObserved.map((n) => n.node);
          throw new WebError(
            'not-found',
            `no observed node knows the extended resource ${resource}` +
              (unseen.length ? ` (not observed: ${unseen.join(', ')})` : ''),
          );
        }
      }
      sendJson(res, { seq, migration });
      return;
    }
    if (url.pathname === '/api/config') {
      // What the browser may need to know about this server (never secrets).
      sendJson(res, { faultsEnabled: cfg.faultsEnabled, discovery: directory.status() });
      return;
    }
    throw new WebError('not-found', `no API route ${url.pathname}`);
  };

  return {
    handleRequest(req, res) {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (!url.pathname.startsWith('/api/')) return false;
      route(req, res, url).catch((err: unknown) => sendProblem(res, WebError.from(err)));
      return true;
    },
    handleUpgrade(req, socket, head) {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const node = NODE_STREAM.exec(url.pathname);
      if (url.pathname !== '/api/cluster/stream' && !node) return false;
      // Browsers always send Origin on WebSocket upgrades; a foreign page must not read the stream.
      if (!originAllowed(req, cfg.allowedOrigins)) {
        logger.warn(
          { component: 'stream', origin: req.headers.origin },
          'rejected WebSocket from foreign origin',
        );
        socket.end('HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\norigin not allowed');
        return true;
      }
      if (node) proxyStream(req, socket, head, decodeURIComponent(node[1]!), url.searchParams);
      else wss.handleUpgrade(req, socket, head, (ws) => hub.subscribe(ws));
      return true;
    },
    clusterSnapshot(maxWaitMs) {
      return hub.current(maxWaitMs);
    },
    async stop() {
      await hub.stop();
      for (const ws of wss.clients) ws.terminate();
    },
  };
}
