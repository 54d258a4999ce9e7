// One HTTP listener for two surfaces: a read-only slice of the Kubernetes API in real Kubernetes
// JSON (nodes, pods, events: get, list, watch; POST events; the pod proxy) that @kubernetes/client-node
// talks to unchanged, and the simulator's control API under /control/v1/ (admit/delete pods, restart the
// kubelet, device-manager state) answering errors as application/problem+json.

import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { connect, type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { KubeletSimError, type KubeletSimErrorCode } from '../errors.js';
import { kubeTime } from '../util/kube-time.js';
import type { KubeObject, ObjectFilter, ObjectStore, WatchEvent } from './object-store.js';
import { parseFieldSelector, parseLabelSelector, SelectorError } from './selectors.js';
import { SIMULATED_KUBELET_VERSION } from './node-object.js';
import type { TopologyOverride } from '../cm/topologymanager/scope.js';
import {
  TOPOLOGY_MANAGER_POLICIES,
  TOPOLOGY_MANAGER_SCOPES,
} from '../cm/topologymanager/topology-manager.js';

export interface ApiBackend {
  nodes: ObjectStore;
  pods: ObjectStore;
  events: ObjectStore;
  admitPod(pod: unknown): Promise<KubeObject>;
  dryRunPod(pod: unknown, override: TopologyOverride): Promise<unknown>;
  deletePod(namespace: string, name: string): Promise<void>;
  restart(): Promise<void>;
  state(): unknown;
  /** The managers' policies, reserved CPUs and each pod's admission decision (what a gateway polls). */
  admissions(): unknown;
}

export interface ApiServerOptions {
  host: string;
  port: number;
  backend: ApiBackend;
  /** Bearer token required for mutations (control API, POST events); none on loopback by default. */
  token?: string | undefined;
  /** Interval of BOOKMARK events on watches that allow them (the API server: about a minute). */
  bookmarkIntervalMs?: number;
  /**
   * Where the pod proxy (`/api/v1/namespaces/{ns}/pods/{name}[:port]/proxy/…`) forwards, by
   * `namespace/name`: a stand-in for the pod's IP and port (simulated pods have no network). Read
   * on every request, so entries may be added after start.
   */
  podProxyTargets?: ReadonlyMap<string, string> | undefined;
  logger: Logger;
}

const MAX_BODY = 1024 * 1024;
/** `/api/v1/namespaces/{ns}/pods/{name[:port]}/proxy[/rest]` (raw, still percent-encoded). */
const POD_PROXY_PATH = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/proxy(\/.*)?$/;
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
const MAX_WATCH_BACKLOG = 16 * 1024 * 1024;

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

const PROBLEM_STATUS: Record<KubeletSimErrorCode, number> = {
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

export class ApiServer {
  private server: Server | null = null;
  private readonly watches = new Set<ServerResponse>();
  /** Sockets of upgraded (WebSocket) pod-proxy connections, which the HTTP server no longer tracks. */
  private readonly upgraded = new Set<Duplex>();
  private readonly log: Logger;
  url = '';

  constructor(private readonly o: ApiServerOptions) {
    this.log = o.logger.child({ component: 'api-server' });
  }

  async start(): Promise<string> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => this.fail(req, res, err));
    });
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.upgrade(req, socket, head),
    );
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) =>
        reject(
          new KubeletSimError(
            'Config',
            `listen: cannot listen on ${this.o.host}:${this.o.port}: ${err.code ?? err.message}`,
            { cause: err },
          ),
        ),
      );
      server.listen(this.o.port, this.o.host, () => resolve());
    });
    this.server = server;
    const addr = server.address() as AddressInfo;
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    this.url = `http://${host}:${addr.port}`;
    this.log.info({ url: this.url }, 'Kubernetes API slice and control API listening');
    return this.url;
  }

  get port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? 0;
  }

  async stop(): Promise<void> {
    for (const res of this.watches) res.end();
    this.watches.clear();
    for (const socket of this.upgraded) socket.destroy();
    this.upgraded.clear();
    const server = this.server;
    this.server = null;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    if (parts[0] === 'control') return this.control(req, res, parts.slice(1), url);
    return this.kube(req, res, parts, url);
  }

  // --- Kubernetes API slice -----------------------------------------------------------------

  private async kube(req: IncomingMessage, res: ServerResponse, parts: string[], url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const path = parts.join('/');
    if (method === 'GET' && ['healthz', 'livez', 'readyz'].includes(path)) return text(res, 200, 'ok');
    if (method === 'GET' && path === 'version') {
      const [major, minor] = SIMULATED_KUBELET_VERSION.slice(1).split('.');
      return json(res, 200, {
        major,
        minor,
        gitVersion: `${SIMULATED_KUBELET_VERSION}-plugboard-sim`,
        platform: `linux/${process.arch}`,
      });
    }
    if (method === 'GET' && path === 'api')
      return json(res, 200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
    if (method === 'GET' && path === 'apis')
      return json(res, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups: [] });
    if (method === 'GET' && path === 'api/v1') return json(res, 200, apiResourceList());
    if (parts[0] !== 'api' || parts[1] !== 'v1') throw notFound();

    const rest = parts.slice(2);
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      namespace = rest[1];
      rest.splice(0, 2);
    }
    const [resource, name, ...extra] = rest;
    if (resource === 'pods' && namespace !== undefined && name && extra[0] === 'proxy')
      return this.proxy(req, res, this.proxyTarget(req, namespace, name, url));
    const store =
      resource === 'nodes'
        ? this.o.backend.nodes
        : resource === 'pods'
          ? this.o.backend.pods
          : resource === 'events'
            ? this.o.backend.events
            : null;
    if (!store || extra.length > 0 || (resource === 'nodes' && namespace !== undefined)) throw notFound();

    if (method === 'POST' && resource === 'events' && namespace && !name)
      return this.createEvent(req, res, namespace);
    if (method !== 'GET') {
      throw new HttpError(
        405,
        'MethodNotAllowed',
        'the server does not allow this method on the requested resource',
      );
    }
    if (name) {
      const obj = store.get(store.namespaced ? namespace : undefined, name);
      if (!obj || (store.namespaced && namespace === undefined)) {
        throw new HttpError(404, 'NotFound', `${resource} "${name}" not found`);
      }
      return json(res, 200, obj);
    }
    const filter = this.filterFor(store, namespace, url);
    const watch = ['true', '1'].includes(url.searchParams.get('watch') ?? '');
    if (watch) return this.watch(req, res, store, filter, url);
    if (url.searchParams.get('resourceVersionMatch') === 'Exact') {
      const rv = Number(url.searchParams.get('resourceVersion'));
      if (rv < store.oldestResourceVersion())
        throw new HttpError(410, 'Expired', 'The resourceVersion for the provided list is too old.');
    }
    const list = store.list(filter);
    return json(res, 200, {
      kind: store.listKind,
      apiVersion: 'v1',
      metadata: { resourceVersion: list.resourceVersion },
      // List items carry no kind/apiVersion, as the API server serves them.
      items: list.items.map(({ kind: _k, apiVersion: _a, ...item }) => item),
    });
  }

  private filterFor(store: ObjectStore, namespace: string | undefined, url: URL): ObjectFilter {
    const filters: ObjectFilter[] = [];
    if (namespace !== undefined) filters.push((o) => o.metadata.namespace === namespace);
    try {
      const fs = url.searchParams.get('fieldSelector');
      if (fs) filters.push(parseFieldSelector(fs, store.kind));
      const ls = url.searchParams.get('labelSelector');
      if (ls) filters.push(parseLabelSelector(ls));
    } catch (err) {
      if (err instanceof SelectorError) throw new HttpError(400, 'BadRequest', err.message);
      throw err;
    }
    return (o) => filters.every((f) => f(o));
  }

  private watch(
    req: IncomingMessage,
    res: ServerResponse,
    store: ObjectStore,
    filter: ObjectFilter,
    url: URL,
  ): void {
    const rvParam = url.searchParams.get('resourceVersion') ?? '';
    if (rvParam !== '' && !/^\d+$/.test(rvParam))
      throw new HttpError(400, 'BadRequest', `invalid resource version: ${rvParam}`);
    const fromRv = rvParam === '' || rvParam === '0' ? null : Number(rvParam);
    const bookmarks = url.searchParams.get('allowWatchBookmarks') === 'true';
    const initialEventsEnd = bookmarks && url.searchParams.get('sendInitialEvents') === 'true';
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache, private',
      'Transfer-Encoding': 'chunked',
    });
    res.flushHeaders();
    const send = (event: WatchEvent) => {
      // A watch ended by its timeout or by stop() gets no more events before its 'close' arrives.
      if (res.writableEnded || res.destroyed) return;
      // A watcher that does not read is cut off (as the API server does) instead of buffering
      // without bound; informers re-list and watch again.
      if (res.writableLength > MAX_WATCH_BACKLOG) {
        this.log.warn({ path: req.url }, 'closing an unresponsive watch');
        res.destroy();
        return;
      }
      res.write(`${JSON.stringify(event)}\n`);
    };
    const started = store.watch(fromRv, filter, send, { initialEventsEnd });
    if (!started.ok) {
      // The API server answers an expired watch with 200 and a single ERROR event, then closes.
      send({ type: 'ERROR', object: statusObject(410, 'Expired', started.message) });
      res.end();
      return;
    }
    this.watches.add(res);
    const timers: NodeJS.Timeout[] = [];
    const close = () => {
      started.cancel();
      for (const t of timers) clearTimeout(t);
      this.watches.delete(res);
    };
    if (bookmarks)
      timers.push(setInterval(() => send(store.bookmark()), this.o.bookmarkIntervalMs ?? 60_000));
    const timeout = Number(url.searchParams.get('timeoutSeconds') ?? 0);
    if (timeout > 0) {
      timers.push(
        setTimeout(() => {
          close();
          res.end();
        }, timeout * 1000),
      );
    }
    res.on('close', close);
    res.on('error', close);
    req.on('close', close);
  }

  private async createEvent(req: IncomingMessage, res: ServerResponse, namespace: string): Promise<void> {
    this.authorize(req);
    const body = await readJson(req);
    if (!body || typeof body !== 'object')
      throw new HttpError(400, 'BadRequest', 'the body of the request was in an unknown format');
    const event = body as Record<string, unknown> & { metadata?: Record<string, unknown> };
    const meta = event.metadata ?? {};
    if (meta['namespace'] !== undefined && meta['namespace'] !== namespace) {
      throw new HttpError(
        400,
        'BadRequest',
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    let name = typeof meta['name'] === 'string' ? meta['name'] : '';
    if (!name && typeof meta['generateName'] === 'string')
      name = `${meta['generateName']}${randomUUID().slice(0, 5)}`;
    if (!name)
      throw new HttpError(
        422,
        'Invalid',
        'Event "" is invalid: metadata.name: Required value: name or generateName is required',
      );
    if (!event['involvedObject'] || typeof event['involvedObject'] !== 'object') {
      throw new HttpError(422, 'Invalid', `Event "${name}" is invalid: involvedObject: Required value`);
    }
    if (this.o.backend.events.get(namespace, name))
      throw new HttpError(409, 'AlreadyExists', `events "${name}" already exists`);
    const stored = this.o.backend.events.upsert({
      ...event,
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { ...meta, name, namespace, uid: randomUUID(), creationTimestamp: kubeTime() },
    });
    json(res, 201, stored);
  }

  // --- Pod proxy ----------------------------------------------------------------------------

  /**
   * Resolves `/api/v1/namespaces/{ns}/pods/{name}[:port]/proxy/{path}` to the URL registered for the
   * pod (kubelet-sim's pods have no network: `podProxyTargets` stands in for the pod IP and port).
   * Like the API server, it authenticates the caller first and answers 404 for an unknown pod.
   */
  private proxyTarget(req: IncomingMessage, namespace: string, podAndPort: string, url: URL): URL {
    this.authorize(req);
    const name = podAndPort.split(':')[0]!;
    if (!this.o.backend.pods.get(namespace, name))
      throw new HttpError(404, 'NotFound', `pods "${name}" not found`);
    const base = this.o.podProxyTargets?.get(`${namespace}/${name}`);
    if (!base) {
      throw new HttpError(
        503,
        'ServiceUnavailable',
        `no endpoint for pod ${namespace}/${name} (kubelet-sim proxies only to podProxyTargets)`,
      );
    }
    const rest = POD_PROXY_PATH.exec(url.pathname)?.[3] ?? '/';
    const target = new URL(base);
    target.pathname = target.pathname.replace(/\/+$/, '') + rest;
    target.search = url.search;
    return target;
  }

  /** The API server forwards the request without the caller's credential or hop-by-hop headers. */
  private forwardHeaders(
    req: IncomingMessage,
    target: URL,
    upgrade: boolean,
  ): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    for (const [key, value] of Object.entries(req.headers)) {
      if (value === undefined || key === 'authorization' || key === 'host') continue;
      if (HOP_BY_HOP.has(key) && !(upgrade && (key === 'connection' || key === 'upgrade'))) continue;
      out[key] = value;
    }
    out.host = target.host;
    return out;
  }

  private proxy(req: IncomingMessage, res: ServerResponse, target: URL): Promise<void> {
    return new Promise((resolve, reject) => {
      const upstream = httpRequest(
        target,
        { method: req.method, headers: this.forwardHeaders(req, target, false) },
        (up) => {
          const headers = { ...up.headers };
          for (const h of HOP_BY_HOP) delete headers[h];
          res.writeHead(up.statusCode ?? 502, headers);
          up.pipe(res);
          up.on('end', () => resolve());
          up.on('error', () => {
            res.destroy();
            resolve();
          });
        },
      );
      upstream.on('error', (err: NodeJS.ErrnoException) =>
        reject(
          new HttpError(503, 'ServiceUnavailable', `error trying to reach pod: ${err.code ?? err.message}`),
        ),
      );
      req.pipe(upstream);
    });
  }

  /** WebSocket (or any) upgrade through the pod proxy: a byte pipe once the pod accepts. */
  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://localhost');
    const refuse = (err: unknown) => {
      const status = err instanceof HttpError ? err.status : PROBLEM_STATUS[KubeletSimError.from(err).code];
      const reason = err instanceof HttpError ? err.reason : KubeletSimError.from(err).reason;
      const body = JSON.stringify(statusObject(status, reason, (err as Error).message));
      socket.end(
        `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    };
    let target: URL;
    try {
      const m = POD_PROXY_PATH.exec(url.pathname);
      if (!m) throw notFound();
      target = this.proxyTarget(req, decodeURIComponent(m[1]!), decodeURIComponent(m[2]!), url);
    } catch (err) {
      return refuse(err);
    }
    let connected = false;
    const upstream = connect(Number(target.port || 80), target.hostname, () => {
      connected = true;
      const headers = this.forwardHeaders(req, target, true);
      const lines = Object.entries(headers).flatMap(([k, v]) =>
        (Array.isArray(v) ? v : [v]).map((x) => `${k}: ${x}`),
      );
      upstream.write(
        `${req.method ?? 'GET'} ${target.pathname}${target.search} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`,
      );
      if (head.length > 0) upstream.write(head);
      socket.pipe(upstream).pipe(socket);
    });
    this.upgraded.add(socket);
    this.upgraded.add(upstream);
    const close = () => {
      this.upgraded.delete(socket);
      this.upgraded.delete(upstream);
      socket.destroy();
      upstream.destroy();
    };
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      if (!connected) {
        this.upgraded.delete(socket);
        this.upgraded.delete(upstream);
        return refuse(
          new HttpError(503, 'ServiceUnavailable', `error trying to reach pod: ${err.code ?? err.message}`),
        );
      }
      close();
    });
    upstream.on('close', () => connected && close());
    socket.on('close', close);
  }

  // --- Control API --------------------------------------------------------------------------

  /**
   * GET /control/v1/state[?view=admissions]. `view=admissions` is the slice a gateway polls: the
   * managers' policies, the reserved CPUs and each pod's admission decision — it does not change
   * when device health or allocations do. Both views carry an ETag; a matching If-None-Match
   * answers 304 without a body.
   */
  private state(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const view = url.searchParams.get('view') ?? 'full';
    if (view !== 'full' && view !== 'admissions') {
      throw new HttpError(400, 'BadRequest', `view must be "full" or "admissions", got "${view}"`);
    }
    const body = view === 'full' ? this.o.backend.state() : this.o.backend.admissions();
    const data = JSON.stringify(body);
    const etag = `"${createHash('sha1').update(data).digest('base64url')}"`;
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, { ETag: etag });
      res.end();
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(data),
      ETag: etag,
    });
    res.end(data);
  }

  private async control(req: IncomingMessage, res: ServerResponse, parts: string[], url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    if (parts[0] !== 'v1') throw new KubeletSimError('NotFound', `no control endpoint ${req.url ?? ''}`);
    const route = parts.slice(1);
    if (method === 'GET' && route.join('/') === 'state') return this.state(req, res, url);
    // A dry run (the API server's ?dryRun=All, or /placement) answers where the pod would land or
    // why it would be refused (200 either way); it changes nothing, so it needs no token.
    if (
      method === 'POST' &&
      (route.join('/') === 'placement' ||
        (route.join('/') === 'pods' && url.searchParams.get('dryRun') === 'All'))
    ) {
      const override = topologyOverride(url.searchParams);
      return json(res, 200, await this.o.backend.dryRunPod(await readJson(req), override));
    }
    if (method === 'POST' && route.join('/') === 'pods') {
      this.authorize(req);
      const body = await readJson(req);
      const pod = await this.o.backend.admitPod(body);
      return json(res, 201, pod);
    }
    if (method === 'DELETE' && route[0] === 'pods' && route.length === 3) {
      this.authorize(req);
      await this.o.backend.deletePod(route[1]!, route[2]!);
      res.writeHead(204).end();
      return;
    }
    if (method === 'POST' && route.join('/') === 'restart') {
      this.authorize(req);
      await this.o.backend.restart();
      return json(res, 200, { restartedAt: new Date().toISOString() });
    }
    throw new KubeletSimError('NotFound', `no control endpoint ${method} /control/${parts.join('/')}`);
  }

  private authorize(req: IncomingMessage): void {
    if (!this.o.token) return;
    const header = req.headers.authorization ?? '';
    const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7) : '');
    const want = Buffer.from(this.o.token);
    if (given.length !== want.length || !timingSafeEqual(given, want)) {
      throw new KubeletSimError('Unauthorized', 'a valid bearer token is required for this request');
    }
  }

  /** One translation point: Kubernetes Status for the API slice, problem+json for control. */
  private fail(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    if (res.headersSent) {
      res.end();
      return;
    }
    const isControl = (req.url ?? '').startsWith('/control/');
    if (err instanceof HttpError) {
      if (isControl) return problem(res, err.status, err.reason, err.reason, err.message, req.url);
      return json(res, err.status, statusObject(err.status, err.reason, err.message));
    }
    const e = KubeletSimError.from(err);
    const status = PROBLEM_STATUS[e.code];
    if (status >= 500) this.log.error({ err: e.message, path: req.url }, 'request failed');
    if (isControl) return problem(res, status, e.code, e.reason, e.message, req.url);
    return json(res, status, statusObject(status, e.reason, e.message));
  }
}

/** `?topologyManagerPolicy=…&topologyManagerScope=…` of a dry run; 400 naming a bad value. */
function topologyOverride(params: URLSearchParams): TopologyOverride {
  const policy = params.get('topologyManagerPolicy');
  const scope = params.get('topologyManagerScope');
  const out: TopologyOverride = {};
  if (policy !== null) {
    const p = TOPOLOGY_MANAGER_POLICIES.find((x) => x === policy);
    if (!p)
      throw new HttpError(
        400,
        'BadRequest',
        `topologyManagerPolicy: expected one of ${TOPOLOGY_MANAGER_POLICIES.join(', ')}, got "${policy.slice(0, 40)}"`,
      );
    out.policy = p;
  }
  if (scope !== null) {
    const s = TOPOLOGY_MANAGER_SCOPES.find((x) => x === scope);
    if (!s)
      throw new HttpError(
        400,
        'BadRequest',
        `topologyManagerScope: expected one of ${TOPOLOGY_MANAGER_SCOPES.join(', ')}, got "${scope.slice(0, 40)}"`,
      );
    out.scope = s;
  }
  return out;
}

function notFound(): HttpError {
  return new HttpError(404, 'NotFound', 'the server could not find the requested resource');
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) });
  res.end(data);
}

function text(res: ServerResponse, status: number, body: string): void {
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
function problem(
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

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new HttpError(413, 'RequestEntityTooLarge', 'request body too large');
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new HttpError(400, 'BadRequest', 'request body is not valid JSON');
  }
}

function apiResourceList(): Record<string, unknown> {
  const r = (name: string, kind: string, namespaced: boolean, verbs: string[]) => ({
    name,
    singularName: kind.toLowerCase(),
    namespaced,
    kind,
    verbs,
  });
  return {
    kind: 'APIResourceList',
    groupVersion: 'v1',
    resources: [
      r('nodes', 'Node', false, ['get', 'list', 'watch']),
      r('pods', 'Pod', true, ['get', 'list', 'watch']),
      r('events', 'Event', true, ['create', 'get', 'list', 'watch']),
    ],
  };
}
