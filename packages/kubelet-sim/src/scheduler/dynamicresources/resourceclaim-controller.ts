// Template → claim: the ResourceClaim controller's handleClaim (kubernetes pkg/controller/resourceclaim/
// controller.go), plus the API server's generateName (k8s.io/apiserver names.SimpleNameGenerator).
//
// For every `pod.spec.resourceClaims[]` entry with a resourceClaimTemplateName and no claim recorded in
// `pod.status.resourceClaimStatuses`, a ResourceClaim is created from the template: generateName
// `<pod>-<podClaimName>-` (both parts truncated proportionally when longer than 57 characters), the
// name that plus 5 random characters, the template's labels and annotations plus
// `resource.kubernetes.io/pod-claim-name: <podClaimName>`, the pod as controlling owner
// (blockOwnerDeletion), and the template's spec. An orphan from an earlier attempt (owned by the pod,
// right annotation) is reused instead. The pod's new resourceClaimStatuses entries come back too.

import { randomInt, randomUUID } from 'node:crypto';
import type { Pod, PodResourceClaimStatus, ResourceClaim, ResourceClaimTemplate } from '../types.js';

/** resourceapi.PodResourceClaimAnnotation. */
export const POD_RESOURCE_CLAIM_ANNOTATION = 'resource.kubernetes.io/pod-claim-name';

/** k8s.io/apimachinery/pkg/util/rand's alphabet (no vowels, no confusable characters). */
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';
const MAX_NAME_LENGTH = 63;
const RANDOM_LENGTH = 5;
const MAX_GENERATED_NAME_LENGTH = MAX_NAME_LENGTH - RANDOM_LENGTH;

export interface ClaimsFromTemplatesOptions {
  /** Claims that already exist in the pod's namespace (orphans are reused). */
  existing?: readonly ResourceClaim[];
  /** The 5-character suffix of a generated name; random by default. */
  randomSuffix?: () => string;
  /** The UID the API server assigns; random by default. */
  newUID?: () => string;
}

export interface ClaimsFromTemplatesResult {
  /** The claims to create (or reused orphans), in pod.spec.resourceClaims order. */
  claims: ResourceClaim[];
  /** The pod's complete status.resourceClaimStatuses after the controller's update. */
  resourceClaimStatuses: PodResourceClaimStatus[];
  /** One per failed entry: the FailedResourceClaimCreation event message ("PodResourceClaim <name>: …"). */
  errors: string[];
}

/** names.SimpleNameGenerator.GenerateName. */
export function generateName(base: string, randomSuffix: () => string = defaultSuffix): string {
  const prefix = base.length > MAX_GENERATED_NAME_LENGTH ? base.slice(0, MAX_GENERATED_NAME_LENGTH) : base;
  return prefix + randomSuffix();
}

function defaultSuffix(): string {
  let s = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) s += ALPHANUMS[randomInt(ALPHANUMS.length)];
  return s;
}

/** The controller's generateName for a pod claim: `<pod>-<claim>-`, truncated proportionally. */
export function claimGenerateName(podName: string, podClaimName: string): string {
  let generated = `${podName}-${podClaimName}-`;
  const maxBaseLen = 57; // Leaves room for the hyphen and 5 random characters in 63.
  if (generated.length > maxBaseLen) {
    const length = generated.length;
    generated =
      podName.slice(0, Math.trunc((podName.length * maxBaseLen) / length)) +
      '-' +
      podClaimName.slice(0, Math.trunc((podClaimName.length * maxBaseLen) / length));
  }
  return generated;
}

function isControlledBy(claim: ResourceClaim, pod: Pod): boolean {
  return (claim.metadata.ownerReferences ?? []).some(
    (ref) => ref.controller === true && ref.uid === (pod.metadata.uid ?? ''),
  );
}

/** findPodResourceClaim: an existing claim owned by the pod and annotated for this pod claim. */
function findPodResourceClaim(
  pod: Pod,
  podClaimName: string,
  existing: readonly ResourceClaim[],
): ResourceClaim | undefined {
  const deterministicName = `${pod.metadata.name}-${podClaimName}`; // Kubernetes <= 1.27.
  return existing.find((claim) => {
    if (claim.metadata.namespace !== pod.metadata.namespace || !isControlledBy(claim, pod)) return false;
    const annotation = claim.metadata.annotations?.[POD_RESOURCE_CLAIM_ANNOTATION];
    if (annotation !== undefined) return annotation === podClaimName;
    return claim.metadata.name === deterministicName;
  });
}

/**
 * The ResourceClaims the controller creates for a pod's template references, the pod's resulting
 * resourceClaimStatuses and the per-entry errors (a missing template). Pure: creates nothing.
 */
export function claimsFromTemplates(
  pod: Pod,
  templates: readonly ResourceClaimTemplate[],
  opts: ClaimsFromTemplatesOptions = {},
): ClaimsFromTemplatesResult {
  const namespace = pod.metadata.namespace ?? 'default';
  const statuses = new Map<string, PodResourceClaimStatus>();
  for (const status of pod.status?.resourceClaimStatuses ?? []) statuses.set(status.name, status);
  const claims: ResourceClaim[] = [];
  const errors: string[] = [];

  for (const podClaim of pod.spec.resourceClaims ?? []) {
    const templateName = podClaim.resourceClaimTemplateName;
    if (podClaim.resourceClaimName !== undefined || templateName === undefined) continue;
    const recorded = statuses.get(podClaim.name);
    if (recorded) {
      // Recorded (or recorded as not needed): the claim exists unless it was deleted or re-owned.
      const claim = recorded.resourceClaimName
        ? opts.existing?.find(
            (c) => c.metadata.namespace === namespace && c.metadata.name === recorded.resourceClaimName,
          )
        : undefined;
      if (!recorded.resourceClaimName || (claim && isControlledBy(claim, pod))) continue;
    }

    const orphan = findPodResourceClaim(pod, podClaim.name, opts.existing ?? []);
    if (orphan) {
      claims.push(orphan);
      statuses.set(podClaim.name, { name: podClaim.name, resourceClaimName: orphan.metadata.name ?? '' });
      continue;
    }

    const template = templates.find(
      (t) => t.metadata.name === templateName && (t.metadata.namespace ?? namespace) === namespace,
    );
    if (!template) {
      errors.push(
        `PodResourceClaim ${podClaim.name}: resource claim template "${templateName}": resourceclaimtemplate.resource.k8s.io "${templateName}" not found`,
      );
      continue;
    }
    const base = claimGenerateName(pod.metadata.name, podClaim.name);
    const claim: ResourceClaim = {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceClaim',
      metadata: {
        name: generateName(base, opts.randomSuffix),
        generateName: base,
        namespace,
        uid: (opts.newUID ?? randomUUID)(),
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'Pod',
            name: pod.metadata.name,
            uid: pod.metadata.uid ?? '',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        annotations: {
          ...template.spec.metadata?.annotations,
          [POD_RESOURCE_CLAIM_ANNOTATION]: podClaim.name,
        },
        ...(template.spec.metadata?.labels ? { labels: { ...template.spec.metadata.labels } } : {}),
      },
      spec: structuredClone(template.spec.spec),
    };
    claims.push(claim);
    statuses.set(podClaim.name, { name: podClaim.name, resourceClaimName: claim.metadata.name ?? '' });
  }

  const order = (pod.spec.resourceClaims ?? []).map((c) => c.name);
  const resourceClaimStatuses = [...statuses.values()].sort(
    (a, b) => order.indexOf(a.name) - order.indexOf(b.name),
  );
  return { claims, resourceClaimStatuses, errors };
}
