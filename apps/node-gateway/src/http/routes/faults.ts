// Fault injection: GET|POST|DELETE /api/v1/faults and GET|DELETE /api/v1/faults/{id}.
import { faultBodySchema, type FaultRecord, type FaultTaintRule, type NodeSnapshot } from '@plugboard/api';
import { GatewayError } from '../../errors.js';
import { faultTaintRule } from '../../faults/taint-rules.js';
import { isOwnResource } from '../../model/observed.js';
import type { HttpContext } from '../context.js';
import type { MutationGuard } from '../mutation-guard.js';
import { parseBody } from '../body.js';
import { sendJson } from '../respond.js';
import type { Route } from '../router.js';

/** `?resource=R&deviceId=D`, each optional. */
function deviceFilter(url: URL): { resource: string | undefined; deviceId: string | undefined } {
  return {
    resource: url.searchParams.get('resource') ?? undefined,
    deviceId: url.searchParams.get('deviceId') ?? undefined,
  };
}

export function faultRoutes(
  ctx: Pick<HttpContext, 'model' | 'faults' | 'logger' | 'taintRules'>,
  guard: MutationGuard,
): Route[] {
  const { model, faults, logger } = ctx;
  const taintRules = ctx.taintRules ?? null;

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

  /**
   * A device of a DRA driver this gateway does not run (seen through this node's ResourceSlices),
   * named by its device name or `<pool>/<device>`: the DeviceTaintRule a fault on it is. null: the
   * resource is not such a driver.
   */
  function otherDriversDevice(resource: string, deviceId: string): FaultTaintRule | null {
    const snap = model.snapshot();
    const driver = snap.dra?.drivers[resource];
    if (!driver || driver.inProcess) return null;
    const found = Object.values(snap.dra!.devices).filter(
      (d) => d.driver === resource && (d.name === deviceId || `${d.pool}/${d.name}` === deviceId),
    );
    if (found.length === 0)
      throw new GatewayError(
        'invalid-body',
        `unknown device "${deviceId}" of DRA driver "${resource}" (not in this node's ResourceSlices)`,
      );
    if (found.length > 1)
      throw new GatewayError(
        'invalid-body',
        `device "${deviceId}" of DRA driver "${resource}" is in several pools (${found.map((d) => d.pool).join(', ')}): name it <pool>/<device>`,
      );
    return faultTaintRule(resource, found[0]!.pool, found[0]!.name);
  }

  /** The fault as a DeviceTaintRule: created (or adopted) first, so a refusal stores nothing. */
  async function addTaintRuleFault(
    body: Omit<Parameters<typeof faults.add>[0], 'taintRule'>,
    rule: FaultTaintRule,
  ): Promise<FaultRecord> {
    if (!taintRules)
      throw new GatewayError('unavailable', "faults on other drivers' devices need the Kubernetes API");
    const taint = body.taint ?? 'None';
    await taintRules.apply({ rule, effect: taint, reason: body.reason });
    try {
      return faults.add({ ...body, deviceId: rule.device, taint, taintRule: rule });
    } catch (err) {
      // The store refused (e.g. too many faults): the rule goes unless another fault holds it.
      if (!faults.list().some((f) => f.taintRule?.name === rule.name)) taintRules.unwant(rule);
      throw err;
    }
  }

  function resolveDevice(resource: string, deviceId: string): void {
    const snap = model.snapshot();
    const driver = snap.dra?.drivers[resource];
    if (driver?.inProcess) {
      const known = Object.values(snap.dra!.devices).some(
        (d) =>
          d.driver === resource && d.sourceId !== null && (d.sourceId === deviceId || d.name === deviceId),
      );
      if (!known)
        throw new GatewayError('invalid-body', `unknown device "${deviceId}" of DRA driver "${resource}"`);
      return;
    }
    const r = snap.resources[resource];
    if (r && !isOwnResource(r)) {
      // Nothing but the device plugin itself can mark its device unhealthy: the device-plugin API
      // has the plugin tell the kubelet (ListAndWatch), and the kubelet takes it from no one else.
      throw new GatewayError(
        'invalid-body',
        `resource "${resource}" is served by another device plugin on this node (servedBy: ${r.servedBy}), which this gateway only observes: the device-plugin API gives nobody but that plugin a way to mark its device "${deviceId}" unhealthy (its ListAndWatch stream to the kubelet); nothing was stored`,
      );
    }
    if (!r) {
      const drivers = Object.values(snap.dra?.drivers ?? {}).filter((d) => d.inProcess);
      const served = [
        ...Object.values(snap.resources)
          .filter(isOwnResource)
          .map((x) => x.name),
        ...drivers.map((d) => d.name),
      ];
      throw new GatewayError(
        'invalid-body',
        `unknown resource "${resource}"; this node serves: ${served.join(', ') || 'none'}`,
      );
    }
    const known = r.deviceKeys.some((k) => {
      const d = snap.devices[k]!;
      return d.id === deviceId || d.replicaOf === deviceId;
    });
    if (!known)
      throw new GatewayError('invalid-body', `unknown device "${deviceId}" of resource "${resource}"`);
  }

  return [
    {
      path: '/api/v1/faults',
      methods: {
        GET: async ({ res, url }) => {
          const { resource, deviceId } = deviceFilter(url);
          // The store's filter: a DRA device may be named by its ResourceSlice name too.
          const ids =
            resource || deviceId ? new Set(faults.list({ resource, deviceId }).map((f) => f.id)) : null;
          const items = Object.values(await faultStates()).filter((f) => !ids || ids.has(f.id));
          sendJson(res, 200, { items });
        },
        POST: async ({ req, res }) => {
          const who = await guard.faultMutation(req, 'inject a fault');
          const body = await parseBody(req, faultBodySchema, guard.bodyOptions(['json']));
          guard.checkTtl(body.ttlSeconds ?? Infinity);
          const rule = otherDriversDevice(body.resource, body.deviceId);
          if (!rule) resolveDevice(body.resource, body.deviceId);
          const fault = rule
            ? await addTaintRuleFault({ ...body, ttlSeconds: body.ttlSeconds ?? null }, rule)
            : faults.add({ ...body, ttlSeconds: body.ttlSeconds ?? null });
          logger.info(
            {
              fault: fault.id,
              resource: fault.resource,
              device: fault.deviceId,
              taint: fault.taint ?? null,
              taintRule: fault.taintRule?.name ?? null,
              ttlSeconds: body.ttlSeconds ?? null,
              by: who,
            },
            'fault injected',
          );
          sendJson(
            res,
            201,
            { id: fault.id, fault: (await faultStates(true))[fault.id] ?? null },
            { location: `/api/v1/faults/${encodeURIComponent(fault.id)}` },
          );
        },
        DELETE: async ({ req, res, url }) => {
          const who = await guard.faultMutation(req, 'clear faults');
          const { resource, deviceId } = deviceFilter(url);
          if (deviceId !== undefined && resource === undefined) {
            throw new GatewayError('bad-request', 'deviceId needs resource: ?resource=R&deviceId=D');
          }
          const items = faults.removeAll({ resource, deviceId });
          logger.info(
            { faults: items.map((f) => f.id), resource: resource ?? null, device: deviceId ?? null, by: who },
            'faults cleared',
          );
          sendJson(res, 200, { items });
        },
      },
    },
    {
      path: '/api/v1/faults/{id}',
      methods: {
        GET: async ({ res, id }) => {
          const states = await faultStates();
          // Own keys only: an id such as "valueOf" must not find Object.prototype's member.
          const fault = Object.hasOwn(states, id) ? states[id] : undefined;
          if (!fault) throw new GatewayError('not-found', `no active fault with id "${id}"`);
          sendJson(res, 200, fault);
        },
        DELETE: async ({ req, res, id }) => {
          const who = await guard.faultMutation(req, 'clear a fault');
          const fault = faults.remove(id, 'deleted');
          if (!fault) throw new GatewayError('not-found', `no active fault with id "${id}"`);
          logger.info(
            { fault: id, resource: fault.resource, device: fault.deviceId, by: who },
            'fault cleared',
          );
          res.writeHead(204).end();
        },
      },
    },
  ];
}
