// The one error type of kubectl-plugboard. Every failure is a CliError with a stable code; the CLI
// maps the code to an exit code once (EXIT_CODES), so scripts can branch on `$?`.

export type CliErrorCode =
  'error' | 'usage' | 'not-found' | 'unauthorized' | 'forbidden' | 'rejected' | 'unavailable';

/** Exit status per error code (documented in docs/OBSERVABILITY.md and `--help`). */
export const EXIT_CODES: Record<CliErrorCode | 'ok', number> = {
  ok: 0,
  error: 1,
  usage: 2,
  'not-found': 3,
  unauthorized: 4,
  forbidden: 4,
  rejected: 5,
  unavailable: 6,
};

export class CliError extends Error {
  override readonly name = 'CliError';
  readonly code: CliErrorCode;
  /** HTTP status behind the error, when it came from a gateway or the API server. */
  readonly status: number | null;

  constructor(code: CliErrorCode, message: string, options?: { cause?: unknown; status?: number }) {
    super(message, options);
    this.code = code;
    this.status = options?.status ?? null;
  }

  get exitCode(): number {
    return EXIT_CODES[this.code];
  }

  static from(err: unknown): CliError {
    if (err instanceof CliError) return err;
    if (err instanceof Error) return new CliError('error', err.message, { cause: err });
    return new CliError('error', String(err), { cause: err });
  }

  /** The error an HTTP status stands for (gateway problem+json or API server Status). */
  static fromStatus(status: number, message: string): CliError {
    const code: CliErrorCode =
      status === 401
        ? 'unauthorized'
        : status === 403
          ? 'forbidden'
          : status === 404
            ? 'not-found'
            : status === 502 || status === 503 || status === 504
              ? 'unavailable'
              : status >= 400 && status < 500
                ? 'rejected'
                : 'error';
    return new CliError(code, message, { status });
  }
}
