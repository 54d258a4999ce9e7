// The demo's one error class: which component failed to start, and why, in words a newcomer can act on.
export type DemoErrorCode = 'config' | 'build' | 'start' | 'port-in-use' | 'scenario';

export class DemoError extends Error {
  override readonly name = 'DemoError';
  constructor(
    readonly code: DemoErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  static from(err: unknown): DemoError {
    return err instanceof DemoError
      ? err
      : new DemoError('start', err instanceof Error ? err.message : String(err), { cause: err });
  }
}
