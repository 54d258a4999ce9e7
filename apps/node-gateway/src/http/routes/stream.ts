// The live stream: GET /api/v1/stream is a WebSocket endpoint. A plain request gets 426; an upgrade
// passes the path, Origin, `view`, `since` and `history` checks before the hub takes the socket.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { GatewayError } from '../../errors.js';
import { originAllowed } from '../auth.js';
import type { HttpContext } from '../context.js';
import { problemOf, problemResponseText } from '../problem.js';
import { BAD_TARGET, requestUrl, routePath, type Route } from '../router.js';

export const streamRoutes: Route[] = [
  {
    path: '/api/v1/stream',
    anyMethod: () => {
      throw Object.assign(
        new GatewayError(
          'bad-request',
          'GET /api/v1/stream is a WebSocket endpoint; send Upgrade: websocket',
        ),
        { upgradeRequired: true },
      );
    },
  },
];

export function streamUpgrade(ctx: Pick<HttpContext, 'config' | 'hub' | 'logger' | 'history'>) {
  const { config, hub, logger } = ctx;
  return function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const url = requestUrl(req.url);
    if (!url) {
      socket.end(problemResponseText(problemOf(BAD_TARGET)));
      return;
    }
    const reject = (err: GatewayError): void => {
      socket.end(problemResponseText(problemOf(err, url.pathname)));
    };
    if (routePath(url) !== '/api/v1/stream') {
      return reject(new GatewayError('not-found', `no WebSocket endpoint at ${url.pathname}`));
    }
    if (!originAllowed(req, config.stream.allowedOrigins)) {
      logger.warn({ origin: req.headers.origin }, 'stream upgrade refused: origin not allowed');
      return reject(
        new GatewayError(
          'forbidden',
          `Origin ${String(req.headers.origin).slice(0, 200)} is not allowed (gateway.stream.allowedOrigins)`,
        ),
      );
    }
    const viewRaw = url.searchParams.get('view') ?? 'full';
    if (viewRaw !== 'full' && viewRaw !== 'summary') {
      return reject(
        new GatewayError('bad-request', `view must be "full" or "summary", got "${viewRaw.slice(0, 40)}"`),
      );
    }
    const sinceRaw = url.searchParams.get('since');
    let since: number | null = null;
    if (sinceRaw !== null) {
      if (!/^\d{1,16}$/.test(sinceRaw))
        return reject(
          new GatewayError('bad-request', 'since must be a non-negative integer sequence number'),
        );
      since = Number(sinceRaw);
    }
    const historyRaw = url.searchParams.get('history');
    if (historyRaw !== null && historyRaw !== 'true' && historyRaw !== 'false') {
      return reject(new GatewayError('bad-request', 'history must be "true" or "false"'));
    }
    hub.accept(req, socket, head, viewRaw, since, historyRaw === 'true' && !!ctx.history);
  };
}
