// A small stand-in for the Kubernetes API server, written for the DRA tests (a real HTTP server on
// port 0): it serves Nodes (read), ResourceClaims (read, stored by the test) and ResourceSlices of
// resource.k8s.io/v1 (list with field selectors, create with generateName, update with a
// resourceVersion check, delete with UID/resourceVersion preconditions), validates what a driver
// writes against the v1 rules a driver can break (device names, device count per slice, required
// pool fields), stores the JSON as received but for device taint times (stored in whole seconds,
// and one left out gets the current second of the fake's clock on every create and update, as
// SetDefaults_DeviceTaint has the API server do it), counts requests, and can fail the next
// requests on demand. It writes a kubeconfig pointing at itself for @kubernetes/client-node.
import { EventEmitter, once } from 'node:events';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResourceClaim, ResourceSlice } from '../../src/dra/api-types.js';

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
}

interface Failure {
  status: number;
  match: (req: RecordedRequest) => boolean;
}

const SLICES = '/apis/resource.k8s.io/v1/resourceslices';
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function status(code: number, reason: string, message: string): object {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

/** The validation rules of ResourceSlice v1 a publisher could get wrong; messages like the API server's. */
function invalidSlice(slice: ResourceSlice): string | null {
  const spec = slice.spec as Partial<ResourceSlice['spec']> | undefined;
  if (!spec?.driver) return 'spec.driver: Required value';
  if (!spec.pool?.name) return 'spec.pool.name: Required value';
  if (!(Number(spec.pool.resourceSliceCount) > 0))
    return 'spec.pool.resourceSliceCount: must be greater than zero';
  if (!spec.nodeName) return 'spec.nodeName: Required value (this fake serves node-local slices only)';
  const devices = spec.devices ?? [];
  const tainted = devices.some((d) => (d.taints?.length ?? 0) > 0);
  const max = tainted ? 64 : 128;
  if (devices.length > max)
    return `spec.devices: Too many: ${devices.length}: must have at most ${max} items`;
  for (const [i, d] of devices.entries()) {
    if (!DNS_LABEL.test(d.name) || d.name.length > 63)
      return `spec.devices[${i}].name: Invalid value: "${d.name}"`;
    for (const [key, value] of Object.entries(d.attributes ?? {})) {
      if (Object.keys(value).length !== 1)
        return `spec.devices[${i}].attributes[${key}]: exactly one value must be set`;
    }
    for (const [j, t] of (d.taints ?? []).entries()) {
      if (!['NoSchedule', 'NoExecute', 'None'].includes(t.effect))
        return `spec.devices[${i}].taints[${j}].effect: Unsupported value: "${t.effect}"`;
    }
  }
  return null;
}

const wholeSeconds = (d: Date): string => d.toISOString().replace(/\.\d+Z$/, 'Z');

/**
 * Device taint times as the API server stores them: one left out gets `now` (SetDefaults_DeviceTaint),
 * and every one is RFC 3339 in whole seconds (metav1.Time; client-node sends milliseconds).
 */
function withTaintTimes(slice: ResourceSlice, now: Date): ResourceSlice {
  const devices = slice.spec.devices;
  if (!devices?.some((d) => d.taints)) return slice;
  return {
    ...slice,
    spec: {
      ...slice.spec,
      devices: devices.map((d) =>
        d.taints
          ? {
              ...d,
              taints: d.taints.map((t) => ({
                ...t,
                timeAdded: wholeSeconds(t.timeAdded ? new Date(t.timeAdded) : now),
              })),
            }
          : d,
      ),
    },
  };
}

export class FakeApiServer extends EventEmitter<{ request: [RecordedRequest]; change: [] }> {
  readonly requests: RecordedRequest[] = [];
  /** TCP connections accepted (a client that keeps its connections makes one). */
  connections = 0;
  readonly claims = new Map<string, ResourceClaim>();
  readonly slices = new Map<string, ResourceSlice>();
  readonly nodes = new Map<string, { uid: string }>();
  /** The clock device taints are stamped with. */
  now: () => Date = () => new Date();
  url = '';
  kubeconfigPath = '';
  #server: Server | null = null;
  #dir = '';
  #failures: Failure[] = [];
  #resourceVersion = 0;

  static async start(): Promise<FakeApiServer> {
    const api = new FakeApiServer();
    await api.#listen();
    return api;
  }

  async #listen(): Promise<void> {
    const server = createServer((req, res) => void this.#handle(req, res));
    server.keepAliveTimeout = 60_000;
    server.on('connection', () => this.connections++);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    this.#server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    this.#dir = await mkdtemp(join(tmpdir(), 'pb-fake-api-'));
    this.kubeconfigPath = join(this.#dir, 'kubeconfig');
    await writeFile(
      this.kubeconfigPath,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{ name: fake, cluster: { server: "' + this.url + '" } }]',
        'users: [{ name: driver, user: { token: test-token } }]',
        'contexts: [{ name: fake, context: { cluster: fake, user: driver } }]',
        'current-context: fake',
        '',
      ].join('\n'),
    );
  }

  addNode(name: string): string {
    const uid = randomUUID();
    this.nodes.set(name, { uid });
    return uid;
  }

  putClaim(claim: ResourceClaim): void {
    this.claims.set(`${claim.metadata.namespace}/${claim.metadata.name}`, claim);
  }

  /** Fails the next `count` requests matching `match` with HTTP `status` (and a Status body). */
  failNext(count: number, statusCode = 500, match: (req: RecordedRequest) => boolean = () => true): void {
    for (let i = 0; i < count; i++) this.#failures.push({ status: statusCode, match });
  }

  /** Requests since `from` (an index into `requests`) whose method and path match. */
  count(method: string, pathPrefix: string, from = 0): number {
    return this.requests.slice(from).filter((r) => r.method === method && r.path.startsWith(pathPrefix))
      .length;
  }

  /** The stored slices of a driver, sorted by name. */
  slicesOf(driver: string): ResourceSlice[] {
    return [...this.slices.values()]
      .filter((s) => s.spec.driver === driver)
      .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  }

  /** Resolves once `predicate` holds for the stored state (checked now and after every change). */
  async waitFor<T>(predicate: () => T | undefined | null | false, timeoutMs = 5000): Promise<T> {
    const signal = AbortSignal.timeout(timeoutMs);
    for (;;) {
      const value = predicate();
      if (value) return value;
      await once(this, 'change', { signal });
    }
  }

  async stop(): Promise<void> {
    if (this.#server) {
      this.#server.closeAllConnections();
      await new Promise<void>((resolve) => this.#server?.close(() => resolve()));
    }
    this.#server = null;
    await rm(this.#dir, { recursive: true, force: true });
  }

  #nextVersion(): string {
    return String(++this.#resourceVersion);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', this.url);
    let body: unknown = undefined;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        return this.#send(res, 400, status(400, 'BadRequest', 'the body is not JSON'));
      }
    }
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      body,
    };
    this.requests.push(recorded);
    this.emit('request', recorded);
    const failure = this.#failures.findIndex((f) => f.match(recorded));
    if (failure >= 0) {
      const { status: code } = this.#failures.splice(failure, 1)[0]!;
      return this.#send(res, code, status(code, 'InternalError', 'injected failure'));
    }
    const [code, payload] = this.#route(recorded);
    this.#send(res, code, payload);
  }

  #send(res: ServerResponse, code: number, payload: unknown): void {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(payload));
  }

  #route(r: RecordedRequest): [number, unknown] {
    const node = /^\/api\/v1\/nodes\/([^/]+)$/.exec(r.path);
    if (node && r.method === 'GET') {
      const found = this.nodes.get(node[1]!);
      if (!found) return [404, status(404, 'NotFound', `nodes "${node[1]}" not found`)];
      return [200, { apiVersion: 'v1', kind: 'Node', metadata: { name: node[1], uid: found.uid } }];
    }
    const claim = /^\/apis\/resource\.k8s\.io\/v1\/namespaces\/([^/]+)\/resourceclaims\/([^/]+)$/.exec(
      r.path,
    );
    if (claim && r.method === 'GET') {
      const found = this.claims.get(`${claim[1]}/${claim[2]}`);
      if (!found)
        return [404, status(404, 'NotFound', `resourceclaims.resource.k8s.io "${claim[2]}" not found`)];
      return [
        200,
        { apiVersion: 'resource.k8s.io/v1', kind: 'ResourceClaim', spec: { devices: {} }, ...found },
      ];
    }
    if (r.path === SLICES && r.method === 'GET') return [200, this.#list(r.query.get('fieldSelector') ?? '')];
    if (r.path === SLICES && r.method === 'POST') return this.#create(r.body as ResourceSlice);
    const one = new RegExp(`^${SLICES}/([^/]+)$`).exec(r.path);
    if (one && r.method === 'PUT') return this.#update(one[1]!, r.body as ResourceSlice);
    if (one && r.method === 'DELETE') return this.#delete(one[1]!, r.body);
    if (one && r.method === 'GET') {
      const found = this.slices.get(one[1]!);
      return found ? [200, found] : [404, status(404, 'NotFound', `resourceslices "${one[1]}" not found`)];
    }
    return [404, status(404, 'NotFound', `the fake API server does not serve ${r.method} ${r.path}`)];
  }

  #list(fieldSelector: string): object {
    const wanted = fieldSelector
      .split(',')
      .filter(Boolean)
      .map((term) => term.split(/==?/) as [string, string]);
    const items = [...this.slices.values()].filter((s) =>
      wanted.every(([field, value]) => {
        if (field === 'spec.driver') return s.spec.driver === value;
        if (field === 'spec.nodeName') return (s.spec.nodeName ?? '') === value;
        return false;
      }),
    );
    return {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceSliceList',
      metadata: { resourceVersion: String(this.#resourceVersion) },
      items,
    };
  }

  #create(slice: ResourceSlice): [number, unknown] {
    const invalid = invalidSlice(slice);
    if (invalid) return [422, status(422, 'Invalid', `ResourceSlice is invalid: ${invalid}`)];
    const name =
      slice.metadata.name ??
      `${slice.metadata.generateName ?? ''}${randomBytes(3).toString('hex').slice(0, 5)}`;
    if (this.slices.has(name))
      return [409, status(409, 'AlreadyExists', `resourceslices "${name}" already exists`)];
    const stored: ResourceSlice = {
      ...withTaintTimes(slice, this.now()),
      metadata: { ...slice.metadata, name, uid: randomUUID(), resourceVersion: this.#nextVersion() },
    };
    this.slices.set(name, stored);
    this.emit('change');
    return [201, stored];
  }

  #update(name: string, slice: ResourceSlice): [number, unknown] {
    const current = this.slices.get(name);
    if (!current) return [404, status(404, 'NotFound', `resourceslices "${name}" not found`)];
    if (slice.metadata.resourceVersion !== current.metadata.resourceVersion) {
      return [
        409,
        status(
          409,
          'Conflict',
          `Operation cannot be fulfilled on resourceslices "${name}": the object has been modified`,
        ),
      ];
    }
    const invalid = invalidSlice(slice);
    if (invalid) return [422, status(422, 'Invalid', `ResourceSlice "${name}" is invalid: ${invalid}`)];
    const stored: ResourceSlice = {
      ...withTaintTimes(slice, this.now()),
      metadata: { ...slice.metadata, uid: current.metadata.uid, resourceVersion: this.#nextVersion() },
    };
    this.slices.set(name, stored);
    this.emit('change');
    return [200, stored];
  }

  #delete(name: string, body: unknown): [number, unknown] {
    const current = this.slices.get(name);
    if (!current) return [404, status(404, 'NotFound', `resourceslices "${name}" not found`)];
    const pre = (body as { preconditions?: { uid?: string; resourceVersion?: string } } | undefined)
      ?.preconditions;
    if (
      (pre?.uid && pre.uid !== current.metadata.uid) ||
      (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion)
    ) {
      return [409, status(409, 'Conflict', `Precondition failed for resourceslices "${name}"`)];
    }
    this.slices.delete(name);
    this.emit('change');
    return [200, current];
  }
}

/** An allocated ResourceClaim as the scheduler leaves it for a node-local driver. */
export function allocatedClaim(options: {
  namespace?: string;
  name: string;
  uid?: string;
  node: string;
  results: {
    driver: string;
    pool: string;
    device: string;
    request?: string;
    shareID?: string;
    adminAccess?: boolean;
  }[];
}): ResourceClaim {
  return {
    metadata: {
      namespace: options.namespace ?? 'default',
      name: options.name,
      uid: options.uid ?? randomUUID(),
    },
    status: {
      allocation: {
        devices: {
          results: options.results.map((r) => ({
            request: r.request ?? 'gpu',
            driver: r.driver,
            pool: r.pool,
            device: r.device,
            ...(r.shareID ? { shareID: r.shareID } : {}),
            ...(r.adminAccess ? { adminAccess: true } : {}),
          })),
        },
        nodeSelector: {
          nodeSelectorTerms: [
            { matchFields: [{ key: 'metadata.name', operator: 'In', values: [options.node] }] },
          ],
        },
      },
    },
  };
}
