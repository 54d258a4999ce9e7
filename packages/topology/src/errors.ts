// The package's one error class. Admission failures carry the kubelet's `reason` (what a real
// kubelet writes into a rejected pod's status) so that each caller translates them once: kubelet-sim
// into its own error (problem+json, a Failed pod), the gateway into a predicted rejection.

export type TopologyErrorCode =
  /** The Topology Manager policy could not align the pod's resources (restricted, single-numa-node). */
  | 'TopologyAffinityError'
  /** The node-resources predicate failed (reason `OutOf<resource>`). */
  | 'OutOfResource'
  /** A pod's resources are invalid (what the API server would refuse with 422 Invalid). */
  | 'Invalid'
  /** Settings the managers refuse (too many NUMA nodes for a policy, reserved CPUs that do not exist). */
  | 'Config';

export class TopologyError extends Error {
  override readonly name = 'TopologyError';
  readonly code: TopologyErrorCode;
  /** The kubelet's reason string, e.g. `TopologyAffinityError` or `OutOfcpu`. */
  readonly reason: string;

  constructor(code: TopologyErrorCode, message: string, opts: { reason?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.reason = opts.reason ?? code;
  }
}

/**
 * How the kubelet reports a failed admission (the admit handlers' PodAdmitResult): the Topology
 * Manager's and the predicate's own reasons as they are; anything a resource manager's allocation
 * threw (not enough devices, CPUs or memory) as UnexpectedAdmissionError with the kubelet's wording.
 */
export function admissionRejection(err: unknown): { reason: string; message: string } {
  if (err instanceof TopologyError) return { reason: err.reason, message: err.message };
  return {
    reason: 'UnexpectedAdmissionError',
    message: `Allocate failed due to ${err instanceof Error ? err.message : String(err)}, which is unexpected`,
  };
}
