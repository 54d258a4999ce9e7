// The device taint eviction controller of kube-controller-manager
// (pkg/controller/devicetainteviction/device_taint_eviction.go, 1.37): a pod that uses an allocated
// ResourceClaim (reserved for it) with a device carrying a NoExecute taint — from its ResourceSlice
// (the pool's newest generation) or from a DeviceTaintRule — that the allocation result does not
// tolerate is evicted at the taint's timeAdded (plus the smallest tolerationSeconds of the
// tolerations that tolerate it for a limited time): a Normal `DeviceTaintManagerEviction`
// "Marking for deletion" event, the `DisruptionTarget` condition (reason
// DeletionByDeviceTaintManager, "Device Taint manager: deleting due to NoExecute taint"), then the
// pod is deleted. An eviction that is no longer needed before it fires is cancelled with a
// "Cancelling deletion" event.

import type { Logger } from 'pino';
import type { EventRecorder } from '../apiserver/events.js';
import type { ObjectStore, ResourceVersionClock } from '../apiserver/object-store.js';
import { claimName, isForPod, isReservedForPod } from '../cm/dra/resourceclaim.js';
import type { ResourceClaimView } from '../cm/dra/types.js';
import { toleratesTaint } from '../scheduler/index.js';
import type { DeviceTaint, DeviceTaintRule, ResourceSlice } from '../scheduler/index.js';
import type { ControlPlanePod } from './resourceclaim-controller.js';

/** names.DeviceTaintEvictionController: the events' source. */
export const DEVICE_TAINT_EVICTION_CONTROLLER = 'device-taint-eviction-controller';
export const DISRUPTION_REASON = 'DeletionByDeviceTaintManager';
export const DISRUPTION_MESSAGE = 'Device Taint manager: deleting due to NoExecute taint';

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
}

interface Planned {
  at: number;
  timer: NodeJS.Timeout;
  reasons: string[];
}

export class DeviceTaintEvictionController {
  private readonly planned = new Map<string, Planned>();
  private readonly cancels: (() => void)[] = [];
  private queued = false;
  private readonly log: Logger;

  constructor(private readonly o: DeviceTaintEvictionOptions) {
    this.log = o.logger.child({ component: DEVICE_TAINT_EVICTION_CONTROLLER });
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
    const rules = (this.o.taintRules?.list(() => true).items ?? []) as unknown as DeviceTaintRule[];
    const seen = new Set<string>();
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
          reasons: eviction.reasons,
        },
        'Going to evict pod',
      );
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
    if (!this.planned.has(key)) return;
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
    } catch (err) {
      this.log.warn({ pod: `${pod.namespace}/${pod.name}`, err: String(err) }, 'pod eviction failed');
    }
  }

  /** NoExecute taints per `<driver>/<pool>/<device>` from the newest generation of each pool. */
  private noExecuteTaints(): Map<string, DeviceTaint[]> {
    const slices = this.o.slices.list(() => true).items as unknown as ResourceSlice[];
    const maxGeneration = new Map<string, number>();
    for (const s of slices) {
      const pool = `${s.spec.driver}/${s.spec.pool.name}`;
      maxGeneration.set(pool, Math.max(maxGeneration.get(pool) ?? -Infinity, s.spec.pool.generation));
    }
    const out = new Map<string, DeviceTaint[]>();
    for (const s of slices) {
      const pool = `${s.spec.driver}/${s.spec.pool.name}`;
      if (s.spec.pool.generation !== maxGeneration.get(pool)) continue;
      for (const d of s.spec.devices ?? []) {
        const taints = (d.taints ?? []).filter((t) => t.effect === 'NoExecute');
        if (taints.length) out.set(`${pool}/${d.name}`, taints);
      }
    }
    return out;
  }

  /** podEvictionTime: the earliest eviction time over the pod's claims, null when none is tainted. */
  private podEvictionTime(
    pod: EvictionCandidate,
    taintsByDevice: Map<string, DeviceTaint[]>,
    rules: DeviceTaintRule[],
  ): { at: number; reasons: string[] } | null {
    let at: number | null = null;
    const reasons: string[] = [];
    for (const podClaim of pod.resourceClaims) {
      let ref;
      try {
        ref = claimName(pod, podClaim);
      } catch {
        continue;
      }
      if (!ref) continue;
      const claim = this.o.claims.get(pod.namespace, ref.name) as unknown as ResourceClaimView | undefined;
      const allocation = claim?.status?.allocation;
      if (!claim || !allocation) continue;
      if (ref.mustCheckOwner && isForPod(pod, claim) !== null) continue;
      if (!isReservedForPod(pod, claim)) continue;
      for (const result of allocation.devices.results ?? []) {
        const id = `${result.driver}/${result.pool}/${result.device}`;
        const taints: { taint: DeviceTaint; origin: string }[] = [
          ...(taintsByDevice.get(id) ?? []).map((taint, i) => ({
            taint,
            origin: `ResourceSlice ${id} taint #${i}`,
          })),
          ...rules
            .filter(
              (r) =>
                r.spec.taint.effect === 'NoExecute' &&
                r.spec.deviceSelector !== undefined &&
                (r.spec.deviceSelector.driver === undefined ||
                  r.spec.deviceSelector.driver === result.driver) &&
                (r.spec.deviceSelector.pool === undefined || r.spec.deviceSelector.pool === result.pool) &&
                (r.spec.deviceSelector.device === undefined ||
                  r.spec.deviceSelector.device === result.device),
            )
            .map((r) => ({ taint: r.spec.taint, origin: `DeviceTaintRule ${r.metadata.name}` })),
        ];
        for (const { taint, origin } of taints) {
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
          reasons.push(origin);
          if (at === null || when < at) at = when;
        }
      }
    }
    return at === null ? null : { at, reasons };
  }
}
