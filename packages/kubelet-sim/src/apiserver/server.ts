// The API server slice (what kube-apiserver of Kubernetes 1.37 serves for the kinds in
// resources.ts, in real Kubernetes JSON: get, list, watch with field and label selectors,
// bookmarks, 410 for expired versions; POST events; SelfSubject*Reviews; pods/log; the pod proxy
// in pod-proxy.ts) that kubectl and @kubernetes/client-node talk to unchanged. A verb a resource
// does not allow is answered 405 MethodNotAllowed like the API server's. The same listener serves
// the simulator's control API (control-api.ts) under /control/v1/. Errors are translated once: a
// Kubernetes Status for the API, problem+json for control.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { KubeletSimError } from '../errors.js';
import { kubeTime } from '../util/kube-time.js';
import { SIMULATED_KUBELET_VERSION, SIMULATED_KUBERNETES_VERSION } from '../nodestatus/setters.js';
import { selfSubjectAccessReview, selfSubjectRulesReview } from './authorization.js';
import { ControlApi } from './control-api.js';
import { discovery } from './discovery.js';
import { openApi } from './openapi/index.js';
import type { KubeletClient } from './kubelet-client.js';
import { HttpError, json, notFound, PROBLEM_STATUS, problem, readJson, statusObject, text } from './http.js';
import type { ObjectFilter, ObjectStore, WatchEvent } from './object-store.js';
import { servePodLog } from './pod-log.js';
import { readObject } from './protobuf.js';
import { PodProxy } from './pod-proxy.js';
import { findResource, storeKey, type ResourceInfo, type Verb } from './resources.js';
import { PATCH_TYPES, RestStorage, unsupportedPatch, type RestStrategy } from './rest-storage.js';
import { parseFieldSelector, parseLabelSelector, SelectorError } from './selectors.js';
import { tableRequest, toTable, watchTableTransform } from './tables.js';

export interface ApiBackend {
  /** One store per served resource with objects, keyed `${group}/${resource}` (`/pods`, `coordination.k8s.io/leases`). */
  stores: ReadonlyMap<string, ObjectStore>;
  /** What the resources clients may write validate, default and answer, keyed like `stores`. */
  strategies?: ReadonlyMap<string, RestStrategy>;
  /** The node's kubelet: pod logs, the node proxy's configz and the control API go to it. */
  kubelet: KubeletClient;
}

export { storeKey };

/** A request path below `/api/v1` or `/apis/{group}/{version}`, split as the API server routes it. */
interface ResourcePath {
  group: string;
  version: string;
  namespace: string | undefined;
  resource: string;
  name: string | undefined;
  subresource: string | undefined;
  subpath: string[];
}

function parseResourcePath(parts: string[]): ResourcePath | null {
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else {
    return null;
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, subresource, ...subpath] = rest;
  if (!resource) return null;
  return { group, version, namespace, resource, name, subresource, subpath };
}

function verbOf(method: string, named: boolean, url: URL): Verb | null {
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (named) return 'get';
      return ['true', '1'].includes(url.searchParams.get('watch') ?? '') ? 'watch' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      return null;
  }
}

/** What kube-apiserver answers for a verb a resource's REST storage does not implement. */
function methodNotAllowed(): HttpError {
  return new HttpError(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
    {},
  );
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
  /** Serve the control API under /control/v1/ (default true); false answers 404 there, as a real API server. */
  controlApi?: boolean;
  logger: Logger;
}

const MAX_WATCH_BACKLOG = 16 * 1024 * 1024;

export class ApiServer {
  private server: Server | null = null;
  private readonly watches = new Set<ServerResponse>();
  private readonly storages = new Map<string, RestStorage>();
  private readonly podProxy: PodProxy;
  private readonly controlApi: ControlApi;
  private readonly log: Logger;
  url = '';

  constructor(private readonly o: ApiServerOptions) {
    this.log = o.logger.child({ component: 'api-server' });
    const authorize = (req: IncomingMessage) => this.authorize(req);
    this.podProxy = new PodProxy({
      pods: o.backend.stores.get(storeKey('', 'pods'))!,
      targets: o.podProxyTargets,
      authorize,
    });
    this.controlApi = new ControlApi(() => o.backend.kubelet.required(), authorize);
  }

