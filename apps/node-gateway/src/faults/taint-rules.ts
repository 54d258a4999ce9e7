// Faults on the devices of DRA drivers this gateway does not run: each is a DeviceTaintRule
// (resource.k8s.io/v1, KEP-5055) selecting exactly that device (driver, pool, device), named from the
// device so that a restarted gateway finds its rule again instead of making a second one, labelled as
// Plugboard's and as simulated. The rule is the fault's only effect: the scheduler stops allocating
// the device (NoSchedule, NoExecute), kube-controller-manager's device taint eviction controller
// evicts its pods (NoExecute) or, for None, writes in the rule's status how many it would evict. What
// the API server holds is read back through the DeviceTaintRule informer (model/build.ts), never
// assumed from the writes here.
import { createHash } from 'node:crypto';
import type { DraTaintEffect, FaultTaintRule } from '@plugboard/api';
import type { DeviceTaintRule } from '@plugboard/k8s-api';
import { GROUP_VERSION } from '@plugboard/k8s-api';
import { GatewayError } from '../errors.js';
import type { ApiServerRequest } from '../sources/api-server-request.js';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'plugboard';
/** Label (value `simulated`) and taint key of every fault rule. */
export const FAULT_LABEL = 'plugboard.dev/fault';
export const FAULT_REASON_ANNOTATION = 'plugboard.dev/fault-reason';
export const FAULT_NODE_ANNOTATION = 'plugboard.dev/node';
const RULES_PATH = `/apis/${GROUP_VERSION}/devicetaintrules`;
const TIMEOUT_MS = 10_000;
const RETRY_MS = 5_000;

/** The rule of a device: one per `<driver>/<pool>/<device>`, the same name on every run. */
export function faultTaintRule(driver: string, pool: string, device: string): FaultTaintRule {
  const hash = createHash('sha256').update(`${driver}/${pool}/${device}`).digest('hex').slice(0, 20);
  return { name: `plugboard-fault-${hash}`, driver, pool, device };
}

export interface TaintRuleIntent {
  rule: FaultTaintRule;
  effect: DraTaintEffect;
  reason: string;
}

function ruleObject(
  nodeName: string,
  i: TaintRuleIntent,
): DeviceTaintRule & { apiVersion: string; kind: string } {
  return {
    apiVersion: GROUP_VERSION,
    kind: 'DeviceTaintRule',
    metadata: {
      name: i.rule.name,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [FAULT_LABEL]: 'simulated' },
      annotations: { [FAULT_REASON_ANNOTATION]: i.reason, [FAULT_NODE_ANNOTATION]: nodeName },
    },
    spec: {
      deviceSelector: { driver: i.rule.driver, pool: i.rule.pool, device: i.rule.device },
      taint: { key: FAULT_LABEL, value: 'simulated', effect: i.effect },
    },
  };
}

/** Whether the stored rule already says what the intent asks (selector, taint, labels, reason). */
function matches(stored: DeviceTaintRule, wanted: DeviceTaintRule): boolean {
  const s = stored.spec;
  const w = wanted.spec;
  return (
    s.deviceSelector?.driver === w.deviceSelector?.driver &&
    s.deviceSelector?.pool === w.deviceSelector?.pool &&
    s.deviceSelector?.device === w.deviceSelector?.device &&
    s.taint.key === w.taint.key &&
    s.taint.value === w.taint.value &&
    s.taint.effect === w.taint.effect &&
    stored.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY &&
    stored.metadata.labels?.[FAULT_LABEL] === 'simulated' &&
    stored.metadata.annotations?.[FAULT_REASON_ANNOTATION] ===
      wanted.metadata.annotations?.[FAULT_REASON_ANNOTATION]
  );
}

export interface TaintRuleFaultsOptions {
  nodeName: string;
  /** A write that failed in the background (restore, clear); it is retried. */
  onError?: (rule: string, message: string) => void;
}

/**
 * The desired DeviceTaintRules (one per faulted device) and the writes that make the API server
 * hold them: `apply` for a request that waits for the answer (a refusal is the caller's error),
 * `want`/`unwant` for the fault store (restore, clear, TTL), reconciled in the background with retries.
 */
export class TaintRuleFaults {
  private request: ApiServerRequest | null = null;
  private readonly desired = new Map<string, TaintRuleIntent>();
  /** Rules to delete (cleared faults) until the API server confirms. */
  private readonly unwanted = new Set<string>();
  private readonly retries = new Map<string, NodeJS.Timeout>();
  private closed = false;

  constructor(private readonly o: TaintRuleFaultsOptions) {}

  /** Whether writes can be made (the gateway has the Kubernetes API). */
  get connected(): boolean {
    return this.request !== null;
  }

