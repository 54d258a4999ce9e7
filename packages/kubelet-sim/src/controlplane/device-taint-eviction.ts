// The device taint eviction controller of kube-controller-manager
// (pkg/controller/devicetainteviction/device_taint_eviction.go, 1.37): a pod that uses an allocated
// ResourceClaim (reserved for it) with a device carrying a NoExecute taint — from its ResourceSlice
// (the pool's newest generation) or from a DeviceTaintRule — that the allocation result does not
// tolerate is evicted at the taint's timeAdded (plus the smallest tolerationSeconds of the
// tolerations that tolerate it for a limited time): a Normal `DeviceTaintManagerEviction`
// "Marking for deletion" event, the `DisruptionTarget` condition (reason
// DeletionByDeviceTaintManager, "Device Taint manager: deleting due to NoExecute taint"), then the
// pod is deleted. An eviction that is no longer needed before it fires is cancelled with a
// "Cancelling deletion" event. It also keeps each DeviceTaintRule's `EvictionInProgress` condition
// as upstream's maybeUpdateRuleStatus does: at once when a rule is new or its spec changed, again
// ruleStatusPeriod after a pod change or eviction it caused; for effect None a dry run ("… pods
// would be evicted … if the effect was NoExecute"), computed as if the rule were NoExecute.

import type { Condition } from '@plugboard/apimachinery';
import { DEVICE_TAINT_CONDITION_EVICTION_IN_PROGRESS } from '@plugboard/k8s-api';
import type { Logger } from 'pino';
import type { EventRecorder } from '../apiserver/events.js';
import type { KubeObject, ObjectStore, ResourceVersionClock } from '../apiserver/object-store.js';
import { isForPod, isReservedForPod, podClaims } from '../cm/dra/resourceclaim.js';
import type { ResourceClaimView } from '../cm/dra/types.js';
import { toleratesTaint } from '../scheduler/index.js';
import type { DeviceTaint, DeviceTaintRule, ResourceSlice } from '../scheduler/index.js';
import type { ControlPlanePod } from './resourceclaim-controller.js';

/** names.DeviceTaintEvictionController: the events' source. */
export const DEVICE_TAINT_EVICTION_CONTROLLER = 'device-taint-eviction-controller';
export const DISRUPTION_REASON = 'DeletionByDeviceTaintManager';
export const DISRUPTION_MESSAGE = 'Device Taint manager: deleting due to NoExecute taint';
/** ruleStatusPeriod: the shortest time between two status updates of one DeviceTaintRule. */
export const RULE_STATUS_PERIOD_MS = 10_000;

export interface EvictionCandidate extends ControlPlanePod {
  /** Terminal pods are not evicted. */
  terminal: boolean;
}

export interface DeviceTaintEvictionOptions {
  claims: ObjectStore;
  slices: ObjectStore;
  taintRules?: ObjectStore;
  clock: ResourceVersionClock;
  events: EventRecorder;
  pods: () => EvictionCandidate[];
  /** Adds the DisruptionTarget condition, then deletes the pod (unless it is gone or replaced). */
  evict: (namespace: string, name: string, uid: string) => Promise<void>;
  logger: Logger;
  /** RULE_STATUS_PERIOD_MS unless a test shortens it. */
  ruleStatusPeriodMs?: number;
}

/** One taint that makes a pod's eviction necessary: trackedTaint. */
interface EvictionReason {
  origin: string;
  /** The DeviceTaintRule's UID when the taint comes from one. */
  ruleUid?: string;
}

interface Planned {
  at: number;
  timer: NodeJS.Timeout;
  reasons: EvictionReason[];
}

/** The numbers maybeUpdateRuleStatus computes before it writes the condition. */
export interface RuleStatusCounts {
  taintedSliceDevices: number;
  taintedAllocatedDevices: number;
  pendingPods: number;
  pendingNamespaces: number;
  /** Pods evicted because of this rule since the controller started (taintRuleStats). */
  evictedPods: number;
}

const plural = (n: number, one: string, many: string): string => (n === 1 ? `1 ${one}` : `${n} ${many}`);

