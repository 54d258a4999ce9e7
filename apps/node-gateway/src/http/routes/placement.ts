// "Try to place" through the kubelet topology source: POST /api/v1/placement (a dry run, optionally
// under another Topology Manager policy or scope) and POST /api/v1/pods (an admission, a mutation).
// The kubelet's answer passes through as is, problem+json included.
import { podBodySchema } from '@plugboard/api';
import { GatewayError } from '../../errors.js';
import type { HttpContext } from '../context.js';
import type { MutationGuard } from '../mutation-guard.js';
import { parseBody } from '../body.js';
import type { Route, RouteHandler } from '../router.js';

export function placementRoutes(
  ctx: Pick<HttpContext, 'placement' | 'logger'>,
  guard: MutationGuard,
): Route[] {
  const place =
    (admit: boolean): RouteHandler =>
    async ({ req, res, url }) => {
      const placement = ctx.placement;
      if (!placement) {
        throw new GatewayError(
          'unavailable',
          'placement needs a kubelet-sim behind the kubeconfig (gateway.kube.mode: kubeconfig)',
        );
      }
      // A dry run (placement) changes nothing; admitting a pod is a mutation.
      const who = admit ? await guard.authorized(req) : null;
      const pod = await parseBody(req, podBodySchema, guard.bodyOptions(['json', 'yaml']));
      // A dry run may try another policy or scope (kubelet-sim validates them: 400 passes through).
      const whatIf = {
        topologyManagerPolicy: url.searchParams.get('topologyManagerPolicy') ?? '',
        topologyManagerScope: url.searchParams.get('topologyManagerScope') ?? '',
      };
      const answer = await placement.forward(pod, admit, whatIf);
      if (admit) {
        ctx.logger.info(
          {
            pod: `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`,
            status: answer.status,
            by: who,
          },
          'pod submitted to the kubelet-sim',
        );
      }
      res.writeHead(answer.status, {
        'content-type': answer.contentType,
        'content-length': Buffer.byteLength(answer.body),
        'cache-control': 'no-store',
      });
      res.end(answer.body);
    };
  return [
    { path: '/api/v1/placement', methods: { POST: place(false) } },
    { path: '/api/v1/pods', methods: { POST: place(true) } },
  ];
}
