// kube-scheduler's scheduling cycle for a pod with ResourceClaims on this one node
// (pkg/scheduler/schedule_one.go around the DynamicResources plugin, 1.37): the plugin itself is
// the pure `allocateClaims` of the scheduler module; this file reads its inputs from the API
// slice's stores (the pod's claims, every ResourceSlice, DeviceClass, allocated claim and
// DeviceTaintRule) and persists its outcome as PreBind does: `status.allocation` and
// `status.reservedFor` of each claim (with the delete-protection finalizer), or the deallocation
// its PostFilter asks for. An unschedulable pod is retried when a ResourceSlice, DeviceClass,
// ResourceClaim, ResourceClaimTemplate or DeviceTaintRule changes (the plugin's queueing hints),
// never by its own writes.

import type { Logger } from 'pino';
import type { KubeObject, ObjectStore, ResourceVersionClock } from '../apiserver/object-store.js';
import { allocateClaims, SelectorCache } from '../scheduler/index.js';
import type { DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice } from '../scheduler/index.js';
import { asPodObject, type ControlPlanePod } from './resourceclaim-controller.js';

export const DEFAULT_SCHEDULER = 'default-scheduler';

export type ScheduleResult =
  { ok: true } | { ok: false; reason: 'Unschedulable' | 'SchedulerError'; message: string };

export interface DraSchedulerOptions {
  nodeName: string;
  nodes: ObjectStore;
  claims: ObjectStore;
  slices: ObjectStore;
  classes: ObjectStore;
  templates: ObjectStore;
  /** DeviceTaintRules when the API slice serves them. */
  taintRules?: ObjectStore;
  clock: ResourceVersionClock;
  logger: Logger;
}

export class DraScheduler {
  private readonly celCache = new SelectorCache();
  private readonly log: Logger;
  /** The clock after the last attempt: later changes may make an unschedulable pod fit. */
  private attemptedAt = 0;
  private readonly cancels: (() => void)[] = [];

  constructor(private readonly o: DraSchedulerOptions) {
    this.log = o.logger.child({ component: DEFAULT_SCHEDULER });
  }

  /**
   * Calls `retry` (once per turn of the event loop) when a change may let a pending pod fit.
   * Returns the cancel; stop() cancels every watch.
   */
  watch(retry: () => void): () => void {
    let queued = false;
    const onChange = (e: { object: unknown }) => {
      const rv = Number((e.object as KubeObject).metadata?.resourceVersion ?? 0);
      if (rv <= this.attemptedAt || queued) return;
      queued = true;
      setImmediate(() => {
        queued = false;
        retry();
      });
    };
    const cancels: (() => void)[] = [];
    for (const store of [this.o.slices, this.o.classes, this.o.claims, this.o.templates, this.o.taintRules]) {
      if (!store) continue;
      const w = store.watch(this.o.clock.current(), () => true, onChange);
      if (w.ok) cancels.push(w.cancel);
    }
    const cancel = () => {
      for (const c of cancels.splice(0)) c();
    };
    this.cancels.push(cancel);
    return cancel;
  }

  stop(): void {
    for (const cancel of this.cancels.splice(0)) cancel();
  }

  /** One scheduling cycle for the pod's claims on this node; persists the claims it allocates. */
  schedule(pod: ControlPlanePod): ScheduleResult {
    try {
      const node = this.o.nodes.get(undefined, this.o.nodeName);
      const labels = (node?.metadata['labels'] as Record<string, string> | undefined) ?? {
        'kubernetes.io/hostname': this.o.nodeName,
      };
      const all = <T>(store: ObjectStore | undefined) =>
        (store?.list(() => true).items ?? []) as unknown as T[];
      const claims = all<ResourceClaim>(this.o.claims);
      const result = allocateClaims({
        pod: asPodObject(pod),
        nodeName: this.o.nodeName,
        nodeLabels: labels,
        claims: claims.filter((c) => c.metadata.namespace === pod.namespace),
        slices: all<ResourceSlice>(this.o.slices),
        classes: all<DeviceClass>(this.o.classes),
        allocated: claims.filter((c) => c.status?.allocation !== undefined),
        taintRules: all<DeviceTaintRule>(this.o.taintRules),
        celCache: this.celCache,
      });
      if (result.ok) {
        for (const claim of result.claims) this.o.claims.upsert(claim as unknown as KubeObject);
        this.log.info(
          {
            pod: `${pod.namespace}/${pod.name}`,
            claims: result.claims.map((c) => ({
              claim: c.metadata.name,
              devices: (c.status?.allocation?.devices.results ?? []).map(
                (r) => `${r.driver}/${r.pool}/${r.device}`,
              ),
            })),
          },
          'allocated and reserved ResourceClaims',
        );
        return { ok: true };
      }
      for (const uid of result.deallocate ?? []) this.deallocate(uid);
      this.log.info(
        { pod: `${pod.namespace}/${pod.name}`, reason: result.reason, message: result.message },
        'pod is unschedulable',
      );
      return { ok: false, reason: result.reason, message: result.message };
    } finally {
      this.attemptedAt = this.o.clock.current();
    }
  }

  /** PostFilter: a claim allocated for another node and reserved by nobody else is deallocated. */
  private deallocate(uid: string): void {
    const claim = this.o.claims.list((c) => c.metadata.uid === uid).items[0];
    if (!claim) return;
    const status = { ...((claim['status'] as Record<string, unknown> | undefined) ?? {}) };
    delete status['allocation'];
    delete status['reservedFor'];
    this.o.claims.upsert({ ...claim, status });
  }
}
