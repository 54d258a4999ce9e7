// The one error type of @plugboard/local-cluster. The CLI prints its message and exits non-zero;
// every message names what is wrong and what to do about it.

export type LocalClusterErrorCode =
  | 'usage'
  | 'go-missing'
  | 'go-too-old'
  | 'not-root'
  | 'tool-missing'
  | 'go-mod'
  | 'build-failed'
  | 'port-busy'
  | 'dir-in-use'
  | 'not-a-cluster'
  | 'component-exited'
  | 'timeout'
  | 'kubectl'
  | 'internal';

export class LocalClusterError extends Error {
  override readonly name = 'LocalClusterError';
  readonly code: LocalClusterErrorCode;

  constructor(code: LocalClusterErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }

  static from(err: unknown, code: LocalClusterErrorCode = 'internal'): LocalClusterError {
    if (err instanceof LocalClusterError) return err;
    if (err instanceof Error) return new LocalClusterError(code, err.message, { cause: err });
    return new LocalClusterError(code, String(err), { cause: err });
  }
}
