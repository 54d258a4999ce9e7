// The package's one error class. Kubelet-side failures carry the kubelet's `reason` (the string
// a real kubelet writes into pod status or a gRPC status) so each boundary can translate once:
// gRPC status in the servers, problem+json in the control API, a thrown error in the library.

import { admissionRejection, TopologyError } from '@plugboard/topology';

export type KubeletSimErrorCode =
  /** Pod admission failed in the device manager (the kubelet's UnexpectedAdmissionError). */
  | 'UnexpectedAdmissionError'
  /** The Topology Manager policy could not align the pod's resources (restricted, single-numa-node). */
  | 'TopologyAffinityError'
  /** Pod admission failed the node-resources predicate (reason `OutOf<resource>`). */
  | 'OutOfResource'
  /** The pod object is invalid (what the API server would refuse with 422 Invalid). */
  | 'Invalid'
  | 'AlreadyExists'
  | 'NotFound'
  /** A device plugin's Register call was refused. */
  | 'RegistrationRejected'
  /** Bad options or command-line flags. */
  | 'Config'
  | 'Unauthorized'
  | 'Stopped'
  | 'Internal';

export class KubeletSimError extends Error {
  override readonly name = 'KubeletSimError';
  readonly code: KubeletSimErrorCode;
  /** The kubelet's reason string, e.g. `UnexpectedAdmissionError` or `OutOfcpu`. */
  readonly reason: string;

  constructor(code: KubeletSimErrorCode, message: string, opts: { reason?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.reason = opts.reason ?? code;
  }

  static from(err: unknown): KubeletSimError {
    if (err instanceof KubeletSimError) return err;
    const message = err instanceof Error ? err.message : String(err);
    return new KubeletSimError('Internal', message, { cause: err });
  }
}

/** The resource managers' refusals (a TopologyError from @plugboard/topology) as a KubeletSimError, same code. */
export function fromTopology<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof TopologyError)
      throw new KubeletSimError(err.code, err.message, { reason: err.reason, cause: err });
    throw err;
  }
}

/**
 * Any admission failure as the kubelet reports it: this package's errors as they are, the resource
 * managers' with their reason, anything else as UnexpectedAdmissionError.
 */
export function asRejection(err: unknown): KubeletSimError {
  if (err instanceof KubeletSimError) return err;
  const { reason, message } = admissionRejection(err);
  return new KubeletSimError(err instanceof TopologyError ? err.code : 'UnexpectedAdmissionError', message, {
    reason,
    cause: err,
  });
}
