// The resource.k8s.io/v1 and core/v1 fields the scheduler's DRA allocation reads and writes, as the
// plain JSON objects the API serves. The resource.k8s.io/v1 types, the node selectors and ObjectMeta
// have one definition (@plugboard/k8s-api, @plugboard/apimachinery), re-exported here; the Pod fields
// the resourceclaim controller reads are kubelet-sim's own view of core/v1.
import type { ObjectMeta } from '@plugboard/apimachinery';

export type { ObjectMeta, OwnerReference } from '@plugboard/apimachinery';
export type * from '@plugboard/k8s-api';

// --- core/v1 -------------------------------------------------------------------------------------

/** `pod.spec.resourceClaims[]`: exactly one of the two sources is set. */
export interface PodResourceClaim {
  name: string;
  resourceClaimName?: string;
  resourceClaimTemplateName?: string;
}

/** `pod.status.resourceClaimStatuses[]`: the claim generated for a template (unset: none needed). */
export interface PodResourceClaimStatus {
  name: string;
  resourceClaimName?: string;
}

export interface Pod {
  metadata: ObjectMeta & { name: string };
  spec: { resourceClaims?: PodResourceClaim[]; nodeName?: string; [field: string]: unknown };
  status?: { resourceClaimStatuses?: PodResourceClaimStatus[]; [field: string]: unknown };
}
