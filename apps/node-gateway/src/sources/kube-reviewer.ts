// The authorizer's reviews against the API server (`auth.mode: kubernetes`, http/auth.ts): a
// TokenReview for the bearer token, then a SubjectAccessReview for the configured verb and resource
// on this node. Loaded only through kube.ts, which re-exports it, so that @kubernetes/client-node
// stays in the lazily loaded part of the gateway (kube-client.ts).
import { AuthenticationV1Api, AuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { KubeReviewer } from '../http/auth.js';

/** TokenReview + SubjectAccessReview for the authorizer (kubernetes auth mode). */
export function createKubeReviewer(
  kc: KubeConfig,
  sar: { verb: string; group: string; resource: string; namespace: string | null; nodeName: string },
): KubeReviewer {
  const authn = kc.makeApiClient(AuthenticationV1Api);
  const authz = kc.makeApiClient(AuthorizationV1Api);
  return {
    async review(token) {
      const tr = await authn.createTokenReview({ body: { spec: { token } } });
      const user = tr.status?.user;
      if (!tr.status?.authenticated || !user?.username) {
        return {
          authenticated: false,
          user: 'unknown',
          allowed: false,
          reason: tr.status?.error ?? 'not authenticated',
        };
      }
      const review = await authz.createSubjectAccessReview({
        body: {
          spec: {
            user: user.username,
            groups: user.groups ?? [],
            uid: user.uid,
            extra: user.extra,
            resourceAttributes: {
              verb: sar.verb,
              group: sar.group,
              resource: sar.resource,
              name: sar.nodeName,
              ...(sar.namespace ? { namespace: sar.namespace } : {}),
            },
          },
        },
      });
      return {
        authenticated: true,
        user: user.username,
        allowed: review.status?.allowed === true,
        reason: review.status?.reason ?? review.status?.evaluationError ?? '',
      };
    },
  };
}