  async start(): Promise<string> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => this.fail(req, res, err));
    });
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.podProxy.upgrade(req, socket, head),
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
    this.podProxy.stop();
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
    if (parts[0] === 'control' && this.o.controlApi !== false)
      return this.controlApi.handle(req, res, parts.slice(1), url);
    return this.kube(req, res, parts, url);
  }

  // --- Kubernetes API slice -----------------------------------------------------------------

  private async kube(req: IncomingMessage, res: ServerResponse, parts: string[], url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const path = parts.join('/');
    if (method === 'GET' && ['healthz', 'livez', 'readyz'].includes(path)) return text(res, 200, 'ok');
    if (method === 'GET' && path === 'version') {
      const [major, minor] = SIMULATED_KUBERNETES_VERSION.slice(1).split('.');
      return json(res, 200, {
        major,
        minor,
        gitVersion: SIMULATED_KUBELET_VERSION,
        platform: `linux/${process.arch === 'x64' ? 'amd64' : process.arch}`,
      });
    }
    // Discovery (legacy and aggregated) and the OpenAPI documents, built from resources.ts.
    const doc =
      discovery(method, path, req.headers.accept, { ifNoneMatch: req.headers['if-none-match'] }) ??
      openApi(method, path, req.headers.accept, {
        query: url.searchParams,
        ifNoneMatch: req.headers['if-none-match'],
      });
    if (doc) {
      res.writeHead(doc.status, {
        ...(doc.contentType ? { 'Content-Type': doc.contentType } : {}),
        ...doc.headers,
      });
      res.end(doc.serialized);
      return;
    }
    const route = parseResourcePath(parts);
    if (!route) throw notFound();
    const info = findResource(route.group, route.version, route.resource);
    if (!info || (!info.namespaced && route.namespace !== undefined)) throw notFound();
    if (route.subresource !== undefined) return this.subresource(req, res, info, route, url);
    if (route.subpath.length > 0) throw notFound();
    const verb = verbOf(method, route.name !== undefined, url);
    if (!verb || !info.verbs.includes(verb)) throw methodNotAllowed();
    const storage = this.storage(info);
    if (storage && !['get', 'list', 'watch'].includes(verb))
      return this.write(req, res, storage, verb, route, url, false);
    if (verb === 'create') return this.create(req, res, info, route.namespace);
    if (verb === 'delete' && info.resource === 'pods') return this.deletePod(req, res, route);
    const store = this.o.backend.stores.get(storeKey(info.group, info.resource));
    if (!store) throw notFound();
    // kubectl asks for server-side Tables (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`).
    const table = tableRequest(req.headers.accept, url.searchParams);
    if (verb === 'get') {
      const obj = info.namespaced
        ? route.namespace !== undefined
          ? store.get(route.namespace, route.name!)
          : undefined
        : store.get(undefined, route.name!);
      if (!obj) {
        throw new HttpError(
          404,
          'NotFound',
          `${info.resource}${info.group ? `.${info.group}` : ''} "${route.name}" not found`,
          {
            name: route.name,
            ...(info.group ? { group: info.group } : {}),
            kind: info.resource,
          },
        );
      }
      if (table)
        return json(
          res,
          200,
          toTable(info, [obj], table, { resourceVersion: obj.metadata.resourceVersion ?? '' }, new Date()),
        );
      return json(res, 200, obj);
    }
    const filter = this.filterFor(store, route.namespace, url);
    if (verb === 'watch')
      return this.watch(req, res, store, filter, url, table ? watchTableTransform(info, table) : null);
    if (url.searchParams.get('resourceVersionMatch') === 'Exact') {
      const rv = Number(url.searchParams.get('resourceVersion'));
      if (rv < store.oldestResourceVersion())
        throw new HttpError(410, 'Expired', 'The resourceVersion for the provided list is too old.');
    }
    const list = store.list(filter);
    if (table)
      return json(
        res,
        200,
        toTable(info, list.items, table, { resourceVersion: list.resourceVersion }, new Date()),
      );
    return json(res, 200, {
      kind: store.listKind,
      apiVersion: store.apiVersion,
      metadata: { resourceVersion: list.resourceVersion },
      // List items carry no kind/apiVersion, as the API server serves them.
      items: list.items.map(({ kind: _k, apiVersion: _a, ...item }) => item),
    });
  }

  /** `pods/{name}/log`, `pods/{name}/proxy`, `nodes/{name}/proxy`; any other subresource is unknown (404). */
  private subresource(
    req: IncomingMessage,
    res: ServerResponse,
    info: ResourceInfo,
    route: ResourcePath,
    url: URL,
  ): Promise<void> | void {
    const sub = info.subresources.find((s) => s.name === route.subresource);
    if (!sub || route.name === undefined || (info.namespaced && route.namespace === undefined))
      throw notFound();
    const method = req.method ?? 'GET';
    if (info.resource === 'pods' && sub.name === 'proxy')
      return this.podProxy.proxy(req, res, this.podProxy.target(req, route.namespace!, route.name, url));
    const verb = verbOf(method, true, url);
    if (!verb || !sub.verbs.includes(verb)) throw methodNotAllowed();
    const storage = sub.name === 'status' ? this.storage(info) : undefined;
    if (storage) {
      if (verb === 'get') return json(res, 200, storage.get(route.namespace, route.name));
      return this.write(req, res, storage, verb, route, url, true);
    }
    if (info.resource === 'nodes' && sub.name === 'proxy') return this.nodeProxy(res, route);
    if (info.resource === 'pods' && sub.name === 'log' && route.subpath.length === 0)
      return servePodLog(
        req,
        res,
        (namespace, name) => this.o.backend.kubelet.current()?.containersOf(namespace, name),
        route.namespace!,
        route.name,
        url.searchParams,
      );
    throw notFound();
  }

  /**
   * `nodes/{name}/proxy/…`: the API server forwards to that node's kubelet, whose server here has one
   * path, `configz`; any other path is the kubelet's plain-text 404.
   */
  private nodeProxy(res: ServerResponse, route: ResourcePath): void {
    if (!this.o.backend.stores.get(storeKey('', 'nodes'))?.get(undefined, route.name!))
      throw new HttpError(404, 'NotFound', `nodes "${route.name}" not found`, {
        name: route.name,
        kind: 'nodes',
      });
    if (route.subpath.join('/') === 'configz')
      return json(res, 200, this.o.backend.kubelet.required().configz());
    return text(res, 404, '404 page not found\n');
  }

  /** The write path of a resource clients may write (its verbs include create), or undefined. */
  private storage(info: ResourceInfo): RestStorage | undefined {
    if (!info.verbs.includes('update')) return undefined;
    const key = storeKey(info.group, info.resource);
    let storage = this.storages.get(key);
    if (!storage) {
      const store = this.o.backend.stores.get(key);
      if (!store) return undefined;
      storage = new RestStorage(info, store, this.o.backend.strategies?.get(key) ?? { validate: () => [] });
      this.storages.set(key, storage);
    }
    return storage;
  }

  /** create, update, patch, delete, deletecollection (of the object or its status), with the token. */
  private async write(
    req: IncomingMessage,
    res: ServerResponse,
    storage: RestStorage,
    verb: Verb,
    route: ResourcePath,
    url: URL,
    status: boolean,
  ): Promise<void> {
    this.authorize(req);
    const ns = route.namespace;
    if (storage.info.namespaced && ns === undefined && verb !== 'deletecollection') throw methodNotAllowed();
    switch (verb) {
      case 'create':
        return json(res, 201, storage.create(ns, await readObject(req)));
      case 'update':
        return json(res, 200, storage.update(ns, route.name!, await readObject(req), status));
      case 'patch': {
        const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
        if (!(PATCH_TYPES as readonly string[]).includes(type)) throw unsupportedPatch();
        return json(res, 200, storage.patch(ns, route.name!, type, await readJson(req), status));
      }
      case 'delete':
        return json(res, 200, storage.delete(ns, route.name!));
      case 'deletecollection': {
        const deleted = storage.deleteCollection(this.filterFor(storage.store, ns, url));
        return json(res, 200, {
          kind: storage.store.listKind,
          apiVersion: storage.store.apiVersion,
          metadata: {},
          items: deleted.map(({ kind: _k, apiVersion: _a, ...item }) => item),
        });
      }
      default:
        throw methodNotAllowed();
    }
  }

  /** `create`: Events (with the token), and the SelfSubject*Reviews (open to every caller). */
  private async create(
    req: IncomingMessage,
    res: ServerResponse,
    info: ResourceInfo,
    namespace: string | undefined,
  ): Promise<void> {
    if (info.resource === 'events') {
      if (namespace === undefined) throw methodNotAllowed();
      return this.createEvent(req, res, namespace);
    }
    if (info.resource === 'pods') {
      if (namespace === undefined) throw methodNotAllowed();
      return this.createPod(req, res, namespace);
    }
    const body = await readObject(req);
    const caller = { mayWrite: this.mayWrite(req) };
    if (info.resource === 'selfsubjectaccessreviews')
      return json(res, 201, selfSubjectAccessReview(body, caller));
    if (info.resource === 'selfsubjectrulesreviews')
      return json(res, 201, selfSubjectRulesReview(body, caller));
    throw methodNotAllowed();
  }

  /**
   * `create` of a Pod (with the token): stored, then scheduled and admitted the way the control API's
   * `POST /control/v1/pods` does it. As on kube-apiserver the answer is the stored Pod (201) also when
   * the kubelet then rejects it (the Pod is Failed with the kubelet's reason); a Pod that does not
   * validate is refused and not stored.
   */
  private async createPod(req: IncomingMessage, res: ServerResponse, namespace: string): Promise<void> {
    this.authorize(req);
    const read = await readObject(req);
    if (read === null || typeof read !== 'object' || Array.isArray(read))
      throw new HttpError(400, 'BadRequest', 'the body of the request is not a Pod object');
    const body = read as Record<string, unknown>;
    const metadata = (body['metadata'] ?? {}) as Record<string, unknown>;
    if (metadata['namespace'] !== undefined && metadata['namespace'] !== namespace)
      throw new HttpError(
        400,
        'BadRequest',
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    const pod = { ...body, metadata: { ...metadata, namespace } };
    const pods = this.o.backend.stores.get(storeKey('', 'pods'))!;
    const name = typeof metadata['name'] === 'string' ? metadata['name'] : '';
    try {
      await this.o.backend.kubelet.required().admitPod(pod);
    } catch (err) {
      const stored = pods.get(namespace, name);
      // Refused before it was stored (invalid, already exists): the API server's error.
      if (!stored || (err instanceof KubeletSimError && err.code === 'AlreadyExists')) throw err;
    }
    return json(res, 201, pods.get(namespace, name));
  }

  /**
   * `delete` of a Pod (with the token): the kubelet stops its containers, unprepares its claims and
   * the object goes at once (no grace period, no deletionTimestamp); the answer is the Pod as it
   * was, as kube-apiserver answers an immediate deletion.
   */
  private async deletePod(req: IncomingMessage, res: ServerResponse, route: ResourcePath): Promise<void> {
    this.authorize(req);
    const namespace = route.namespace!;
    const name = route.name!;
    const pod = this.o.backend.stores.get(storeKey('', 'pods'))!.get(namespace, name);
    if (!pod) throw new HttpError(404, 'NotFound', `pods "${name}" not found`, { name, kind: 'pods' });
    await this.o.backend.kubelet.required().deletePod(namespace, name);
    return json(res, 200, pod);
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
    /** Turns each event's object into a one-row Table (a watch that asked for Tables). */
    transform: ((object: unknown, now: Date) => unknown) | null,
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
      const out = transform ? { type: event.type, object: transform(event.object, new Date()) } : event;
      res.write(`${JSON.stringify(out)}\n`);
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
    const events = this.o.backend.stores.get(storeKey('', 'events'))!;
    if (events.get(namespace, name))
      throw new HttpError(409, 'AlreadyExists', `events "${name}" already exists`);
    const stored = events.upsert({
      ...event,
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { ...meta, name, namespace, uid: randomUUID(), creationTimestamp: kubeTime() },
    });
    json(res, 201, stored);
  }

  /** True when no token is configured or the request carries it. */
  private mayWrite(req: IncomingMessage): boolean {
    if (!this.o.token) return true;
    const header = req.headers.authorization ?? '';
    const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7) : '');
    const want = Buffer.from(this.o.token);
    return given.length === want.length && timingSafeEqual(given, want);
  }

  private authorize(req: IncomingMessage): void {
    if (!this.mayWrite(req))
      throw new KubeletSimError('Unauthorized', 'a valid bearer token is required for this request');
  }

  /** One translation point: Kubernetes Status for the API slice, problem+json for control. */
  private fail(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    if (res.headersSent) {
      res.end();
      return;
    }
    const isControl = this.o.controlApi !== false && (req.url ?? '').startsWith('/control/');
    if (err instanceof HttpError) {
      if (isControl) return problem(res, err.status, err.reason, err.reason, err.message, req.url);
      return json(res, err.status, statusObject(err.status, err.reason, err.message, err.details));
    }
    const e = KubeletSimError.from(err);
    const status = PROBLEM_STATUS[e.code];
    if (status >= 500) this.log.error({ err: e.message, path: req.url }, 'request failed');
    if (isControl) return problem(res, status, e.code, e.reason, e.message, req.url);
    return json(res, status, statusObject(status, e.reason, e.message));
  }
}
