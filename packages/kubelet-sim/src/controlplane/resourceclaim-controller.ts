// The ResourceClaim controller of kube-controller-manager (pkg/controller/resourceclaim/controller.go,
// 1.37), for the pods of this node, writing through the API slice's stores:
// - syncPod: a pod's template references get their ResourceClaims (claimsFromTemplates of the
//   scheduler module: name, owner, annotation, template labels and spec), recorded in the pod's
//   `status.resourceClaimStatuses`; a missing template is a FailedResourceClaimCreation event. A
//   pod that names its node (it bypasses the scheduler) gets its already allocated claims reserved
//   (reserveForPod); nobody allocates the others, so the kubelet will refuse them.
// - syncClaim: once a pod is gone or done, it leaves the claims' `status.reservedFor`; a claim
//   that nobody uses any more is deallocated (allocation and the delete-protection finalizer
//   removed), and a claim generated for that pod is deleted (by the controller for a pod that is
//   done, by the garbage collector for one that is gone — the same end result here).

import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { EventRecorder } from '../apiserver/events.js';
import type { KubeObject, ObjectStore } from '../apiserver/object-store.js';
import { dropDeallocatedStatusDevices } from '../apiserver/registry/resource.js';
import { claimName, isForPod } from '../cm/dra/resourceclaim.js';
import type { ContainerRequests } from '@plugboard/topology';
import type {
  PodExtendedResourceClaimStatus,
  PodResourceClaim,
  PodResourceClaimStatus,
  ResourceClaimView,
} from '../cm/dra/types.js';
import { claimsFromTemplates, RESOURCE_CLAIM_FINALIZER } from '../scheduler/index.js';
import type { Pod, ResourceClaim, ResourceClaimTemplate } from '../scheduler/index.js';
import { kubeTime } from '../util/kube-time.js';

/** resourceapi.ResourceClaimReservedForMaxSize (CanBeReserved). */
const RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE = 256;

/** The controller's name as kube-controller-manager registers it (events' source). */
export const RESOURCE_CLAIM_CONTROLLER = 'resourceclaim-controller';

export interface ControlPlanePod {
  name: string;
  namespace: string;
  uid: string;
  resourceClaims: PodResourceClaim[];
  resourceClaimStatuses: PodResourceClaimStatus[];
  /** spec.nodeName once bound (or as submitted). */
  nodeName: string | null;
  /** The containers' requests: the scheduler maps extended resources to DeviceClasses (DRAExtendedResource). */
  initContainers?: readonly ContainerRequests[];
  containers?: readonly ContainerRequests[];
  /** The special claim of the pod's extended resources, once the scheduler created it. */
  extendedResourceClaimStatus?: PodExtendedResourceClaimStatus | null;
}

export interface ResourceClaimControllerOptions {
  claims: ObjectStore;
  templates: ObjectStore;
  events: EventRecorder;
  logger: Logger;
}

export const asPodObject = (pod: ControlPlanePod): Pod => ({
  metadata: { name: pod.name, namespace: pod.namespace, uid: pod.uid },
  spec: {
    resourceClaims: pod.resourceClaims,
    ...(pod.nodeName ? { nodeName: pod.nodeName } : {}),
  },
  status: { resourceClaimStatuses: pod.resourceClaimStatuses },
});

export class ResourceClaimController {
  private readonly log: Logger;

  constructor(private readonly o: ResourceClaimControllerOptions) {
    this.log = o.logger.child({ component: RESOURCE_CLAIM_CONTROLLER });
  }

  /**
   * syncPod: creates the claims of the pod's template references; answers the pod's
   * resourceClaimStatuses after the update (unchanged entries kept).
   */
  syncPod(pod: ControlPlanePod): PodResourceClaimStatus[] {
    const statuses = this.createFromTemplates(pod);
    if (pod.nodeName) this.reservePreScheduled({ ...pod, resourceClaimStatuses: statuses });
    return statuses;
  }

  /** reserveForPod for a pod bound without the scheduler: allocated claims get its reservation. */
  private reservePreScheduled(pod: ControlPlanePod): void {
    for (const podClaim of pod.resourceClaims) {
      let ref;
      try {
        ref = claimName(pod, podClaim);
      } catch {
        continue;
      }
      if (!ref) continue;
      const obj = this.o.claims.get(pod.namespace, ref.name);
      const claim = obj as unknown as ResourceClaim | undefined;
      if (!obj || !claim?.status?.allocation) continue;
      if (ref.mustCheckOwner && isForPod(pod, claim as unknown as ResourceClaimView) !== null) continue;
      const reserved = claim.status.reservedFor ?? [];
      if (reserved.some((r) => r.uid === pod.uid) || reserved.length >= RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE)
        continue;
      this.o.claims.upsert({
        ...obj,
        status: {
          ...claim.status,
          reservedFor: [...reserved, { resource: 'pods', name: pod.name, uid: pod.uid }],
        },
      });
      this.log.info(
        { claim: `${pod.namespace}/${ref.name}`, pod: `${pod.namespace}/${pod.name}` },
        'reserved claim for pod',
      );
    }
  }