/**
 * The `EvictionInProgress` condition upstream's maybeUpdateRuleStatus writes (without its
 * lastTransitionTime), word for word: pkg/controller/devicetainteviction, 1.37.
 */
export function ruleCondition(
  rule: Pick<DeviceTaintRule, 'metadata' | 'spec'>,
  c: RuleStatusCounts,
): Omit<Condition, 'lastTransitionTime'> {
  const effect = rule.spec.taint.effect;
  let status: Condition['status'] = 'False';
  let reason: string;
  let message = '';
  if (effect === 'NoExecute') {
    if (c.pendingPods > 0) {
      reason = 'PodsPendingEviction';
      status = 'True';
      message =
        (c.pendingPods === 1 ? '1 pod needs' : `${c.pendingPods} pods need`) +
        ' to be evicted in ' +
        (c.pendingNamespaces === 1 ? '1 namespace.' : `${c.pendingNamespaces} different namespaces.`);
    } else reason = c.evictedPods > 0 ? 'Completed' : 'NotStarted';
  } else if (effect === 'None') {
    reason = 'NoEffect';
    message =
      `${plural(c.taintedSliceDevices, 'published device', 'published devices')} selected. ` +
      `${plural(c.taintedAllocatedDevices, 'allocated device', 'allocated devices')} selected. ` +
      `${plural(c.pendingPods, 'pod', 'pods')} would be evicted in ` +
      `${plural(c.pendingNamespaces, 'namespace', 'different namespaces')} ` +
      'if the effect was NoExecute. This information will not be updated again. Recreate the DeviceTaintRule to trigger an update.';
  } else {
    reason = 'OtherEffect';
    message = 'Eviction only happens for the NoExecute effect.';
  }
  if (c.evictedPods > 0) {
    if (message !== '') message += ' ';
    message += `${plural(c.evictedPods, 'pod', 'pods')} evicted since starting the controller.`;
  }
  return {
    type: DEVICE_TAINT_CONDITION_EVICTION_IN_PROGRESS,
    status,
    reason,
    message,
    observedGeneration: rule.metadata.generation ?? 0,
  };
}

/** ruleMatchesDevice */
function ruleMatchesDevice(rule: DeviceTaintRule, driver: string, pool: string, device: string): boolean {
  const s = rule.spec.deviceSelector;
  if (!s) return false;
  return (
    (s.driver === undefined || s.driver === driver) &&
    (s.pool === undefined || s.pool === pool) &&
    (s.device === undefined || s.device === device)
  );
}

/** metav1.Time's JSON: RFC 3339, whole seconds. */
const metaNow = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

export class DeviceTaintEvictionController {
  private readonly planned = new Map<string, Planned>();
  private readonly cancels: (() => void)[] = [];
  private queued = false;
  private readonly log: Logger;
  /** taintRuleStats: pods evicted per rule UID since start. */
  private readonly evictedByRule = new Map<string, number>();
  /** Delayed status updates per rule name. */
  private readonly statusTimers = new Map<string, NodeJS.Timeout>();
  private readonly statusPeriodMs: number;

  constructor(private readonly o: DeviceTaintEvictionOptions) {
    this.log = o.logger.child({ component: DEVICE_TAINT_EVICTION_CONTROLLER });
    this.statusPeriodMs = o.ruleStatusPeriodMs ?? RULE_STATUS_PERIOD_MS;
  }

  start(): void {
    for (const store of [this.o.claims, this.o.slices, this.o.taintRules]) {
      if (!store) continue;
      const w = store.watch(
        this.o.clock.current(),
        () => true,
        () => this.sync(),
      );
      if (w.ok) this.cancels.push(w.cancel);
    }
  }

  stop(): void {
    for (const cancel of this.cancels.splice(0)) cancel();
    for (const p of this.planned.values()) clearTimeout(p.timer);
    this.planned.clear();
    for (const t of this.statusTimers.values()) clearTimeout(t);
    this.statusTimers.clear();
  }

