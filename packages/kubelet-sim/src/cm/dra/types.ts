// The resource.k8s.io/v1 and core/v1 fields the kubelet's DRA manager reads (k8s.io/api, 1.37), as
// structural types over the JSON objects the API slice stores. The scheduler and controllers keep
// their own, fuller view of the same objects.
import type { OwnerReference } from '@plugboard/apimachinery';
import type { DeviceTaintEffect, ResourceClaimConsumerReference } from '@plugboard/k8s-api';

export interface DeviceRequestAllocationResult {
  request: string;
  driver: string;
  pool: string;
  device: string;
  adminAccess?: boolean;
  tolerations?: DeviceTolerationView[];
}

export interface DeviceTolerationView {
  key?: string;
  operator?: string;
  value?: string;
  effect?: DeviceTaintEffect;
  tolerationSeconds?: number;
}

export interface ResourceClaimView {
  metadata: {
    name?: string;
    namespace?: string;
    uid?: string;
    annotations?: Record<string, string>;
    ownerReferences?: OwnerReference[];
    finalizers?: string[];
    [field: string]: unknown;
  };
  spec: unknown;
  status?: {
    allocation?: {
      devices: { results?: DeviceRequestAllocationResult[]; config?: unknown[] };
      nodeSelector?: unknown;
      [field: string]: unknown;
    };
    reservedFor?: ResourceClaimConsumerReference[];
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/** `pod.spec.resourceClaims[]`. */
export interface PodResourceClaim {
  name: string;
  resourceClaimName?: string;
  resourceClaimTemplateName?: string;
}

/** `pod.status.resourceClaimStatuses[]`. */
export interface PodResourceClaimStatus {
  name: string;
  resourceClaimName?: string;
}

/** `container.resources.claims[]`. */
export interface ContainerClaim {
  name: string;
  request?: string;
}

/** What the DRA manager needs of a pod (v1.Pod's fields it reads). */
export interface DraPod {
  name: string;
  namespace: string;
  uid: string;
  resourceClaims: PodResourceClaim[];
  resourceClaimStatuses: PodResourceClaimStatus[];
}

/** The annotation on a claim generated from a template naming the pod's claim entry. */
export const POD_CLAIM_NAME_ANNOTATION = 'resource.kubernetes.io/pod-claim-name';
