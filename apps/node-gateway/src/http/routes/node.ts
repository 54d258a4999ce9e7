// The node's state: GET /api/v1/node (the full snapshot), /api/v1/summary and /api/v1/history.
import type { NodeSnapshot } from '@plugboard/api';
import { GatewayError } from '../../errors.js';
import type { HttpContext } from '../context.js';
import { parseHistoryQuery } from '../history-query.js';
import { sendJson, sendSerialized } from '../respond.js';
import type { Route } from '../router.js';

export function nodeRoutes(ctx: Pick<HttpContext, 'model' | 'history'>): Route[] {
  const { model } = ctx;
  // GET /api/v1/node serialises each snapshot once (~0.8 MB at 1,024 devices), however many
  // clients ask before the next model change.
  let nodeCache: { snapshot: NodeSnapshot; body: Buffer } | null = null;
  const nodeBody = (): Buffer => {
    const snapshot = model.snapshot();
    if (nodeCache?.snapshot !== snapshot)
      nodeCache = { snapshot, body: Buffer.from(JSON.stringify(snapshot)) };
    return nodeCache.body;
  };

  return [
    { path: '/api/v1/node', methods: { GET: ({ res }) => sendSerialized(res, 200, nodeBody()) } },
    { path: '/api/v1/summary', methods: { GET: ({ res }) => sendJson(res, 200, model.summary()) } },
    {
      path: '/api/v1/history',
      methods: {
        GET: ({ res, url }) => {
          const history = ctx.history;
          if (!history)
            throw new GatewayError(
              'not-found',
              'history is disabled on this gateway (gateway.history.enabled: false)',
            );
          const query = parseHistoryQuery(
            url.searchParams,
            history.clock(),
            (name) => {
              const snapshot = model.snapshot();
              return (
                history.hasResource(name) ||
                history.hasDraDriver(name) ||
                Object.hasOwn(snapshot.resources, name) ||
                Object.hasOwn(snapshot.dra?.drivers ?? {}, name)
              );
            },
            () => {
              const snapshot = model.snapshot();
              return [
                ...Object.keys(snapshot.resources),
                ...Object.keys(snapshot.dra?.drivers ?? {}).map((d) => `${d} (DRA driver)`),
              ];
            },
          );
          sendJson(res, 200, history.query(query));
        },
      },
    },
  ];
}
