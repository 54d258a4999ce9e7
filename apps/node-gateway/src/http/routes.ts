// The gateway's HTTP contract (docs/API.md): the route table, one module per resource under
// routes/, and the WebSocket upgrade. Transport only: state lives in the model, the fault store and
// the scenario runner.
import type { HttpContext } from './context.js';
import { createMutationGuard } from './mutation-guard.js';
import { createRouter } from './router.js';
import { healthRoutes } from './routes/health.js';
import { nodeRoutes } from './routes/node.js';
import { streamRoutes, streamUpgrade } from './routes/stream.js';
import { faultRoutes } from './routes/faults.js';
import { placementRoutes } from './routes/placement.js';
import { scenarioRoutes } from './routes/scenarios.js';

export type { HttpContext } from './context.js';

export function createHandlers(ctx: HttpContext) {
  const guard = createMutationGuard(ctx);
  const routes = [
    ...healthRoutes(ctx),
    ...nodeRoutes(ctx),
    ...streamRoutes,
    ...faultRoutes(ctx, guard),
    ...placementRoutes(ctx, guard),
    ...scenarioRoutes(ctx, guard),
  ];
  return { request: createRouter(routes, ctx.logger), upgrade: streamUpgrade(ctx) };
}

export type HttpHandlers = ReturnType<typeof createHandlers>;
