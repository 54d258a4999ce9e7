// "Try to place": POST /api/v1/placement answers the gateway's prediction of the kubelet's admission
// (model/placement.ts; optionally under another Topology Manager policy or scope), on any node;
// POST /api/v1/pods admits the pod through kubelet-sim's control API (a mutation), whose answer
// passes through as is, problem+json included.
import { podBodySchema } from '@plugboard/api';
import { GatewayError } from '../../errors.js';
import type { PodBody } from '../../model/placement.js';
import type { HttpContext } from '../context.js';
import type { MutationGuard } from '../mutation-guard.js';
import { parseBody } from '../body.js';
import type { Route, RouteHandler } from '../router.js';

export function placementRoutes(
  ctx: Pick<HttpContext, 'placement' | 'logger'>,
  guard: MutationGuard,
): Route[] {
  const placementOf = () => {
    if (!ctx.placement) throw new GatewayError('unavailable', 'placement is not wired into this gateway');
    return ctx.placement;
  };
  const predict: RouteHandler = async ({ req, res, url }) => {
    const placement = placementOf();
    // A preview changes nothing: no token needed.
    const pod = (await parseBody(req, podBodySchema, guard.bodyOptions(['json', 'yaml']))) as PodBody;
    const answer = await placement.predict(pod, {
      topologyManagerPolicy: url.searchParams.get('topologyManagerPolicy') ?? '',
      topologyManagerScope: url.searchParams.get('topologyManagerScope') ?? '',
    });
    const body = JSON.stringify(answer);
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
    });
    res.end(body);
  };
  const admit: RouteHandler = async ({ req, res }) => {
    const placement = placementOf();
    const who = await guard.authorized(req);
    const pod = await parseBody(req, podBodySchema, guard.bodyOptions(['json', 'yaml']));
    const answer = await placement.admit(pod);
    ctx.logger.info(
      {
        pod: `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`,
        status: answer.status,
        by: who,
      },
      'pod submitted to the kubelet-sim',
    );
    res.writeHead(answer.status, {
      'content-type': answer.contentType,
      'content-length': Buffer.byteLength(answer.body),
      'cache-control': 'no-store',
    });
    res.end(answer.body);
  };
  return [
    { path: '/api/v1/placement', methods: { POST: predict } },
    { path: '/api/v1/pods', methods: { POST: admit } },
  ];
}
