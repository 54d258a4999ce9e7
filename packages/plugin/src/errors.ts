// The one error type of @plugboard/plugin. Every failure inside the package is a PluginError with a
// stable `code`; the gRPC service maps it to a status once (see grpc-status.ts), the CLI prints it.

export type PluginErrorCode =
  | 'config-invalid'
  | 'invalid-resource-name'
  | 'invalid-argument'
  | 'registration-failed'
  | 'source-failed'
  | 'pre-start-failed'
  | 'api-request-failed'
  | 'not-found'
  | 'stopped'
  | 'internal';

export class PluginError extends Error {
  override readonly name = 'PluginError';
  readonly code: PluginErrorCode;

  constructor(code: PluginErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }

  /** Wraps anything thrown into a PluginError, keeping an existing one as is. */
  static from(err: unknown, code: PluginErrorCode = 'internal'): PluginError {
    if (err instanceof PluginError) return err;
    if (err instanceof Error) return new PluginError(code, err.message, { cause: err });
    return new PluginError(code, String(err), { cause: err });
  }
}