  /** Re-evaluates every pod after the current turn (a burst of changes costs one pass). */
  sync(): void {
    if (this.queued) return;
    this.queued = true;
    setImmediate(() => {
      this.queued = false;
      this.evaluate();
    });
  }

  private evaluate(): void {
    const taintsByDevice = this.noExecuteTaints();
    const rules = this.rules();
    const seen = new Set<string>();
    // A rule that is new or whose spec changed gets its status at once (handleRuleChange).
    for (const rule of rules) {
      const condition = rule.status?.conditions?.find(
        (c) => c.type === DEVICE_TAINT_CONDITION_EVICTION_IN_PROGRESS,
      );
      if (condition?.observedGeneration !== (rule.metadata.generation ?? 0)) this.updateRuleStatus(rule);
    }
    for (const uid of this.evictedByRule.keys()) {
      if (!rules.some((r) => r.metadata.uid === uid)) this.evictedByRule.delete(uid);
    }
    // Nothing tainted NoExecute and nothing planned: no pod to look at.
    const anyTaint = taintsByDevice.size > 0 || rules.some((r) => r.spec.taint.effect === 'NoExecute');
    if (!anyTaint && this.planned.size === 0) return;
    for (const pod of anyTaint ? this.o.pods() : []) {
      if (pod.terminal || !pod.nodeName) continue;
      const key = `${pod.namespace}/${pod.name}/${pod.uid}`;
      const eviction = this.podEvictionTime(pod, taintsByDevice, rules);
      if (!eviction) continue;
      seen.add(key);
      const planned = this.planned.get(key);
      if (planned && planned.at === eviction.at) continue;
      if (planned) clearTimeout(planned.timer);
      const timer = setTimeout(() => void this.fire(pod, key), Math.max(0, eviction.at - Date.now()));
      timer.unref();
      this.planned.set(key, { at: eviction.at, timer, reasons: eviction.reasons });
      this.log.info(
        {
          pod: `${pod.namespace}/${pod.name}`,
          at: new Date(eviction.at).toISOString(),
          reasons: eviction.reasons.map((r) => r.origin),
        },
        'Going to evict pod',
      );
      // handlePod: eviction is in progress, the rule's status may need an update (not at once).
      for (const r of eviction.reasons) if (r.ruleUid) this.scheduleRuleStatus(r.ruleUid);
    }
    for (const [key, planned] of this.planned) {
      if (seen.has(key)) continue;
      clearTimeout(planned.timer);
      this.planned.delete(key);
      const [namespace, name, uid] = key.split('/') as [string, string, string];
      // Only a pod that still exists hears about the cancellation.
      if (!this.o.pods().some((p) => p.uid === uid)) continue;
      this.o.events.record(
        { kind: 'Pod', namespace, name, uid },
        'Normal',
        'DeviceTaintManagerEviction',
        'Cancelling deletion',
        DEVICE_TAINT_EVICTION_CONTROLLER,
      );
      this.log.info({ pod: `${namespace}/${name}` }, 'Canceled pod eviction');
    }
  }

  private async fire(pod: EvictionCandidate, key: string): Promise<void> {
    const planned = this.planned.get(key);
    if (!planned) return;
    this.planned.delete(key);
    if (!this.o.pods().some((p) => p.uid === pod.uid)) return;
    this.o.events.record(
      { kind: 'Pod', namespace: pod.namespace, name: pod.name, uid: pod.uid },
      'Normal',
      'DeviceTaintManagerEviction',
      'Marking for deletion',
      DEVICE_TAINT_EVICTION_CONTROLLER,
    );
    try {
      await this.o.evict(pod.namespace, pod.name, pod.uid);
      this.log.info({ pod: `${pod.namespace}/${pod.name}` }, 'Evicted pod by deleting it');
      for (const r of planned.reasons) {
        if (!r.ruleUid) continue;
        this.evictedByRule.set(r.ruleUid, (this.evictedByRule.get(r.ruleUid) ?? 0) + 1);
        this.scheduleRuleStatus(r.ruleUid);
      }
    } catch (err) {
      this.log.warn({ pod: `${pod.namespace}/${pod.name}`, err: String(err) }, 'pod eviction failed');
    }
  }

