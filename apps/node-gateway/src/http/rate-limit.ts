// Token-bucket rate limit for mutations (faults, scenarios), one bucket per client address. It runs
// before authorization, so a flood of requests — authenticated or not — cannot turn into a flood of
// TokenReviews against the API server or of ListAndWatch updates to the kubelet.

export interface RateLimitOptions {
  /** Tokens added per second (sustained mutations per second per client). */
  perSecond: number;
  /** Bucket size (mutations a client may send at once). */
  burst: number;
  /** Buckets kept at most; the least recently used go first (bounded memory under address spoofing). */
  maxClients?: number;
  now?: () => number;
}

export interface RateLimiter {
  /** Takes one token for `key`; returns 0 when allowed, else the seconds to wait (≥ 1, for Retry-After). */
  take(key: string): number;
  readonly size: number;
}

export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const now = options.now ?? (() => performance.now());
  const maxClients = options.maxClients ?? 10_000;
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    get size() {
      return buckets.size;
    },
    take(key) {
      const t = now();
      let b = buckets.get(key);
      if (b) {
        b.tokens = Math.min(options.burst, b.tokens + ((t - b.at) / 1000) * options.perSecond);
        b.at = t;
        // Re-insert: Map iteration order is then least recently used first.
        buckets.delete(key);
      } else {
        b = { tokens: options.burst, at: t };
        if (buckets.size >= maxClients) buckets.delete(buckets.keys().next().value!);
      }
      buckets.set(key, b);
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return 0;
      }
      return Math.max(1, Math.ceil((1 - b.tokens) / options.perSecond));
    },
  };
}
