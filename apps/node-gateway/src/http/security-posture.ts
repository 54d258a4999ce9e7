// The gateway's security posture, decided before anything listens: who may mutate (a static token,
// Kubernetes TokenReview + SubjectAccessReview, or nobody checked) and whether that is acceptable on
// the listen address — refused beyond loopback unless waived, and warned about when unauthenticated.
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config.js';
import type { KubeClient } from '../sources/kube-client.js';
import { checkExposure, createAuthorizer, readTokenFile, type Authorizer } from './auth.js';

export function securityPosture(config: GatewayConfig, kube: KubeClient | null, logger: Logger): Authorizer {
  const token = config.auth.tokenFile ? readTokenFile(config.auth.tokenFile) : null;
  const reviewer =
    config.auth.kubernetes.enabled && kube
      ? kube.module.createKubeReviewer(kube.kc, { ...config.auth.kubernetes, nodeName: config.nodeName })
      : null;
  const authorizer = createAuthorizer({ token, reviewer });
  const exposure = checkExposure({
    host: config.listen.host,
    authRequired: authorizer.required,
    insecureAllowUnauthenticated: config.auth.insecureAllowUnauthenticated,
  });
  if (exposure === 'loopback-unauthenticated') {
    logger.warn(
      { listen: config.listen.host },
      'mutations need no token: listening on loopback without --auth-token-file',
    );
  } else if (exposure === 'insecure-unauthenticated') {
    logger.warn(
      { listen: config.listen.host },
      'INSECURE: anyone who can reach this address can inject faults (--insecure-allow-unauthenticated)',
    );
  }
  return authorizer;
}