  /** workqueue.AddAfter(workItemForRule(rule), ruleStatusPeriod) */
  private scheduleRuleStatus(ruleUid: string, delayMs = this.statusPeriodMs): void {
    if (this.statusTimers.has(ruleUid)) return;
    const timer = setTimeout(() => {
      this.statusTimers.delete(ruleUid);
      const rule = this.rules().find((r) => r.metadata.uid === ruleUid);
      if (rule) this.updateRuleStatus(rule);
    }, delayMs);
    timer.unref();
    this.statusTimers.set(ruleUid, timer);
  }

  private rules(): DeviceTaintRule[] {
    return (this.o.taintRules?.list(() => true).items ?? []) as unknown as DeviceTaintRule[];
  }

  /** maybeUpdateRuleStatus: at most once per ruleStatusPeriod for an unchanged spec. */
  private updateRuleStatus(rule: DeviceTaintRule): void {
    const conditions = rule.status?.conditions ?? [];
    const existing = conditions.find((c) => c.type === DEVICE_TAINT_CONDITION_EVICTION_IN_PROGRESS);
    const generation = rule.metadata.generation ?? 0;
    if (existing && existing.observedGeneration === generation) {
      const since = Date.now() - Date.parse(existing.lastTransitionTime);
      if (since < this.statusPeriodMs) {
        this.scheduleRuleStatus(rule.metadata.uid ?? '', this.statusPeriodMs - since);
        return;
      }
    }
    const counts: RuleStatusCounts = {
      taintedSliceDevices: 0,
      taintedAllocatedDevices: 0,
      pendingPods: 0,
      pendingNamespaces: 0,
      evictedPods: this.evictedByRule.get(rule.metadata.uid ?? '') ?? 0,
    };
    const effect = rule.spec.taint.effect;
    if (effect === 'None' || effect === 'NoExecute') {
      // None: simulated as if this one rule were NoExecute (the other rules do not count).
      const evicting =
        effect === 'None'
          ? [{ ...rule, spec: { ...rule.spec, taint: { ...rule.spec.taint, effect: 'NoExecute' as const } } }]
          : this.rules();
      const taintsByDevice = this.noExecuteTaints();
      const namespaces = new Set<string>();
      for (const pod of this.o.pods()) {
        if (pod.terminal || !pod.nodeName) continue;
        const eviction = this.podEvictionTime(pod, taintsByDevice, evicting);
        for (const r of eviction?.reasons ?? []) {
          if (r.ruleUid !== rule.metadata.uid) continue;
          counts.pendingPods++;
          namespaces.add(pod.namespace);
        }
      }
      counts.pendingNamespaces = namespaces.size;
    }
    if (effect === 'None') {
      counts.taintedSliceDevices = this.publishedDevices().filter((d) =>
        ruleMatchesDevice(rule, d.driver, d.pool, d.device),
      ).length;
      for (const claim of this.o.claims.list(() => true).items as unknown as ResourceClaimView[]) {
        for (const r of claim.status?.allocation?.devices.results ?? []) {
          if (ruleMatchesDevice(rule, r.driver, r.pool, r.device)) counts.taintedAllocatedDevices++;
        }
      }
    }
    const next = ruleCondition(rule, counts);
    if (
      existing &&
      existing.status === next.status &&
      existing.reason === next.reason &&
      existing.message === next.message &&
      existing.observedGeneration === next.observedGeneration
    ) {
      return;
    }
    const condition: Condition = { ...next, lastTransitionTime: metaNow() };
    const stored = this.o.taintRules?.get(undefined, rule.metadata.name) as unknown as
      DeviceTaintRule | undefined;
    // Apply only to the same rule (the UID precondition of ApplyStatus).
    if (!stored || stored.metadata.uid !== rule.metadata.uid) return;
    const others = (stored.status?.conditions ?? []).filter(
      (c) => c.type !== DEVICE_TAINT_CONDITION_EVICTION_IN_PROGRESS,
    );
    this.o.taintRules!.upsert({
      ...(stored as unknown as KubeObject),
      status: { ...stored.status, conditions: [...others, condition] },
    });
    this.log.info({ deviceTaintRule: rule.metadata.name, condition }, 'Calculated new condition');
  }

