// The core/v1 types resource.k8s.io/v1 refers to, and the Pod fields that refer to it
// (k8s.io/api/core/v1/types.go, 1.37), in their JSON form.

export type NodeSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';

export interface NodeSelectorRequirement {
  key: string;
  operator: NodeSelectorOperator;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface NodeSelector {
  nodeSelectorTerms: NodeSelectorTerm[];
}

// The Pod fields that refer to resource.k8s.io/v1 claims (k8s.io/api/core/v1/types.go, 1.37).

/** `pod.spec.resourceClaims[]` (v1.PodResourceClaim): exactly one of the two sources is set. */
export interface PodResourceClaim {
  name: string;
  resourceClaimName?: string;
  resourceClaimTemplateName?: string;
}

/** `pod.status.resourceClaimStatuses[]` (v1.PodResourceClaimStatus): the claim generated for a template (unset: none needed). */
export interface PodResourceClaimStatus {
  name: string;
  resourceClaimName?: string;
}

/** `container.resources.claims[]` (v1.ResourceClaim, named here for where it stands). */
export interface ContainerClaim {
  name: string;
  request?: string;
}

/** `pod.status.extendedResourceClaimStatus.requestMappings[]` (v1.ContainerExtendedResourceRequest). */
export interface ContainerExtendedResourceRequest {
  containerName: string;
  resourceName: string;
  requestName: string;
}

/**
 * `pod.status.extendedResourceClaimStatus` (v1.PodExtendedResourceClaimStatus): the special claim
 * the scheduler created for the pod's extended resources backed by DRA, and which request of it
 * serves which container's resource.
 */
export interface PodExtendedResourceClaimStatus {
  requestMappings: ContainerExtendedResourceRequest[];
  resourceClaimName: string;
}
