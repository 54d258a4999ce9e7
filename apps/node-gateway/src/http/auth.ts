// Authorization of mutations (faults, scenarios): a static bearer token from a file, and/or a
// Kubernetes TokenReview + SubjectAccessReview. Reads are public. Tokens are compared in constant time
// and never logged; Kubernetes decisions are cached briefly so a burst of requests costs one review.
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors.js';

export type AuthMode = 'none' | 'token' | 'kubernetes' | 'token+kubernetes';

/** Asks the API server who a token belongs to and whether they may act (see kube/reviews.ts). */
export interface KubeReviewer {
  review(token: string): Promise<{ authenticated: boolean; user: string; allowed: boolean; reason: string }>;
}

export interface Authorizer {
  readonly mode: AuthMode;
  readonly required: boolean;
  /** Resolves with the caller's identity for logs, or throws unauthorized/forbidden. */
  authorize(req: IncomingMessage): Promise<string>;
}

export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1' || host === '::ffff:127.0.0.1';
}

const sha = (s: string): Buffer => createHash('sha256').update(s).digest();

/**
 * The credential behind the API server's pod proxy: the proxy authenticates the caller with their
 * Authorization header and does not forward it, so clients going through it (kubectl plugboard)
 * repeat the bearer token here. It is a credential, not an identity claim: it is verified exactly
 * like Authorization (static token or TokenReview + SubjectAccessReview), so sending it directly
 * grants nothing more. When both headers are present this one is verified.
 */
export const PROXY_AUTH_HEADER = 'x-plugboard-authorization';

function bearer(req: IncomingMessage): string | null {
  const proxied = req.headers[PROXY_AUTH_HEADER];
  const [name, h] =
    typeof proxied === 'string'
      ? ['X-Plugboard-Authorization', proxied]
      : ['Authorization', req.headers.authorization];
  if (!h) return null;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(h);
  if (!m) throw new GatewayError('unauthorized', `${name} header must be "Bearer <token>"`);
  return m[1]!;
}

export function readTokenFile(file: string): string {
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new GatewayError(
      'config-invalid',
      `cannot read --auth-token-file ${file}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  if (token.length < 16) {
    throw new GatewayError(
      'config-invalid',
      `--auth-token-file ${file}: the token must be at least 16 characters`,
    );
  }
  return token;
}

export function createAuthorizer(options: {
  token: string | null;
  reviewer: KubeReviewer | null;
  cacheMs?: number;
  now?: () => number;
}): Authorizer {
  const expected = options.token === null ? null : sha(options.token);
  const reviewer = options.reviewer;
  const mode: AuthMode =
    expected && reviewer ? 'token+kubernetes' : expected ? 'token' : reviewer ? 'kubernetes' : 'none';
  const cache = new Map<
    string,
    { at: number; user: string; allowed: boolean; authenticated: boolean; reason: string }
  >();
  const cacheMs = options.cacheMs ?? 10_000;
  const now = options.now ?? Date.now;

  return {
    mode,
    required: mode !== 'none',
    async authorize(req) {
      if (mode === 'none') return 'anonymous (auth disabled on loopback)';
      const token = bearer(req);
      if (token === null)
        throw new GatewayError(
          'unauthorized',
          "this endpoint needs Authorization: Bearer <token> (or X-Plugboard-Authorization through the API server's pod proxy)",
        );
      const digest = sha(token);
      if (expected && timingSafeEqual(digest, expected)) return 'static-token';
      if (!reviewer) throw new GatewayError('unauthorized', 'invalid bearer token');
      const key = digest.toString('hex');
      let decision = cache.get(key);
      if (!decision || now() - decision.at > cacheMs) {
        let r;
        try {
          r = await reviewer.review(token);
        } catch (err) {
          throw new GatewayError(
            'unavailable',
            `cannot review the token with the Kubernetes API: ${(err as Error).message}`,
            {
              cause: err,
            },
          );
        }
        decision = { at: now(), ...r };
        if (cache.size > 1000) cache.clear();
        cache.set(key, decision);
      }
      if (!decision.authenticated)
        throw new GatewayError('unauthorized', 'the Kubernetes API did not authenticate the bearer token');
      if (!decision.allowed) {
        throw new GatewayError(
          'forbidden',
          `${decision.user} may not do this: ${decision.reason || 'SubjectAccessReview denied'}`,
        );
      }
      return decision.user;
    },
  };
}

/** The start-up rule: beyond loopback, mutations must be authorized unless explicitly waived. */
export function checkExposure(options: {
  host: string;
  authRequired: boolean;
  insecureAllowUnauthenticated: boolean;
}): 'ok' | 'loopback-unauthenticated' | 'insecure-unauthenticated' {
  if (options.authRequired) return 'ok';
  if (isLoopback(options.host)) return 'loopback-unauthenticated';
  if (options.insecureAllowUnauthenticated) return 'insecure-unauthenticated';
  throw new GatewayError(
    'config-invalid',
    `refusing to listen on ${options.host} without authentication: give --auth-token-file FILE or --kube-auth, ` +
      'listen on 127.0.0.1, or pass --insecure-allow-unauthenticated',
  );
}

/** WebSocket Origin allow-list: same-origin and Origin-less (non-browser) clients always pass. */
export function originAllowed(req: IncomingMessage, allowed: readonly string[]): boolean {
  const origin = req.headers.origin;
  if (!origin) return true;
  if (allowed.includes('*') || allowed.includes(origin)) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}
