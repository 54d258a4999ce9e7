// What every mutation passes before it runs: the per-client rate limit, then authorization, then —
// for fault injection and scenarios — the faults-enabled switch; plus the TTL ceiling they share.
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors.js';
import type { HttpContext } from './context.js';
import { createRateLimiter } from './rate-limit.js';

export interface MutationGuard {
  /** Rate limit, then authorization: what every mutation needs. Answers who asked. */
  authorized(req: IncomingMessage): Promise<string>;
  /** `authorized`, then refused unless fault injection is enabled; `what` completes the message. */
  faultMutation(req: IncomingMessage, what: string): Promise<string>;
  /** Refuses a TTL above gateway.faults.maxTtlSeconds. */
  checkTtl(ttlSeconds: number): void;
  /** Body parsing options: the size limit and the accepted formats. */
  bodyOptions(formats: ('json' | 'yaml')[]): { maxBytes: number; formats: ('json' | 'yaml')[] };
}

export function createMutationGuard(ctx: Pick<HttpContext, 'config' | 'authorizer'>): MutationGuard {
  const { config, authorizer } = ctx;
  const limit = config.http.mutationRateLimit;
  const limiter = limit ? createRateLimiter(limit) : null;

  async function authorized(req: IncomingMessage): Promise<string> {
    // Before authorization: a flood must not become a flood of TokenReviews.
    const wait = limiter?.take(req.socket.remoteAddress ?? 'unknown') ?? 0;
    if (wait > 0) {
      throw Object.assign(
        new GatewayError(
          'rate-limited',
          `too many mutations from this client (gateway.http.mutationRateLimit: ${limit!.perSecond}/s, burst ${limit!.burst}); retry in ${wait} s`,
        ),
        { retryAfter: wait },
      );
    }
    return authorizer.authorize(req);
  }

  return {
    authorized,
    async faultMutation(req, what) {
      const who = await authorized(req);
      if (!config.faults.enabled) {
        throw new GatewayError(
          'faults-disabled',
          `fault injection is disabled on this gateway (set gateway.faults.enabled: true or --enable-faults); cannot ${what}`,
        );
      }
      return who;
    },
    checkTtl(ttlSeconds) {
      if (config.faults.maxTtlSeconds !== null && ttlSeconds > config.faults.maxTtlSeconds) {
        throw new GatewayError(
          'invalid-body',
          `ttlSeconds must be at most ${config.faults.maxTtlSeconds} (gateway.faults.maxTtlSeconds)`,
        );
      }
    },
    bodyOptions: (formats) => ({ maxBytes: config.http.maxBodyBytes, formats }),
  };
}
