// Fault scenarios: GET|POST|DELETE /api/v1/scenarios and GET|DELETE /api/v1/scenarios/{id}.
import { scenarioBodySchema } from '@plugboard/api';
import { GatewayError } from '../../errors.js';
import type { HttpContext } from '../context.js';
import type { MutationGuard } from '../mutation-guard.js';
import { parseBody } from '../body.js';
import { sendJson } from '../respond.js';
import type { Route } from '../router.js';

export function scenarioRoutes(
  ctx: Pick<HttpContext, 'scenarios' | 'logger'>,
  guard: MutationGuard,
): Route[] {
  const { scenarios, logger } = ctx;
  return [
    {
      path: '/api/v1/scenarios',
      methods: {
        GET: ({ res }) => sendJson(res, 200, { items: scenarios.list() }),
        POST: async ({ req, res }) => {
          const who = await guard.faultMutation(req, 'start a scenario');
          const doc = await parseBody(req, scenarioBodySchema, guard.bodyOptions(['json', 'yaml']));
          if (doc.ttlSeconds) guard.checkTtl(doc.ttlSeconds);
          const state = scenarios.start(doc);
          // Immediate steps that could not run make the request itself wrong (unknown device, …).
          const failed = state.steps.filter((s) => s.at === 0 && s.status === 'failed');
          if (
            failed.length &&
            failed.length === state.steps.filter((s) => s.at === 0).length &&
            state.steps.every((s) => s.at === 0)
          ) {
            scenarios.stop(state.id);
            throw new GatewayError(
              'invalid-body',
              `scenario cannot run: ${failed.map((s) => `${s.action}: ${s.detail}`).join('; ')}`,
            );
          }
          logger.info(
            { scenario: state.id, name: state.name, steps: state.steps.length, by: who },
            'scenario started',
          );
          sendJson(
            res,
            201,
            { id: state.id, scenario: scenarios.get(state.id) ?? state },
            { location: `/api/v1/scenarios/${state.id}` },
          );
        },
        DELETE: async ({ req, res }) => {
          const who = await guard.faultMutation(req, 'stop scenarios');
          const n = scenarios.stopAll();
          logger.info({ stopped: n, by: who }, 'all scenarios stopped');
          res.writeHead(204).end();
        },
      },
    },
    {
      path: '/api/v1/scenarios/{id}',
      methods: {
        GET: ({ res, id }) => {
          const s = scenarios.get(id);
          if (!s) throw new GatewayError('not-found', `no running scenario with id "${id}"`);
          sendJson(res, 200, s);
        },
        DELETE: async ({ req, res, id }) => {
          const who = await guard.faultMutation(req, 'stop a scenario');
          if (!scenarios.stop(id)) throw new GatewayError('not-found', `no running scenario with id "${id}"`);
          logger.info({ scenario: id, by: who }, 'scenario stopped');
          res.writeHead(204).end();
        },
      },
    },
  ];
}