  /** The ResourceSlices of the newest generation of each pool (the pools the controller tracks). */
  private newestSlices(): ResourceSlice[] {
    const slices = this.o.slices.list(() => true).items as unknown as ResourceSlice[];
    const maxGeneration = new Map<string, number>();
    for (const s of slices) {
      const pool = `${s.spec.driver}/${s.spec.pool.name}`;
      maxGeneration.set(pool, Math.max(maxGeneration.get(pool) ?? -Infinity, s.spec.pool.generation));
    }
    return slices.filter(
      (s) => s.spec.pool.generation === maxGeneration.get(`${s.spec.driver}/${s.spec.pool.name}`),
    );
  }

  private publishedDevices(): { driver: string; pool: string; device: string }[] {
    return this.newestSlices().flatMap((s) =>
      (s.spec.devices ?? []).map((d) => ({ driver: s.spec.driver, pool: s.spec.pool.name, device: d.name })),
    );
  }

  /** NoExecute taints per `<driver>/<pool>/<device>` from the newest generation of each pool. */
  private noExecuteTaints(): Map<string, DeviceTaint[]> {
    const out = new Map<string, DeviceTaint[]>();
    for (const s of this.newestSlices()) {
      for (const d of s.spec.devices ?? []) {
        const taints = (d.taints ?? []).filter((t) => t.effect === 'NoExecute');
        if (taints.length) out.set(`${s.spec.driver}/${s.spec.pool.name}/${d.name}`, taints);
      }
    }
    return out;
  }

  /** podEvictionTime: the earliest eviction time over the pod's claims, null when none is tainted. */
  private podEvictionTime(
    pod: EvictionCandidate,
    taintsByDevice: Map<string, DeviceTaint[]>,
    rules: DeviceTaintRule[],
  ): { at: number; reasons: EvictionReason[] } | null {
    let at: number | null = null;
    const reasons: EvictionReason[] = [];
    for (const ref of podClaims(pod)) {
      const claim = this.o.claims.get(pod.namespace, ref.name) as unknown as ResourceClaimView | undefined;
      const allocation = claim?.status?.allocation;
      if (!claim || !allocation) continue;
      if (ref.mustCheckOwner && isForPod(pod, claim) !== null) continue;
      if (!isReservedForPod(pod, claim)) continue;
      for (const result of allocation.devices.results ?? []) {
        const id = `${result.driver}/${result.pool}/${result.device}`;
        const taints: { taint: DeviceTaint; reason: EvictionReason }[] = [
          ...(taintsByDevice.get(id) ?? []).map((taint, i) => ({
            taint,
            reason: { origin: `ResourceSlice ${id} taint #${i}` },
          })),
          ...rules
            .filter(
              (r) =>
                r.spec.taint.effect === 'NoExecute' &&
                ruleMatchesDevice(r, result.driver, result.pool, result.device),
            )
            .map((r) => ({
              taint: r.spec.taint,
              reason: {
                origin: `DeviceTaintRule ${r.metadata.name}`,
                ...(r.metadata.uid ? { ruleUid: r.metadata.uid } : {}),
              },
            })),
        ];
        for (const { taint, reason } of taints) {
          let seconds = Infinity;
          let tolerated = false;
          let forever = false;
          for (const t of result.tolerations ?? []) {
            if (t.effect !== 'NoExecute' || !toleratesTaint(t, taint)) continue;
            if (t.tolerationSeconds === undefined) forever = true;
            else {
              tolerated = true;
              seconds = Math.min(seconds, Math.max(0, t.tolerationSeconds));
            }
          }
          if (forever) continue;
          // timeAdded is set by the API server; a taint without one counts from now.
          const added = taint.timeAdded ? Date.parse(taint.timeAdded) : Date.now();
          const when = tolerated ? added + seconds * 1000 : added;
          reasons.push(reason);
          if (at === null || when < at) at = when;
        }
      }
    }
    return at === null ? null : { at, reasons };
  }
}
