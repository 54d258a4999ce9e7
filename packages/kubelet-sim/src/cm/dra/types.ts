// The resource.k8s.io/v1 and core/v1 fields the kubelet's DRA manager reads (k8s.io/api, 1.37), as
// structural types over the JSON objects the API slice stores. The scheduler and controllers keep
// their own, fuller view of the same objects.
import type { OwnerReference } from '@plugboard/apimachinery';
import type {
  ContainerClaim,
  ContainerExtendedResourceRequest,
  DeviceTaintEffect,
  PodExtendedResourceClaimStatus,
  PodResourceClaim,
  PodResourceClaimStatus,
  ResourceClaimConsumerReference,
} from '@plugboard/k8s-api';

export type {
  ContainerClaim,
  ContainerExtendedResourceRequest,
  PodExtendedResourceClaimStatus,
  PodResourceClaim,
  PodResourceClaimStatus,
};

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

/** What the DRA manager needs of a pod (v1.Pod's fields it reads). */
export interface DraPod {
  name: string;
  namespace: string;
  uid: string;
  resourceClaims: PodResourceClaim[];
  resourceClaimStatuses: PodResourceClaimStatus[];
  /** Set by the scheduler when it allocated extended resources through DRA. */
  extendedResourceClaimStatus?: PodExtendedResourceClaimStatus | null;
}

/** A container as GetResources and GetContainerClaimInfos read it. */
export interface DraContainer {
  name: string;
  /** `resources.claims`. */
  claims: ContainerClaim[];
  /** `resources.requests` (extended resources as counts). */
  requests: ReadonlyMap<string, number>;
}

/** The annotation on a claim generated from a template naming the pod's claim entry. */
export const POD_CLAIM_NAME_ANNOTATION = 'resource.kubernetes.io/pod-claim-name';
