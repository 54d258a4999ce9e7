// REST proxy: /api/nodes/{node}/{node|summary|history|faults|faults/{id}|scenarios|scenarios/{id}} → the
// node's gateway /api/v1/…, so the browser only ever talks to this origin. The user's bearer token
// is forwarded (mutations need it); nothing else of the browser's request is.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { WebConfig } from './config';
import type { GatewayDirectory } from './gateway-directory';
import { causeText, sendProblem, WebError } from './errors';

interface Route {
  pattern: RegExp;
  methods: readonly string[];
  /** A POST that changes nothing (a dry run): not a mutation. */
  readOnly?: boolean;
}

// Only what the dashboard uses is reachable: the proxy is not an open relay to the gateway.
const ROUTES: readonly Route[] = [
  { pattern: /^node$/, methods: ['GET'] },
  { pattern: /^summary$/, methods: ['GET'] },
  { pattern: /^history$/, methods: ['GET'] },
  { pattern: /^faults$/, methods: ['GET', 'POST', 'DELETE'] },
  { pattern: /^faults\/[^/]+$/, methods: ['GET', 'DELETE'] },
  { pattern: /^scenarios$/, methods: ['GET', 'POST', 'DELETE'] },
  { pattern: /^scenarios\/[^/]+$/, methods: ['GET', 'DELETE'] },
  // "Try to place" (kubelet-sim behind the gateway): a dry-run admission, then a real one.
  { pattern: /^placement$/, methods: ['POST'], readOnly: true },
  { pattern: /^pods$/, methods: ['POST'] },
];

const MUTATING = new Set(['POST', 'DELETE', 'PUT', 'PATCH']);

async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit)
    throw new WebError('payload-too-large', `request body of ${declared} bytes exceeds ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new WebError('payload-too-large', `request body exceeds ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Same-origin check for mutations from browsers (a bearer header is not sent cross-site, but be explicit). */
export function originAllowed(req: IncomingMessage, allowed: readonly string[]): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true; // non-browser clients (curl, tests) send none
  const host = req.headers.host;
  if (host && (origin === `http://${host}` || origin === `https://${host}`)) return true;
  return allowed.includes(origin) || allowed.includes('*');
}

export function createRestProxy(cfg: WebConfig, directory: GatewayDirectory, logger: Logger) {
  return async function proxyNodeApi(
    req: IncomingMessage,
    res: ServerResponse,
    nodeName: string,
    rest: string,
    search: string,
  ): Promise<void> {
    const method = req.method ?? 'GET';
    try {
      const route = ROUTES.find((r) => r.pattern.test(rest));
      if (!route) throw new WebError('not-found', `no API route /api/nodes/${nodeName}/${rest}`);
      if (!route.methods.includes(method)) {
        res.setHeader('allow', route.methods.join(', '));
        throw new WebError(
          'method-not-allowed',
          `${method} is not allowed on ${rest}; use ${route.methods.join(', ')}`,
        );
      }
      const gw = directory.get(nodeName);
      if (!gw) {
        const st = directory.status();
        throw new WebError(
          'not-found',
          `no gateway known for node "${nodeName}" (gateways come from ${st.source})`,
        );
      }
      const mutating = MUTATING.has(method) && !route.readOnly;
      if (mutating && !originAllowed(req, cfg.allowedOrigins)) {
        throw new WebError('forbidden-origin', `origin ${req.headers.origin} may not change gateway state`);
      }
      if (mutating && !cfg.faultsEnabled) {
        throw new WebError(
          'forbidden',
          'fault injection is disabled on this dashboard (PLUGBOARD_FAULTS_ENABLED=false)',
        );
      }
      if (mutating && cfg.mutationsNeedToken && !/^Bearer \S+/i.test(req.headers.authorization ?? '')) {
        // Exposed beyond loopback: never let an anonymous browser reach a gateway that trusts loopback.
        res.setHeader('www-authenticate', 'Bearer realm="plugboard"');
        throw new WebError(
          'unauthorized',
          `this dashboard listens on ${cfg.host}; fault requests need a bearer token`,
        );
      }
      let body: Buffer | undefined;
      if (method === 'POST') {
        const type = req.headers['content-type'] ?? '';
        if (!/^application\/json\b/.test(type)) {
          throw new WebError('unsupported-media-type', 'request body must be application/json');
        }
        body = await readBody(req, cfg.maxBodyBytes);
      }
      const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
      if (body) headers['content-type'] = 'application/json';
      // Mutations carry the user's own token (the gateway decides what this user may do); reads
      // may fall back to the server's read-only service token.
      const auth = req.headers.authorization;
      if (auth) headers.authorization = auth;
      else if (!mutating && cfg.readToken) headers.authorization = `Bearer ${cfg.readToken}`;

      const target = `${gw.url}/api/v1/${rest}${search}`;
      let upstream: Response;
      try {
        upstream = await fetch(target, {
          method,
          headers,
          ...(body ? { body: new Uint8Array(body) } : {}),
          signal: AbortSignal.timeout(cfg.gatewayTimeoutMs),
          redirect: 'manual',
        });
      } catch (err) {
        const timeout = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
        throw new WebError(
          timeout ? 'gateway-timeout' : 'gateway-unreachable',
          timeout
            ? `gateway for node "${nodeName}" at ${gw.url} did not answer within ${cfg.gatewayTimeoutMs} ms`
            : `gateway for node "${nodeName}" at ${gw.url} is unreachable: ${causeText(err)}`,
          { cause: err },
        );
      }
      const buf = Buffer.from(await upstream.arrayBuffer());
      const out: Record<string, string> = { 'cache-control': 'no-store' };
      for (const h of ['content-type', 'location', 'retry-after', 'www-authenticate']) {
        const v = upstream.headers.get(h);
        if (v) out[h] = v;
      }
      if (mutating) {
        logger.info(
          { component: 'proxy', node: nodeName, method, path: rest, status: upstream.status },
          'gateway mutation',
        );
      }
      res.writeHead(upstream.status, out);
      res.end(buf);
    } catch (err) {
      const e = WebError.from(err);
      if (e.status >= 500)
        logger.warn({ component: 'proxy', node: nodeName, path: rest, err: e.message }, 'proxy error');
      sendProblem(res, e, { node: nodeName });
    }
  };
}
