// The simulator's control API under /control/v1/ (Plugboard's own, no upstream counterpart): admit,
// dry-run and delete pods, restart the kubelet, read the device-manager state. Errors are answered
// as application/problem+json by the server's one translation point.

import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { KubeletSimError } from '../errors.js';
import {
  TOPOLOGY_MANAGER_POLICIES,
  TOPOLOGY_MANAGER_SCOPES,
  type TopologyOverride,
} from '@plugboard/topology';
import { HttpError, json, readJson } from './http.js';

export interface ControlBackend {
  admitPod(pod: unknown): Promise<unknown>;
  dryRunPod(pod: unknown, override: TopologyOverride): Promise<unknown>;
  deletePod(namespace: string, name: string): Promise<void>;
  restart(): Promise<void>;
  state(): unknown;
  /** The managers' policies, reserved CPUs and each pod's admission decision (what a gateway polls). */
  admissions(): unknown;
}

export class ControlApi {
  constructor(
    /** The connected kubelet (throws a 503 when there is none). */
    private readonly backend: () => ControlBackend,
    /** Throws when the request lacks the bearer token. */
    private readonly authorize: (req: IncomingMessage) => void,
  ) {}

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
    const body = view === 'full' ? this.backend().state() : this.backend().admissions();
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

  async handle(req: IncomingMessage, res: ServerResponse, parts: string[], url: URL): Promise<void> {
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
      return json(res, 200, await this.backend().dryRunPod(await readJson(req), override));
    }
    if (method === 'POST' && route.join('/') === 'pods') {
      this.authorize(req);
      const body = await readJson(req);
      const pod = await this.backend().admitPod(body);
      return json(res, 201, pod);
    }
    if (method === 'DELETE' && route[0] === 'pods' && route.length === 3) {
      this.authorize(req);
      await this.backend().deletePod(route[1]!, route[2]!);
      res.writeHead(204).end();
      return;
    }
    if (method === 'POST' && route.join('/') === 'restart') {
      this.authorize(req);
      await this.backend().restart();
      return json(res, 200, { restartedAt: new Date().toISOString() });
    }
    throw new KubeletSimError('NotFound', `no control endpoint ${method} /control/${parts.join('/')}`);
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