  /** The API connection: the rules wanted so far (restored faults) are reconciled now. */
  connect(request: ApiServerRequest): void {
    this.request = request;
    for (const name of [...this.desired.keys(), ...this.unwanted]) this.reconcileSoon(name, 0);
  }

  /** Creates or updates the rule now; throws a GatewayError naming what the API server refused. */
  async apply(intent: TaintRuleIntent): Promise<void> {
    if (!this.request) {
      throw new GatewayError(
        'unavailable',
        'faults on devices of DRA drivers this gateway does not run are DeviceTaintRules: the gateway has no Kubernetes API connection',
      );
    }
    await this.write(intent);
  }

  /** The fault store holds a fault on the rule's device (kept until `unwant`). */
  want(intent: TaintRuleIntent): void {
    this.unwanted.delete(intent.rule.name);
    this.desired.set(intent.rule.name, intent);
    this.reconcileSoon(intent.rule.name, 0);
  }

  /** No fault holds the device any more: the rule is deleted. */
  unwant(rule: FaultTaintRule): void {
    this.desired.delete(rule.name);
    this.unwanted.add(rule.name);
    this.reconcileSoon(rule.name, 0);
  }

  close(): void {
    this.closed = true;
    for (const t of this.retries.values()) clearTimeout(t);
    this.retries.clear();
  }

  private reconcileSoon(name: string, delayMs: number): void {
    if (!this.request || this.closed || this.retries.has(name)) return;
    const timer = setTimeout(() => {
      this.retries.delete(name);
      void this.reconcile(name).catch((err: unknown) => {
        this.o.onError?.(name, (err as Error).message);
        this.reconcileSoon(name, RETRY_MS);
      });
    }, delayMs);
    timer.unref();
    this.retries.set(name, timer);
  }

  private async reconcile(name: string): Promise<void> {
    const intent = this.desired.get(name);
    if (intent) return this.write(intent);
    if (!this.unwanted.has(name)) return;
    const res = await this.call('DELETE', `${RULES_PATH}/${name}`, undefined, 'delete', name);
    if (res.status !== 404) this.check(res, 'delete', name);
    this.unwanted.delete(name);
  }

  /** GET, then POST (absent) or PUT (different): a rule left by an earlier run is adopted. */
  private async write(intent: TaintRuleIntent): Promise<void> {
    const name = intent.rule.name;
    const wanted = ruleObject(this.o.nodeName, intent);
    for (let attempt = 0; ; attempt++) {
      const got = await this.call('GET', `${RULES_PATH}/${name}`, undefined, 'get', name);
      if (got.status === 404) {
        const created = await this.call('POST', RULES_PATH, wanted, 'create', name);
        if (created.status === 409 && attempt === 0) continue;
        this.check(created, 'create', name);
        return;
      }
      this.check(got, 'get', name);
      const stored = JSON.parse(got.body) as DeviceTaintRule;
      if (matches(stored, wanted)) return;
      const updated = await this.call(
        'PUT',
        `${RULES_PATH}/${name}`,
        {
          ...wanted,
          metadata: {
            ...stored.metadata,
            labels: { ...stored.metadata.labels, ...wanted.metadata.labels },
            annotations: { ...stored.metadata.annotations, ...wanted.metadata.annotations },
          },
        },
        'update',
        name,
      );
      // Changed under us (resourceVersion): read it again, once.
      if (updated.status === 409 && attempt === 0) continue;
      this.check(updated, 'update', name);
      return;
    }
  }

  private async call(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    body: unknown,
    verb: string,
    name: string,
  ): Promise<{ status: number; body: string }> {
    try {
      return await this.request!(method, path, {
        timeoutMs: TIMEOUT_MS,
        ...(body === undefined
          ? {}
          : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      });
    } catch (err) {
      throw new GatewayError(
        'unavailable',
        `cannot ${verb} DeviceTaintRule ${name}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
  }

  /** A refusal as the caller's error: 403 names the RBAC permission the gateway lacks. */
  private check(res: { status: number; body: string }, verb: string, name: string): void {
    if (res.status >= 200 && res.status < 300) return;
    let message = res.body;
    try {
      message = (JSON.parse(res.body) as { message?: string }).message ?? res.body;
    } catch {
      // Not a Status object: the body as it is.
    }
    if (res.status === 403) {
      throw new GatewayError(
        'forbidden',
        `the API server refused to ${verb} DeviceTaintRule ${name}: the gateway's identity needs "${verb}" on devicetaintrules (resource.k8s.io, cluster-scoped) for faults on devices of drivers it does not run; nothing was stored (${message})`,
      );
    }
    if (res.status === 422 || res.status === 400) {
      throw new GatewayError('invalid-body', `the API server refused DeviceTaintRule ${name}: ${message}`);
    }
    throw new GatewayError(
      'unavailable',
      `cannot ${verb} DeviceTaintRule ${name}: HTTP ${res.status}: ${message}`,
    );
  }
}
