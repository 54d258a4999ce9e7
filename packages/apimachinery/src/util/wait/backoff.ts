// wait.Backoff (k8s.io/apimachinery/pkg/util/wait/backoff.go and wait.go's Jitter, v0.37): the one
// backoff shape of every retry in Plugboard. Durations are milliseconds (Go's are time.Duration);
// otherwise the fields and Step() are upstream's, so a site's parameters read as client-go's would.
// A retry loop that starts over (after a success, a quiet period, a reconnect) takes a new Backoff
// from its parameters, as Go code copies its initial Backoff value.

/** Backoff's parameters (Go: the Backoff struct's fields). */
export interface BackoffParameters {
  /** The initial duration, in ms. */
  duration: number;
  /**
   * The duration is multiplied by factor each iteration, if factor is not zero and the limits
   * imposed by steps and cap have not been reached. The jitter does not contribute to it.
   */
  factor?: number;
  /** The sleep at each iteration is the duration plus a uniform random amount in [0, jitter × duration). */
  jitter?: number;
  /**
   * The remaining number of iterations in which the duration may change (progress stops earlier when
   * the cap is hit). If not positive, the duration is not changed. `Infinity`: grow until the cap.
   */
  steps?: number;
  /** A limit on revised durations: a step that would pass it sets the duration to cap and steps to 0. */
  cap?: number;
}

/** wait.Backoff: mutable; each step() returns the next sleep and advances the duration. */
export class Backoff implements Required<BackoffParameters> {
  duration: number;
  factor: number;
  jitter: number;
  steps: number;
  cap: number;

  constructor(
    parameters: BackoffParameters,
    /** Math.random in production; tests pass their own. */
    private readonly random: () => number = Math.random,
  ) {
    this.duration = parameters.duration;
    this.factor = parameters.factor ?? 0;
    this.jitter = parameters.jitter ?? 0;
    this.steps = parameters.steps ?? 0;
    this.cap = parameters.cap ?? 0;
  }

  /**
   * Step: an amount of time to sleep determined by the current duration and jitter; the duration
   * and steps are updated for the next call (backoff.go's delay()).
   */
  step(): number {
    // When steps is non-positive, the base duration is not altered.
    if (this.steps < 1)
      return this.jitter > 0 ? jitter(this.duration, this.jitter, this.random) : this.duration;
    this.steps--;
    const current = this.duration;
    if (this.factor !== 0) {
      let next = current * this.factor;
      if (this.cap > 0 && next > this.cap) {
        next = this.cap;
        this.steps = 0;
      }
      this.duration = next;
    }
    return this.jitter > 0 ? jitter(current, this.jitter, this.random) : current;
  }
}

/**
 * wait.Jitter: a duration between duration and duration + maxFactor × duration (a non-positive
 * maxFactor counts as 1).
 */
export function jitter(duration: number, maxFactor: number, random: () => number = Math.random): number {
  const factor = maxFactor <= 0 ? 1 : maxFactor;
  return duration + random() * factor * duration;
}
