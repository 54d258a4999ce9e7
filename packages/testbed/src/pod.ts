// The pod a suite runs on its test node: one container of upstream's pause image, placed on the node
// by the scheduler through the node's hostname label (so scheduling, admission and the DRA
// allocation all take part, on kubelet-sim and on the real kubelet alike), asking for extended
// resources by `limits` and for DRA claims by name. One definition for every both-kinds suite and
// the benchmarks.

/** The image of every test pod: neither kubelet-sim nor the real cluster's fake runtime runs it. */
export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';

/** Where a pod's claim comes from: a ResourceClaimTemplate (one claim per pod) or a shared claim. */
export type PodClaimSource = { template: string } | { claim: string };

export interface PinnedPodOptions {
  /** The container's `resources.limits` (extended resources: a count each). */
  limits?: Record<string, number | string>;
  /** The pod's `resourceClaims` by name; the container asks for each one (all its requests). */
  claims?: Record<string, PodClaimSource>;
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
}

/** A Pod manifest as `kubectl apply` takes it (JSON). */
export interface PodManifest {
  apiVersion: 'v1';
  kind: 'Pod';
  metadata: { name: string; namespace: string };
  spec: {
    nodeSelector: Record<string, string>;
    restartPolicy?: 'Always' | 'OnFailure' | 'Never';
    resourceClaims?: { name: string; resourceClaimTemplateName?: string; resourceClaimName?: string }[];
    containers: {
      name: string;
      image: string;
      resources?: { limits?: Record<string, number | string>; claims?: { name: string }[] };
    }[];
  };
}

/** A pause pod named `name` in `namespace`, pinned to `node` by its hostname label. */
export function pinnedPod(
  name: string,
  namespace: string,
  node: string,
  options: PinnedPodOptions = {},
): PodManifest {
  const claims = Object.entries(options.claims ?? {});
  const resources = {
    ...(options.limits ? { limits: options.limits } : {}),
    ...(claims.length > 0 ? { claims: claims.map(([claim]) => ({ name: claim })) } : {}),
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': node },
      ...(options.restartPolicy ? { restartPolicy: options.restartPolicy } : {}),
      ...(claims.length > 0
        ? {
            resourceClaims: claims.map(([claim, from]) =>
              'template' in from
                ? { name: claim, resourceClaimTemplateName: from.template }
                : { name: claim, resourceClaimName: from.claim },
            ),
          }
        : {}),
      containers: [
        { name: 'main', image: PAUSE_IMAGE, ...(Object.keys(resources).length > 0 ? { resources } : {}) },
      ],
    },
  };
}
