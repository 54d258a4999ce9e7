// The PodResources server's rate limit (pkg/kubelet/apis/podresources/grpc/ratelimit.go,
// release-1.33): a golang.org/x/time/rate token bucket with the kubelet's defaults; a call beyond
// it fails with RESOURCE_EXHAUSTED "rejected by rate limit".

export interface RateLimit {
  qps: number;
  burst: number;
}

/** The kubelet's defaults (pkg/kubelet/apis/podresources/grpc: DefaultQPS, DefaultBurstTokens). */
export const DEFAULT_POD_RESOURCES_RATE_LIMIT: RateLimit = { qps: 100, burst: 10 };

/** golang.org/x/time/rate's Limiter.Allow: a token bucket refilled continuously. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = limit.burst;
    this.last = this.now();
  }

  allow(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.limit.burst, this.tokens + ((t - this.last) / 1000) * this.limit.qps);
    this.last = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
