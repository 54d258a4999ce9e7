// HTTP plumbing shared by the API slice, the pod proxy and the control API: the error type
// (HttpError) and the one translation of errors into a Kubernetes `Status` (the API slice) or an
// RFC 9457 problem (the control API), JSON bodies in and out.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeletSimErrorCode } from '../errors.js';

const MAX_BODY = 1024 * 1024;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    /** The Status `details` (the API server sends `{}` on some errors, a name and kind on others). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export const PROBLEM_STATUS: Record<KubeletSimErrorCode, number> = {
  UnexpectedAdmissionError: 409,
  TopologyAffinityError: 409,
  OutOfResource: 409,
  Invalid: 422,
  AlreadyExists: 409,
  NotFound: 404,
  RegistrationRejected: 400,
  Config: 400,
  Unauthorized: 401,
  Stopped: 503,
  Internal: 500,
};

export function statusObject(
  code: number,
  reason: string,
  message: string,
  details?: Record<string, unknown>,
): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  };
}

export function notFound(): HttpError {
  return new HttpError(404, 'NotFound', 'the server could not find the requested resource');
}

export function json(res: ServerResponse, status: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) });
  res.end(data);
}

export function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(body);
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  422: 'Unprocessable Content',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** RFC 9457 problem+json; `reason` is the kubelet's reason (e.g. UnexpectedAdmissionError, OutOfcpu). */
export function problem(
  res: ServerResponse,
  status: number,
  code: string,
  reason: string,
  detail: string,
  instance: string | undefined,
): void {
  const body = JSON.stringify({
    type: `urn:plugboard:problem:kubelet-sim:${code}`,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    reason,
    ...(instance ? { instance } : {}),
  });
  res.writeHead(status, {
    'Content-Type': 'application/problem+json',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
  });
  res.end(body);
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new HttpError(413, 'RequestEntityTooLarge', 'request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const body = await readBody(req);
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw new HttpError(400, 'BadRequest', 'request body is not valid JSON');
  }
}
