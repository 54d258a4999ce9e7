// kube-scheduler's scheduling cycle for a pod with ResourceClaims on this one node
// (pkg/scheduler/schedule_one.go around the DynamicResources plugin, 1.37): the plugin itself is
// the pure `allocateClaims` of the scheduler module; this file reads its inputs from the API
// slice's stores (the pod's claims, every ResourceSlice, DeviceClass, allocated claim and
// DeviceTaintRule) and persists its outcome as PreBind does: `status.allocation` and
// `status.reservedFor` of each claim (with the delete-protection finalizer), or the deallocation
// its PostFilter asks for. An unschedulable pod is retried when a ResourceSlice, DeviceClass,
// ResourceClaim, ResourceClaimTemplate or DeviceTaintRule changes (the plugin's queueing hints),
// never by its own writes.
//
// Extended resources backed by DRA: a pod asking for a name a DeviceClass maps (and no device
// plugin serves here) gets its special claim created here, as PreBind does — generateName
// `<pod>-extended-resources-`, named by the API server, allocated, reserved, with the finalizer —
// and the caller records `status.extendedResourceClaimStatus` on the pod.

import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { effectiveRequests, parseInteger, type PodRequests } from '@plugboard/topology';
import type { KubeObject, ObjectStore, ResourceVersionClock } from '../apiserver/object-store.js';
import { dropDeallocatedStatusDevices } from '../apiserver/registry/resource.js';
import {
  allocateClaims,
  DeviceClassResolver,
  generateName,
  hasDeviceClassMappedExtendedResource,
  SelectorCache,
} from '../scheduler/index.js';
import type { PodExtendedResourceClaimStatus } from '../cm/dra/types.js';
import { kubeTime } from '../util/kube-time.js';
import type { DeviceClass, DeviceTaintRule, ResourceClaim, ResourceSlice } from '../scheduler/index.js';
import { asPodObject, type ControlPlanePod } from './resourceclaim-controller.js';

export const DEFAULT_SCHEDULER = 'default-scheduler';

export type ScheduleResult =
  | {
      ok: true;
      /** The special claim the scheduler created for the pod's extended resources backed by DRA. */
      extendedResourceClaimStatus?: PodExtendedResourceClaimStatus;
    }
  | { ok: false; reason: 'Unschedulable' | 'SchedulerError'; message: string };

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

  /**
   * hasDeviceClassMappedExtendedResource: the pod requests an extended resource that a DeviceClass
   * maps, so the DynamicResources plugin has work even without claims.
   */
  hasDeviceClassMappedExtendedResource(pod: PodRequests): boolean {
    const resolver = new DeviceClassResolver(
      this.o.classes.list(() => true).items as unknown as DeviceClass[],
    );
    return hasDeviceClassMappedExtendedResource(effectiveRequests(pod), resolver);
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
        ...(pod.containers
          ? {
              extendedResources: {
                pod: {
                  name: pod.name,
                  namespace: pod.namespace,
                  uid: pod.uid,
                  initContainers: pod.initContainers ?? [],
                  containers: pod.containers,
                },
                allocatable: scalarAllocatable(node),
              },
            }
          : {}),
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
        const extendedResourceClaimStatus = result.extendedResourceClaim
          ? this.createExtendedResourceClaim(result.extendedResourceClaim)
          : undefined;
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
        return extendedResourceClaimStatus ? { ok: true, extendedResourceClaimStatus } : { ok: true };
      }
      for (const uid of result.deallocate ?? []) this.deallocate(uid);
      for (const uid of result.deleteClaims ?? []) {
        const claim = this.o.claims.list((c) => c.metadata.uid === uid).items[0];
        if (claim) this.o.claims.delete(claim.metadata.namespace, claim.metadata.name);
      }
      this.log.info(
        { pod: `${pod.namespace}/${pod.name}`, reason: result.reason, message: result.message },
        'pod is unschedulable',
      );
      return { ok: false, reason: result.reason, message: result.message };
    } finally {
      this.attemptedAt = this.o.clock.current();
    }
  }

  /**
   * PreBind's createExtendedResourceClaimInAPI and the status update after it: the API server
   * names the claim from its generateName; the claim is stored allocated and reserved.
   */
  private createExtendedResourceClaim(ext: {
    claim: ResourceClaim;
    mappings: PodExtendedResourceClaimStatus['requestMappings'];
  }): PodExtendedResourceClaimStatus {
    const { claim } = ext;
    const created = this.o.claims.upsert({
      ...(claim as unknown as KubeObject),
      metadata: {
        ...(claim.metadata as KubeObject['metadata']),
        name: generateName(claim.metadata.generateName ?? ''),
        uid: randomUUID(),
        creationTimestamp: kubeTime(),
        generation: 1,
      },
    });
    this.log.info(
      {
        claim: `${created.metadata.namespace ?? ''}/${created.metadata.name}`,
        devices: (claim.status?.allocation?.devices.results ?? []).map(
          (r) => `${r.driver}/${r.pool}/${r.device}`,
        ),
      },
      'created ResourceClaim for extended resources',
    );
    return { requestMappings: ext.mappings, resourceClaimName: created.metadata.name };
  }

  /** PostFilter: a claim allocated for another node and reserved by nobody else is deallocated. */
  private deallocate(uid: string): void {
    const claim = this.o.claims.list((c) => c.metadata.uid === uid).items[0];
    if (!claim) return;
    const status = { ...((claim['status'] as Record<string, unknown> | undefined) ?? {}) };
    delete status['allocation'];
    delete status['reservedFor'];
    const next = { ...claim, status };
    dropDeallocatedStatusDevices(next, claim);
    this.o.claims.upsert(next);
  }
}

/** The Node's status.allocatable as counts (what the scheduler's NodeInfo has as scalar resources). */
function scalarAllocatable(node: KubeObject | undefined): Map<string, number> {
  const allocatable =
    (node?.['status'] as { allocatable?: Record<string, string> } | undefined)?.allocatable ?? {};
  const out = new Map<string, number>();
  for (const [name, value] of Object.entries(allocatable)) {
    const n = parseInteger(value);
    if (n !== undefined) out.set(name, n);
  }
  return out;
}
