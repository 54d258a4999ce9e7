// The one error type of @plugboard/node-gateway. Everything that fails inside the gateway is a
// GatewayError with a stable `code`; the HTTP layer maps it to problem+json once (http/problem.ts),
// the CLI prints it and exits non-zero.

export type GatewayErrorCode =
  | 'config-invalid'
  | 'bad-request'
  | 'unauthorized'
  | 'forbidden'
  | 'faults-disabled'
  | 'not-found'
  | 'method-not-allowed'
  | 'payload-too-large'
  | 'unsupported-media-type'
  | 'invalid-body'
  | 'conflict'
  | 'rate-limited'
  | 'unavailable'
  | 'internal';

/** HTTP status for each code; the only place this mapping lives. */
export const GATEWAY_ERROR_STATUS: Record<GatewayErrorCode, number> = {
  'config-invalid': 500,
  'bad-request': 400,
  unauthorized: 401,
  forbidden: 403,
  'faults-disabled': 403,
  'not-found': 404,
  'method-not-allowed': 405,
  'payload-too-large': 413,
  'unsupported-media-type': 415,
  'invalid-body': 422,
  conflict: 409,
  'rate-limited': 429,
  unavailable: 503,
  internal: 500,
};

export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  readonly code: GatewayErrorCode;

  constructor(code: GatewayErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }

  get status(): number {
    return GATEWAY_ERROR_STATUS[this.code];
  }

  /** Wraps anything thrown into a GatewayError, keeping an existing one as is. */
  static from(err: unknown, code: GatewayErrorCode = 'internal'): GatewayError {
    if (err instanceof GatewayError) return err;
    if (err instanceof Error) return new GatewayError(code, err.message, { cause: err });
    return new GatewayError(code, String(err), { cause: err });
  }
}
