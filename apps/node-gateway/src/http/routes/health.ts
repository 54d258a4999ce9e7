// The probes and the scrape: GET /healthz, GET /readyz (HEAD too) and GET /metrics.
import { GatewayError } from '../../errors.js';
import type { HttpContext } from '../context.js';
import { sendJson } from '../respond.js';
import type { Route } from '../router.js';

export function healthRoutes(ctx: Pick<HttpContext, 'metrics' | 'readiness'>): Route[] {
  return [
    {
      path: '/healthz',
      headAsGet: true,
      methods: { GET: ({ res }) => sendJson(res, 200, { status: 'ok' }) },
    },
    {
      path: '/readyz',
      headAsGet: true,
      methods: {
        GET: ({ res }) => {
          const r = ctx.readiness();
          if (!r.ready) throw new GatewayError('unavailable', r.detail);
          sendJson(res, 200, { status: 'ready', detail: r.detail });
        },
      },
    },
    {
      path: '/metrics',
      methods: {
        GET: async ({ res }) => {
          const text = await ctx.metrics.registry.metrics();
          res.writeHead(200, {
            'content-type': ctx.metrics.registry.contentType,
            'cache-control': 'no-store',
          });
          res.end(text);
        },
      },
    },
  ];
}
