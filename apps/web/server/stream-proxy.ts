// WebSocket proxy for one node's full stream: /api/nodes/{node}/stream?since=N → the gateway's
// /api/v1/stream. Messages pass through untouched (the gateway serialised them once); the browser's
// socket gets a bounded send buffer so a slow tab is cut off instead of growing this process.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocket, type WebSocketServer } from 'ws';
import { CLOSE_GATEWAY_UNREACHABLE, CLOSE_SLOW_CONSUMER, CLOSE_UNKNOWN_NODE } from '@plugboard/api';
import type { GatewayDirectory } from './gateway-directory';
import { causeText } from './errors';

const MAX_BUFFERED_BYTES = 16 << 20;

function sendErrorAndClose(ws: WebSocket, status: number, title: string, detail: string, code: number): void {
  ws.send(JSON.stringify({ type: 'error', status, title, detail }));
  ws.close(code, title.slice(0, 120));
}

/** Close codes a server may send on the wire (1005/1006/1015 are reserved for local use). */
function relayableCode(code: number): number {
  if (code === 1000 || code === 1001 || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999))
    return code;
  return CLOSE_GATEWAY_UNREACHABLE;
}

export function createStreamProxy(
  wss: WebSocketServer,
  directory: GatewayDirectory,
  logger: Logger,
  readToken: string | null,
) {
  return function proxyNodeStream(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    nodeName: string,
    search: URLSearchParams,
  ): void {
    wss.handleUpgrade(req, socket, head, (client) => {
      const gw = directory.get(nodeName);
      if (!gw) {
        sendErrorAndClose(
          client,
          404,
          'Unknown node',
          `no gateway known for node "${nodeName}"`,
          CLOSE_UNKNOWN_NODE,
        );
        return;
      }
      const params = new URLSearchParams();
      const since = search.get('since');
      if (since !== null && /^\d+$/.test(since)) params.set('since', since);
      const view = search.get('view');
      if (view === 'summary') params.set('view', view);
      // The node page asks for the gateway's `history` messages; they pass through like the rest.
      if (search.get('history') === 'true') params.set('history', 'true');
      const target = `${gw.url.replace(/^http/, 'ws')}/api/v1/stream${params.size ? `?${params}` : ''}`;
      const upstream = new WebSocket(target, {
        perMessageDeflate: false,
        handshakeTimeout: 10_000,
        ...(readToken ? { headers: { authorization: `Bearer ${readToken}` } } : {}),
      });
      let opened = false;
      logger.debug({ component: 'stream', node: nodeName }, 'stream client connected');

      upstream.on('open', () => {
        opened = true;
      });
      upstream.on('message', (data, isBinary) => {
        if (client.readyState !== WebSocket.OPEN) return;
        if (client.bufferedAmount > MAX_BUFFERED_BYTES) {
          logger.warn({ component: 'stream', node: nodeName }, 'browser too slow; closing its stream');
          client.close(CLOSE_SLOW_CONSUMER, 'slow consumer');
          upstream.close();
          return;
        }
        client.send(data, { binary: isBinary });
      });
      upstream.on('unexpected-response', (_req, res) => {
        const status = res.statusCode ?? 502;
        res.resume();
        sendErrorAndClose(
          client,
          status,
          'Gateway refused the stream',
          `gateway for node "${nodeName}" answered HTTP ${status}`,
          CLOSE_GATEWAY_UNREACHABLE,
        );
        upstream.terminate();
      });
      upstream.on('error', (err) => {
        if (client.readyState !== WebSocket.OPEN) return;
        const detail = `gateway for node "${nodeName}" at ${gw.url} is unreachable: ${causeText(err)}`;
        sendErrorAndClose(client, 502, 'Gateway unreachable', detail, CLOSE_GATEWAY_UNREACHABLE);
      });
      upstream.on('close', (code, reason) => {
        if (client.readyState === WebSocket.OPEN) {
          if (opened) client.close(relayableCode(code), reason.toString().slice(0, 120));
          else
            sendErrorAndClose(
              client,
              502,
              'Gateway unreachable',
              `gateway for node "${nodeName}" closed the stream`,
              CLOSE_GATEWAY_UNREACHABLE,
            );
        }
      });
      client.on('close', () => {
        if (upstream.readyState === WebSocket.OPEN || upstream.readyState === WebSocket.CONNECTING)
          upstream.terminate();
      });
      client.on('error', () => upstream.terminate());
    });
  };
}
