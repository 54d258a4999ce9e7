// The gateway's HTTP contract (docs/API.md): routing, the REST handlers and the WebSocket upgrade
// checks. Transport only: state lives in the model, the fault store and the scenario runner.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config.js';
import type { NodeModel } from '../model/node-model.js';
import { faultBodySchema, podBodySchema, scenarioBodySchema, type NodeSnapshot } from '@plugboard/api';
import type { FaultStore } from '../faults/fault-store.js';
import type { ScenarioRunner } from '../faults/scenarios.js';
import { GatewayError } from '../errors.js';
import { originAllowed, type Authorizer } from './auth.js';
import { parseBody } from './body.js';
import { createRateLimiter } from './rate-limit.js';
import type { GatewayMetrics } from './metrics.js';
import { problemOf, problemResponseText, sendProblem } from './problem.js';
import type { StreamHub } from './stream.js';
import type { KubeletControl } from '../sources/kubelet-control.js';
import type { NodeHistoryStore } from '../model/history.js';
import { parseHistoryQuery } from './history-query.js';

export interface HttpContext {
  config: GatewayConfig;
  model: NodeModel;
  faults: FaultStore;
  scenarios: ScenarioRunner;
  authorizer: Authorizer;
  hub: StreamHub;
  metrics: GatewayMetrics;
  logger: Logger;
  /** "Try to place" through a kubelet-sim (null when there is none behind the kubeconfig). */
  placement?: Pick<KubeletControl, 'forward'> | null;
  /** The bounded history (null when gateway.history.enabled is false). */
  history?: NodeHistoryStore | null;
  readiness(): { ready: boolean; detail: string };
}

function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  sendSerialized(res, status, JSON.stringify(value), headers);
}

function sendSerialized(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(body);
}

