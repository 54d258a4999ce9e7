// RFC 9457 problem+json: the one place where errors become HTTP responses.
import type { ServerResponse } from 'node:http';
import { GatewayError } from '../errors.js';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  /** Field-level validation errors (422). */
  errors?: { path: string; message: string }[];
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function problemOf(err: unknown, instance?: string): Problem {
  const e = GatewayError.from(err);
  const status = e.status;
  const problem: Problem = {
    type: `urn:plugboard:problem:${e.code}`,
    title: TITLES[status] ?? 'Error',
    status,
    // Internal errors keep their detail out of the response; the log has it.
    detail: status >= 500 && e.code === 'internal' ? 'internal error; see the gateway log' : e.message,
  };
  if (instance) problem.instance = instance;
  const errors = (e as GatewayError & { errors?: Problem['errors'] }).errors;
  if (errors) problem.errors = errors;
  return problem;
}

export function sendProblem(
  res: ServerResponse,
  problem: Problem,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify(problem);
  res.writeHead(problem.status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(body);
}

/** Problem for a raw socket (rejected WebSocket upgrade). */
export function problemResponseText(problem: Problem): string {
  const body = JSON.stringify(problem);
  return (
    `HTTP/1.1 ${problem.status} ${problem.title}\r\n` +
    'Content-Type: application/problem+json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}
