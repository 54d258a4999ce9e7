// Routing for the REST API: a table of routes (paths with `{id}` segments, a handler per method),
// matched against the request path, with the one error mapping — a thrown GatewayError becomes
// problem+json, with Allow on 405, Retry-After on 429, WWW-Authenticate on 401 and Upgrade on 426.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { GatewayError } from '../errors.js';
import { problemOf, sendProblem } from './problem.js';

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

export interface RouteRequest {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** The decoded `{id}` segment, when the route's path has one. */
  id: string;
}

export type RouteHandler = (r: RouteRequest) => Promise<void> | void;

export interface Route {
  /** e.g. `/api/v1/faults/{id}`; a trailing slash on the request is ignored. */
  path: string;
  /** Handlers by method, in the order the Allow header lists them. */
  methods?: Partial<Record<HttpMethod, RouteHandler>>;
  /** Answers HEAD with the GET handler (the probes). */
  headAsGet?: boolean;
  /** One handler for every method (overrides `methods`). */
  anyMethod?: RouteHandler;
}

/** Errors that carry a header of their own (see `request` below). */
interface RouteErrorExtras {
  allow?: string[];
  retryAfter?: number;
  upgradeRequired?: boolean;
}

export function methodNotAllowed(allow: string[]): never {
  throw Object.assign(new GatewayError('method-not-allowed', `allowed methods: ${allow.join(', ')}`), {
    allow,
  });
}

/** Decodes one path segment; rejects separators and dot segments smuggled in through encoding. */
function segment(raw: string): string {
  let s: string;
  try {
    s = decodeURIComponent(raw);
  } catch {
    throw new GatewayError('bad-request', `malformed path segment "${raw.slice(0, 80)}"`);
  }
  if (!s || s.includes('/') || s === '.' || s === '..' || s.length > 253)
    throw new GatewayError('not-found', `no such item "${s.slice(0, 80)}"`);
  return s;
}

/**
 * The request target as a URL, or null when it cannot be one. Origin-form targets are appended to
 * a fixed origin: resolving "//x/y" against a base would make "x" a host (or throw, crashing the
 * handler outside its error mapping — found by fuzzing).
 */
export function requestUrl(raw: string | undefined): URL | null {
  const target = raw ?? '/';
  try {
    return target.startsWith('/') ? new URL(`http://gateway${target}`) : new URL(target, 'http://gateway');
  } catch {
    return null;
  }
}

export const BAD_TARGET = new GatewayError('bad-request', 'the request target is not a valid URL path');

/** The request path without trailing slashes ("/" for the root). */
export function routePath(url: URL): string {
  return url.pathname.replace(/\/+$/, '') || '/';
}

interface CompiledRoute {
  route: Route;
  segments: string[];
}

/** The raw `{id}` segment (undefined: no id in the pattern), or null when the path does not match. */
function match(segments: readonly string[], parts: readonly string[]): string | undefined | null {
  if (segments.length !== parts.length) return null;
  let id: string | undefined;
  for (const [i, s] of segments.entries()) {
    if (s === '{id}') id = parts[i];
    else if (s !== parts[i]) return null;
  }
  return id;
}

function handlerFor(route: Route, method: string): RouteHandler {
  if (route.anyMethod) return route.anyMethod;
  const methods = route.methods ?? {};
  const lookup = method === 'HEAD' && route.headAsGet ? 'GET' : method;
  const handler = Object.hasOwn(methods, lookup) ? methods[lookup as HttpMethod] : undefined;
  return handler ?? methodNotAllowed(Object.keys(methods));
}

export function createRouter(routes: readonly Route[], logger: Logger) {
  const table: CompiledRoute[] = routes.map((route) => ({ route, segments: route.path.split('/').slice(1) }));

  async function dispatch(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = routePath(url);
    const parts = path.split('/').slice(1);
    for (const { route, segments } of table) {
      const raw = match(segments, parts);
      if (raw === null) continue;
      // The segment is checked before the method, as a malformed id is wrong whatever the method.
      const id = raw === undefined ? '' : segment(raw);
      return handlerFor(route, req.method ?? 'GET')({ req, res, url, id });
    }
    throw new GatewayError('not-found', `no route for ${path}`);
  }

  return async function request(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = requestUrl(req.url);
    if (!url) return sendProblem(res, problemOf(BAD_TARGET));
    try {
      await dispatch(req, res, url);
    } catch (err) {
      const problem = problemOf(err, url.pathname);
      if (problem.status >= 500 && problem.status !== 503)
        logger.error({ err, path: url.pathname }, 'request failed');
      const headers: Record<string, string> = {};
      const extras = err as RouteErrorExtras;
      if (extras.allow) headers.allow = extras.allow.join(', ');
      if (extras.retryAfter) headers['retry-after'] = String(extras.retryAfter);
      if (extras.upgradeRequired) {
        problem.status = 426;
        problem.title = 'Upgrade Required';
        headers.upgrade = 'websocket';
      }
      if (problem.status === 401) headers['www-authenticate'] = 'Bearer realm="plugboard-gateway"';
      sendProblem(res, problem, headers);
    }
  };
}