function methodNotAllowed(allow: string[]): never {
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
function requestUrl(raw: string | undefined): URL | null {
  const target = raw ?? '/';
  try {
    return target.startsWith('/') ? new URL(`http://gateway${target}`) : new URL(target, 'http://gateway');
  } catch {
    return null;
  }
}

const BAD_TARGET = new GatewayError('bad-request', 'the request target is not a valid URL path');

export function createHandlers(ctx: HttpContext) {
  const { config, model, faults, scenarios, authorizer, hub, metrics, logger } = ctx;
  const bodyOptions = (formats: ('json' | 'yaml')[]) => ({ maxBytes: config.http.maxBodyBytes, formats });

  const limit = config.http.mutationRateLimit;
  const limiter = limit ? createRateLimiter(limit) : null;

  // GET /api/v1/node serialises each snapshot once (~0.8 MB at 1,024 devices), however many
  // clients ask before the next model change.
  let nodeCache: { snapshot: NodeSnapshot; body: Buffer } | null = null;
  const nodeBody = (): Buffer => {
    const snapshot = model.snapshot();
    if (nodeCache?.snapshot !== snapshot)
      nodeCache = { snapshot, body: Buffer.from(JSON.stringify(snapshot)) };
    return nodeCache.body;
  };

  async function mutation(req: IncomingMessage, what: string): Promise<string> {
    const who = await authorizedMutation(req);
    if (!config.faults.enabled) {
      throw new GatewayError(
        'faults-disabled',
        `fault injection is disabled on this gateway (set gateway.faults.enabled: true or --enable-faults); cannot ${what}`,
      );
    }
    return who;
  }

  /** Rate limit, then authorization: what every mutation needs. */
  async function authorizedMutation(req: IncomingMessage): Promise<string> {
    // Before authorization: a flood must not become a flood of TokenReviews.
    const wait = limiter?.take(req.socket.remoteAddress ?? 'unknown') ?? 0;
    if (wait > 0) {
      throw Object.assign(
        new GatewayError(
          'rate-limited',
          `too many mutations from this client (gateway.http.mutationRateLimit: ${limit!.perSecond}/s, burst ${limit!.burst}); retry in ${wait} s`,
        ),
        { retryAfter: wait },
      );
    }
    return authorizer.authorize(req);
  }

  /**
   * Faults with their observed state. After a change, one turn of the event loop lets the plugin's
   * ListAndWatch send (queued as a microtask) land in the model first, so the answer says whether
   * the kubelet was told rather than "pending" for a send that was already under way.
   */
  async function faultStates(settle = false): Promise<NodeSnapshot['faults']> {
    if (settle) await new Promise<void>((resolve) => setImmediate(resolve));
    model.flush();
    return model.snapshot().faults;
  }

  function resolveDevice(resource: string, deviceId: string): void {
    const snap = model.snapshot();
    const r = snap.resources[resource];
    if (!r) {
      throw new GatewayError(
        'invalid-body',
        `unknown resource "${resource}"; this node serves: ${Object.keys(snap.resources).join(', ') || 'none'}`,
      );
    }
    const known = r.deviceKeys.some((k) => {
      const d = snap.devices[k]!;
      return d.id === deviceId || d.replicaOf === deviceId;
    });
    if (!known)
      throw new GatewayError('invalid-body', `unknown device "${deviceId}" of resource "${resource}"`);
  }

  async function handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const parts = path.split('/').slice(1);

    if (path === '/healthz') {
      if (method !== 'GET' && method !== 'HEAD') methodNotAllowed(['GET']);
      return sendJson(res, 200, { status: 'ok' });
    }
    if (path === '/readyz') {
      if (method !== 'GET' && method !== 'HEAD') methodNotAllowed(['GET']);
      const r = ctx.readiness();
      if (!r.ready) throw new GatewayError('unavailable', r.detail);
      return sendJson(res, 200, { status: 'ready', detail: r.detail });
    }
    if (path === '/metrics') {
      if (method !== 'GET') methodNotAllowed(['GET']);
      const text = await metrics.registry.metrics();
      res.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' });
      res.end(text);
      return;
    }
    if (parts[0] !== 'api' || parts[1] !== 'v1') throw new GatewayError('not-found', `no route for ${path}`);
    const [, , kind, idRaw, ...rest] = parts;
    if (rest.length) throw new GatewayError('not-found', `no route for ${path}`);

    switch (kind) {
      case 'node':
        if (idRaw !== undefined) break;
        if (method !== 'GET') methodNotAllowed(['GET']);
        return sendSerialized(res, 200, nodeBody());
      case 'summary':
        if (idRaw !== undefined) break;
        if (method !== 'GET') methodNotAllowed(['GET']);
        return sendJson(res, 200, model.summary());
      case 'history': {
        if (idRaw !== undefined) break;
        if (method !== 'GET') methodNotAllowed(['GET']);
        const history = ctx.history;
        if (!history)
          throw new GatewayError(
            'not-found',
            'history is disabled on this gateway (gateway.history.enabled: false)',
          );
        const query = parseHistoryQuery(
          url.searchParams,
          history.clock(),
          (name) => history.hasResource(name) || Object.hasOwn(model.snapshot().resources, name),
          () => Object.keys(model.snapshot().resources),
        );
        return sendJson(res, 200, history.query(query));
      }
      case 'stream':
        if (idRaw !== undefined) break;
        throw Object.assign(
          new GatewayError(
            'bad-request',
            'GET /api/v1/stream is a WebSocket endpoint; send Upgrade: websocket',
          ),
          {
            upgradeRequired: true,
          },
        );
      case 'faults': {
        if (idRaw === undefined) {
          if (method === 'GET') {
            const resource = url.searchParams.get('resource') ?? undefined;
            const deviceId = url.searchParams.get('deviceId') ?? undefined;
            const items = Object.values(await faultStates()).filter(
              (f) => (!resource || f.resource === resource) && (!deviceId || f.deviceId === deviceId),
            );
            return sendJson(res, 200, { items });
          }
          if (method === 'POST') {
            const who = await mutation(req, 'inject a fault');
            const body = await parseBody(req, faultBodySchema, bodyOptions(['json']));
            if (
              config.faults.maxTtlSeconds !== null &&
              (body.ttlSeconds ?? Infinity) > config.faults.maxTtlSeconds
            ) {
              throw new GatewayError(
                'invalid-body',
                `ttlSeconds must be at most ${config.faults.maxTtlSeconds} (gateway.faults.maxTtlSeconds)`,
              );
            }
            resolveDevice(body.resource, body.deviceId);
            const fault = faults.add({ ...body, ttlSeconds: body.ttlSeconds ?? null });
            logger.info(
              {
                fault: fault.id,
                resource: fault.resource,
                device: fault.deviceId,
                ttlSeconds: body.ttlSeconds ?? null,
                by: who,
              },
              'fault injected',
            );
            return sendJson(
              res,
              201,
              { id: fault.id, fault: (await faultStates(true))[fault.id] ?? null },
              { location: `/api/v1/faults/${encodeURIComponent(fault.id)}` },
            );
          }
          if (method === 'DELETE') {
            const who = await mutation(req, 'clear faults');
            const resource = url.searchParams.get('resource') ?? undefined;
            const deviceId = url.searchParams.get('deviceId') ?? undefined;
            if (deviceId !== undefined && resource === undefined) {
              throw new GatewayError('bad-request', 'deviceId needs resource: ?resource=R&deviceId=D');
            }
            const items = faults.removeAll({ resource, deviceId });
            logger.info(
              {
                faults: items.map((f) => f.id),
                resource: resource ?? null,
                device: deviceId ?? null,
                by: who,
              },
              'faults cleared',
            );
            return sendJson(res, 200, { items });
          }
          methodNotAllowed(['GET', 'POST', 'DELETE']);
        }
        const id = segment(idRaw);
        if (method === 'GET') {
          const fault = (await faultStates())[id];
          if (!fault) throw new GatewayError('not-found', `no active fault with id "${id}"`);
          return sendJson(res, 200, fault);
        }
        if (method === 'DELETE') {
          const who = await mutation(req, 'clear a fault');
          const fault = faults.remove(id, 'deleted');
          if (!fault) throw new GatewayError('not-found', `no active fault with id "${id}"`);
          logger.info(
            { fault: id, resource: fault.resource, device: fault.deviceId, by: who },
            'fault cleared',
          );
          res.writeHead(204).end();
          return;
        }
        methodNotAllowed(['GET', 'DELETE']);
      }
      // falls through (unreachable: methodNotAllowed throws)
      case 'placement':
      case 'pods': {
        if (idRaw !== undefined) break;
        if (method !== 'POST') methodNotAllowed(['POST']);
        const placement = ctx.placement;
        if (!placement) {
          throw new GatewayError(
            'unavailable',
            'placement needs a kubelet-sim behind the kubeconfig (gateway.kube.mode: kubeconfig)',
          );
        }
        // A dry run (placement) changes nothing; admitting a pod is a mutation.
        const admit = kind === 'pods';
        const who = admit ? await authorizedMutation(req) : null;
        const pod = await parseBody(req, podBodySchema, bodyOptions(['json', 'yaml']));
        // A dry run may try another policy or scope (kubelet-sim validates them: 400 passes through).
        const whatIf = {
          topologyManagerPolicy: url.searchParams.get('topologyManagerPolicy') ?? '',
          topologyManagerScope: url.searchParams.get('topologyManagerScope') ?? '',
        };
        const answer = await placement.forward(pod, admit, whatIf);
        if (admit) {
          logger.info(
            {
              pod: `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`,
              status: answer.status,
              by: who,
            },
            'pod submitted to the kubelet-sim',
          );
        }
        res.writeHead(answer.status, {
          'content-type': answer.contentType,
          'content-length': Buffer.byteLength(answer.body),
          'cache-control': 'no-store',
        });
        res.end(answer.body);
        return;
      }
      case 'scenarios': {
        if (idRaw === undefined) {
          if (method === 'GET') return sendJson(res, 200, { items: scenarios.list() });
          if (method === 'POST') {
            const who = await mutation(req, 'start a scenario');
            const doc = await parseBody(req, scenarioBodySchema, bodyOptions(['json', 'yaml']));
            if (
              config.faults.maxTtlSeconds !== null &&
              doc.ttlSeconds &&
              doc.ttlSeconds > config.faults.maxTtlSeconds
            ) {
              throw new GatewayError(
                'invalid-body',
                `ttlSeconds must be at most ${config.faults.maxTtlSeconds} (gateway.faults.maxTtlSeconds)`,
              );
            }
            const state = scenarios.start(doc);
            // Immediate steps that could not run make the request itself wrong (unknown device, …).
            const failed = state.steps.filter((s) => s.at === 0 && s.status === 'failed');
            if (
              failed.length &&
              failed.length === state.steps.filter((s) => s.at === 0).length &&
              state.steps.every((s) => s.at === 0)
            ) {
              scenarios.stop(state.id);
              throw new GatewayError(
                'invalid-body',
                `scenario cannot run: ${failed.map((s) => `${s.action}: ${s.detail}`).join('; ')}`,
              );
            }
            logger.info(
              { scenario: state.id, name: state.name, steps: state.steps.length, by: who },
              'scenario started',
            );
            return sendJson(
              res,
              201,
              { id: state.id, scenario: scenarios.get(state.id) ?? state },
              {
                location: `/api/v1/scenarios/${state.id}`,
              },
            );
          }
          if (method === 'DELETE') {
            const who = await mutation(req, 'stop scenarios');
            const n = scenarios.stopAll();
            logger.info({ stopped: n, by: who }, 'all scenarios stopped');
            res.writeHead(204).end();
            return;
          }
          methodNotAllowed(['GET', 'POST', 'DELETE']);
        }
        const id = segment(idRaw);
        if (method === 'GET') {
          const s = scenarios.get(id);
          if (!s) throw new GatewayError('not-found', `no running scenario with id "${id}"`);
          return sendJson(res, 200, s);
        }
        if (method === 'DELETE') {
          const who = await mutation(req, 'stop a scenario');
          if (!scenarios.stop(id)) throw new GatewayError('not-found', `no running scenario with id "${id}"`);
          logger.info({ scenario: id, by: who }, 'scenario stopped');
          res.writeHead(204).end();
          return;
        }
        methodNotAllowed(['GET', 'DELETE']);
      }
    }
    throw new GatewayError('not-found', `no route for ${path}`);
  }

  return {
    async request(req: IncomingMessage, res: ServerResponse): Promise<void> {
      const url = requestUrl(req.url);
      if (!url) return sendProblem(res, problemOf(BAD_TARGET));
      try {
        await handle(req, res, url);
      } catch (err) {
        const problem = problemOf(err, url.pathname);
        if (problem.status >= 500 && problem.status !== 503)
          logger.error({ err, path: url.pathname }, 'request failed');
        const headers: Record<string, string> = {};
        const allow = (err as { allow?: string[] }).allow;
        if (allow) headers.allow = allow.join(', ');
        const retryAfter = (err as { retryAfter?: number }).retryAfter;
        if (retryAfter) headers['retry-after'] = String(retryAfter);
        if ((err as { upgradeRequired?: boolean }).upgradeRequired) {
          problem.status = 426;
          problem.title = 'Upgrade Required';
          headers.upgrade = 'websocket';
        }
        if (problem.status === 401) headers['www-authenticate'] = 'Bearer realm="plugboard-gateway"';
        sendProblem(res, problem, headers);
      }
    },

    upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
      socket.on('error', () => socket.destroy());
      const url = requestUrl(req.url);
      if (!url) {
        socket.end(problemResponseText(problemOf(BAD_TARGET)));
        return;
      }
      const reject = (err: GatewayError): void => {
        socket.end(problemResponseText(problemOf(err, url.pathname)));
      };
      if ((url.pathname.replace(/\/+$/, '') || '/') !== '/api/v1/stream') {
        return reject(new GatewayError('not-found', `no WebSocket endpoint at ${url.pathname}`));
      }
      if (!originAllowed(req, config.stream.allowedOrigins)) {
        logger.warn({ origin: req.headers.origin }, 'stream upgrade refused: origin not allowed');
        return reject(
          new GatewayError(
            'forbidden',
            `Origin ${String(req.headers.origin).slice(0, 200)} is not allowed (gateway.stream.allowedOrigins)`,
          ),
        );
      }
      const viewRaw = url.searchParams.get('view') ?? 'full';
      if (viewRaw !== 'full' && viewRaw !== 'summary') {
        return reject(
          new GatewayError('bad-request', `view must be "full" or "summary", got "${viewRaw.slice(0, 40)}"`),
        );
      }
      const sinceRaw = url.searchParams.get('since');
      let since: number | null = null;
      if (sinceRaw !== null) {
        if (!/^\d{1,16}$/.test(sinceRaw))
          return reject(
            new GatewayError('bad-request', 'since must be a non-negative integer sequence number'),
          );
        since = Number(sinceRaw);
      }
      const historyRaw = url.searchParams.get('history');
      if (historyRaw !== null && historyRaw !== 'true' && historyRaw !== 'false') {
        return reject(new GatewayError('bad-request', 'history must be "true" or "false"'));
      }
      hub.accept(req, socket, head, viewRaw, since, historyRaw === 'true' && !!ctx.history);
    },
  };
}