  private createFromTemplates(pod: ControlPlanePod): PodResourceClaimStatus[] {
    if (!pod.resourceClaims.some((c) => c.resourceClaimTemplateName !== undefined))
      return pod.resourceClaimStatuses;
    const inNamespace = (o: KubeObject) => o.metadata.namespace === pod.namespace;
    const result = claimsFromTemplates(
      asPodObject(pod),
      this.o.templates.list(inNamespace).items as unknown as ResourceClaimTemplate[],
      { existing: this.o.claims.list(inNamespace).items as unknown as ResourceClaim[] },
    );
    for (const claim of result.claims) {
      if (this.o.claims.get(claim.metadata.namespace, claim.metadata.name ?? '')) continue;
      const created = this.o.claims.upsert({
        ...(claim as unknown as KubeObject),
        metadata: {
          ...(claim.metadata as KubeObject['metadata']),
          uid: claim.metadata.uid ?? randomUUID(),
          creationTimestamp: kubeTime(),
          generation: 1,
        },
      });
      this.log.info(
        { pod: `${pod.namespace}/${pod.name}`, claim: created.metadata.name },
        'created ResourceClaim from template',
      );
    }
    for (const error of result.errors) {
      this.o.events.record(
        { kind: 'Pod', namespace: pod.namespace, name: pod.name, uid: pod.uid },
        'Warning',
        'FailedResourceClaimCreation',
        error,
        RESOURCE_CLAIM_CONTROLLER,
      );
      this.log.warn({ pod: `${pod.namespace}/${pod.name}`, err: error }, 'ResourceClaim creation failed');
    }
    return result.resourceClaimStatuses;
  }

  /**
   * syncClaim for every claim the pod held, once the pod is gone (deleted) or done (terminal):
   * its reservation goes, an unused claim is deallocated, a claim generated for it is deleted.
   */
  podFinished(pod: ControlPlanePod): void {
    const claims = this.o.claims.list((c) => c.metadata.namespace === pod.namespace).items;
    for (const obj of claims) {
      const claim = obj as unknown as ResourceClaim;
      const reserved = claim.status?.reservedFor ?? [];
      const valid = reserved.filter((r) => !(r.resource === 'pods' && !r.apiGroup && r.uid === pod.uid));
      const owned = (claim.metadata.ownerReferences ?? []).some((r) => r.controller && r.uid === pod.uid);
      if (valid.length === reserved.length && !owned) continue;
      let current = obj;
      if (valid.length < reserved.length) {
        const status: Record<string, unknown> = { ...(claim.status ?? {}) };
        if (valid.length > 0) status['reservedFor'] = valid;
        else {
          delete status['reservedFor'];
          // The last consumer went away: deallocate, so the devices are free for other claims.
          delete status['allocation'];
        }
        const next = { ...current, status };
        dropDeallocatedStatusDevices(next, current);
        current = this.o.claims.upsert(next);
        if (valid.length === 0) {
          const finalizers = (current.metadata['finalizers'] as string[] | undefined) ?? [];
          if (finalizers.includes(RESOURCE_CLAIM_FINALIZER)) {
            const rest = finalizers.filter((f) => f !== RESOURCE_CLAIM_FINALIZER);
            const metadata: KubeObject['metadata'] = { ...current.metadata };
            if (rest.length) metadata['finalizers'] = rest;
            else delete metadata['finalizers'];
            current = this.o.claims.upsert({ ...current, metadata });
          }
          this.log.info(
            { claim: `${pod.namespace}/${current.metadata.name}` },
            'deallocated unused ResourceClaim',
          );
        }
      }
      if (owned && valid.length === 0) {
        this.o.claims.delete(pod.namespace, current.metadata.name);
        this.log.info(
          { claim: `${pod.namespace}/${current.metadata.name}`, pod: `${pod.namespace}/${pod.name}` },
          'deleted generated ResourceClaim of a finished pod',
        );
      }
    }
  }
}
