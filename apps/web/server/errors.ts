// The web server's one error class, mapped once to application/problem+json (REST) or a stream
// `error` message (WebSocket) at the boundary.
import type { ServerResponse } from 'node:http';

export type WebErrorCode =
  | 'config'
  | 'not-found'
  | 'method-not-allowed'
  | 'bad-request'
  | 'payload-too-large'
  | 'unsupported-media-type'
  | 'forbidden-origin'
  | 'forbidden'
  | 'unauthorized'
  | 'gateway-unreachable'
  | 'gateway-timeout'
  | 'discovery'
  | 'internal';

const STATUS: Record<WebErrorCode, number> = {
  config: 500,
  'not-found': 404,
  'method-not-allowed': 405,
  'bad-request': 400,
  'payload-too-large': 413,
  'unsupported-media-type': 415,
  'forbidden-origin': 403,
  forbidden: 403,
  unauthorized: 401,
  'gateway-unreachable': 502,
  'gateway-timeout': 504,
  discovery: 503,
  internal: 500,
};

const TITLE: Record<WebErrorCode, string> = {
  config: 'Web server misconfigured',
  'not-found': 'Not found',
  'method-not-allowed': 'Method not allowed',
  'bad-request': 'Bad request',
  'payload-too-large': 'Payload too large',
  'unsupported-media-type': 'Unsupported media type',
  'forbidden-origin': 'Origin not allowed',
  forbidden: 'Forbidden',
  unauthorized: 'Unauthorized',
  'gateway-unreachable': 'Gateway unreachable',
  'gateway-timeout': 'Gateway timed out',
  discovery: 'Gateway discovery failed',
  internal: 'Internal error',
};

export class WebError extends Error {
  constructor(
    readonly code: WebErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'WebError';
  }

  get status(): number {
    return STATUS[this.code];
  }

  get title(): string {
    return TITLE[this.code];
  }

  static from(err: unknown): WebError {
    if (err instanceof WebError) return err;
    // Anything not raised as a WebError is a bug or an I/O failure here, not the client's fault.
    return new WebError('internal', err instanceof Error ? err.message : 'unexpected error', { cause: err });
  }
}

/** Root cause text of a fetch/socket failure ("connect ECONNREFUSED 127.0.0.1:7001"). */
export function causeText(err: unknown): string {
  let cur: unknown = err;
  let text = err instanceof Error ? err.message : String(err);
  while (cur instanceof Error && cur.cause !== undefined) {
    cur = cur.cause;
    if (cur instanceof Error && cur.message) text = cur.message;
  }
  return text;
}

export function sendProblem(res: ServerResponse, err: WebError, extra: Record<string, unknown> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({
    type: 'about:blank',
    title: err.title,
    status: err.status,
    detail: err.message,
    ...extra,
  });
  res.writeHead(err.status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(body);
}
