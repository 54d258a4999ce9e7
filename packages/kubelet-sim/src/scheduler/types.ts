// The resource.k8s.io/v1 and core/v1 fields the scheduler's DRA allocation reads and writes, as the
// plain JSON objects the API serves. The resource.k8s.io/v1 types, the node selectors and ObjectMeta
// have one definition (@plugboard/k8s-api, @plugboard/apimachinery), re-exported here, and so do the
// Pod's claim fields; the Pod below is the part of core/v1 the resourceclaim controller reads.
import type { ObjectMeta } from '@plugboard/apimachinery';
import type { PodResourceClaim, PodResourceClaimStatus } from '@plugboard/k8s-api';

export type { ObjectMeta, OwnerReference } from '@plugboard/apimachinery';
export type * from '@plugboard/k8s-api';

// --- core/v1 -------------------------------------------------------------------------------------

export interface Pod {
  metadata: ObjectMeta & { name: string };
  spec: { resourceClaims?: PodResourceClaim[]; nodeName?: string; [field: string]: unknown };
  status?: { resourceClaimStatuses?: PodResourceClaimStatus[]; [field: string]: unknown };
}
