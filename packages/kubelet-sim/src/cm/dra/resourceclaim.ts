// k8s.io/dynamic-resource-allocation/resourceclaim (resourceclaim.go, 1.37), the helpers the kubelet,
// the scheduler and the controllers share: which ResourceClaim a pod's claim entry names, whether a
// claim was generated for a pod, whether it is reserved for it. Errors carry upstream's text.

import { isDRAExtendedResourceName } from '../../scheduler/index.js';
import type { DraContainer, DraPod, PodResourceClaim, ResourceClaimView } from './types.js';

export class ClaimNameError extends Error {
  override readonly name = 'ClaimNameError';
  constructor(
    message: string,
    /** ErrClaimNotFound (the template's claim is not created yet) rather than ErrAPIUnsupported. */
    readonly notCreatedYet: boolean,
  ) {
    super(message);
  }
}

/**
 * resourceclaim.Name: the ResourceClaim's name and whether IsForPod must be checked; null when the
 * claim intentionally was not created (the entry can be ignored). Throws ClaimNameError.
 */
export function claimName(
  pod: DraPod,
  podClaim: PodResourceClaim,
): { name: string; mustCheckOwner: boolean } | null {
  if (podClaim.resourceClaimName !== undefined)
    return { name: podClaim.resourceClaimName, mustCheckOwner: false };
  if (podClaim.resourceClaimTemplateName !== undefined) {
    const status = pod.resourceClaimStatuses.find((s) => s.name === podClaim.name);
    if (status)
      return status.resourceClaimName === undefined
        ? null
        : { name: status.resourceClaimName, mustCheckOwner: true };
    throw new ClaimNameError(`pod "${pod.namespace}/${pod.name}": ResourceClaim not created yet`, true);
  }
  throw new ClaimNameError(
    `pod "${pod.namespace}/${pod.name}", spec.resourceClaim ${JSON.stringify(podClaim.name)}: none of the supported fields are set`,
    false,
  );
}

/**
 * resourceclaim.PodClaims: the pod's claims by name (entries whose claim is not created yet, or
 * not needed, are skipped), then the special claim of its extended resources (owner checked).
 */
export function podClaims(pod: DraPod): { name: string; mustCheckOwner: boolean }[] {
  const out: { name: string; mustCheckOwner: boolean }[] = [];
  for (const podClaim of pod.resourceClaims) {
    let ref;
    try {
      ref = claimName(pod, podClaim);
    } catch {
      continue;
    }
    if (ref) out.push(ref);
  }
  const ext = pod.extendedResourceClaimStatus?.resourceClaimName;
  if (ext) out.push({ name: ext, mustCheckOwner: true });
  return out;
}

/** resourceclaim.IsForPod: the claim's controller is the pod; returns the error text or null. */
export function isForPod(pod: DraPod, claim: ResourceClaimView): string | null {
  const ns = claim.metadata.namespace ?? '';
  const name = claim.metadata.name ?? '';
  if (ns !== pod.namespace)
    return `ResourceClaim ${ns}/${name} is not in the same namespace as Pod ${pod.namespace}/${pod.name}`;
  const controller = claim.metadata.ownerReferences?.find((o) => o.controller);
  if (!controller || controller.uid !== pod.uid)
    return `ResourceClaim ${ns}/${name} was not created for Pod ${pod.namespace}/${pod.name} (Pod is not owner)`;
  return null;
}

/** resourceclaim.IsReservedForPod. */
export function isReservedForPod(pod: DraPod, claim: ResourceClaimView): boolean {
  return (claim.status?.reservedFor ?? []).some((r) => r.uid === pod.uid);
}

/** resourceclaim.BaseRequestRef: `request/subrequest` → `request`. */
export function baseRequestRef(request: string): string {
  const i = request.indexOf('/');
  return i < 0 ? request : request.slice(0, i);
}

/**
 * The requests of the pod's special claim whose devices a container gets (GetResources): those its
 * request mappings name for a resource the container requests (non-zero).
 */
export function extendedResourceRequestNames(pod: DraPod, container: DraContainer): string[] {
  return (pod.extendedResourceClaimStatus?.requestMappings ?? [])
    .filter(
      (m) =>
        m.containerName === container.name &&
        isDRAExtendedResourceName(m.resourceName) &&
        (container.requests.get(m.resourceName) ?? 0) !== 0,
    )
    .map((m) => m.requestName);
}
