// Pod input for the simulator: a Kubernetes Pod object (or the subset that matters here), parsed
// once with zod and validated and defaulted the way the API server would (pkg/apis/core/validation
// and the v1 defaults, Kubernetes 1.33) before a kubelet ever sees it. Names and the served object
// are checked here; each container's requests and limits (extended resources are integers with
// requests equal to limits, requests default to limits) are parsed by @plugboard/topology, which
// also has the QoS class and the pod-level request. Dynamic Resource Allocation: `spec.resourceClaims`
// (each a DNS label naming exactly one of a ResourceClaim or a ResourceClaimTemplate) and the
// containers' `resources.claims`, which must name one of them (validatePodResourceClaim,
// validateResourceClaimNames).

import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { containerRequests, type ContainerRequests, type PodRequests } from '@plugboard/topology';
import { fromTopology, KubeletSimError } from '../errors.js';
import type { ContainerClaim, PodExtendedResourceClaimStatus, PodResourceClaim } from '../cm/dra/types.js';

const quantity = z.union([z.string(), z.number()]);
const resourceList = z.record(z.string(), quantity);

const containerClaimSchema = z.object({ name: z.string(), request: z.string().optional() }).loose();

const containerSchema = z
  .object({
    name: z.string(),
    image: z.string().optional(),
    restartPolicy: z.literal('Always').optional(),
    resources: z
      .object({
        requests: resourceList.optional(),
        limits: resourceList.optional(),
        claims: z.array(containerClaimSchema).optional(),
      })
      .loose()
      .optional(),
  })
  .loose();

const podResourceClaimSchema = z
  .object({
    name: z.string(),
    resourceClaimName: z.string().optional(),
    resourceClaimTemplateName: z.string().optional(),
  })
  .loose();

export const podInputSchema = z
  .object({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    metadata: z
      .object({
        name: z.string(),
        namespace: z.string().optional(),
        uid: z.string().optional(),
        labels: z.record(z.string(), z.string()).optional(),
        annotations: z.record(z.string(), z.string()).optional(),
      })
      .loose(),
    spec: z
      .object({
        nodeName: z.string().optional(),
        restartPolicy: z.enum(['Always', 'OnFailure', 'Never']).optional(),
        initContainers: z.array(containerSchema).optional(),
        containers: z.array(containerSchema).min(1),
        resourceClaims: z.array(podResourceClaimSchema).optional(),
      })
      .loose(),
  })
  .loose();

export type PodSpecInput = z.input<typeof podInputSchema>;
export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';

/** A container's requests and limits (@plugboard/topology parses them) and the container as served. */
export interface ContainerSpec extends ContainerRequests {
  /** The container as it is served back (requests defaulted from limits). */
  raw: Record<string, unknown>;
  /** `resources.claims`: the pod's ResourceClaims (and requests of them) this container uses. */
  claims: ContainerClaim[];
}

export interface PodSpec extends PodRequests {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  restartPolicy: RestartPolicy;
  initContainers: ContainerSpec[];
  containers: ContainerSpec[];
  /** `spec.resourceClaims` (Dynamic Resource Allocation). */
  resourceClaims: PodResourceClaim[];
  /** spec.nodeName as submitted: a pod that names its node bypasses the scheduler. */
  requestedNodeName: string | null;
  /** spec as served back, with the API server's defaults and this node's name. */
  rawSpec: Record<string, unknown>;
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const DEFAULT_IMAGE = 'registry.k8s.io/pause:3.10';

function invalid(pod: string, field: string, detail: string): KubeletSimError {
  return new KubeletSimError('Invalid', `Pod "${pod}" is invalid: ${field}: ${detail}`, {
    reason: 'Invalid',
  });
}

function normalizeContainer(
  pod: string,
  c: z.infer<typeof containerSchema>,
  path: string,
  init: boolean,
  podClaimNames: ReadonlySet<string>,
): ContainerSpec {
  if (!DNS1123_LABEL.test(c.name) || c.name.length > 63) {
    throw invalid(
      pod,
      `${path}.name`,
      `Invalid value: "${c.name}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'`,
    );
  }
  const { rawRequests, rawLimits, ...requests } = fromTopology(() => containerRequests(pod, c, path, init));
  const claims = validateContainerClaims(
    pod,
    c.resources?.claims ?? [],
    `${path}.resources.claims`,
    podClaimNames,
  );
  const raw: Record<string, unknown> = {
    ...c,
    image: c.image ?? DEFAULT_IMAGE,
    resources: {
      ...(Object.keys(rawLimits).length ? { limits: rawLimits } : {}),
      ...(Object.keys(rawRequests).length ? { requests: rawRequests } : {}),
      ...(claims.length ? { claims: c.resources?.claims } : {}),
    },
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    imagePullPolicy: 'IfNotPresent',
  };
  return { ...requests, raw, claims };
}

/** validateResourceClaimNames: each entry names one of the pod's claims, at most once per request. */
function validateContainerClaims(
  pod: string,
  claims: z.infer<typeof containerClaimSchema>[],
  path: string,
  podClaimNames: ReadonlySet<string>,
): ContainerClaim[] {
  const seen = new Set<string>();
  return claims.map((claim, i) => {
    if (!claim.name) throw invalid(pod, `${path}[${i}]`, 'Required value');
    const key = `${claim.name}/${claim.request ?? ''}`;
    if (seen.has(key)) throw invalid(pod, `${path}[${i}]`, `Duplicate value: "${claim.name}"`);
    seen.add(key);
    if (!podClaimNames.has(claim.name)) {
      const names = [...podClaimNames].sort();
      throw invalid(
        pod,
        `${path}[${i}]`,
        `Not found: "${claim.name}": must be one of the names in pod.spec.resourceClaims${names.length ? `: ${names.join(', ')}` : ' which is empty'}`,
      );
    }
    return { name: claim.name, ...(claim.request ? { request: claim.request } : {}) };
  });
}

/** validatePodResourceClaim for every entry: a unique DNS label naming exactly one source. */
function validatePodClaims(
  pod: string,
  claims: z.infer<typeof podResourceClaimSchema>[],
): PodResourceClaim[] {
  const names = new Set<string>();
  return claims.map((claim, i) => {
    const path = `spec.resourceClaims[${i}]`;
    if (!claim.name) throw invalid(pod, `${path}.name`, 'Required value');
    if (names.has(claim.name)) throw invalid(pod, `${path}.name`, `Duplicate value: "${claim.name}"`);
    if (!DNS1123_LABEL.test(claim.name) || claim.name.length > 63)
      throw invalid(
        pod,
        `${path}.name`,
        `Invalid value: "${claim.name}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
      );
    names.add(claim.name);
    const byName = claim.resourceClaimName !== undefined;
    const byTemplate = claim.resourceClaimTemplateName !== undefined;
    const shown = JSON.stringify({
      name: claim.name,
      ...(byName ? { resourceClaimName: claim.resourceClaimName } : {}),
      ...(byTemplate ? { resourceClaimTemplateName: claim.resourceClaimTemplateName } : {}),
    });
    if (byName && byTemplate)
      throw invalid(
        pod,
        path,
        `Invalid value: ${shown}: at most one of \`resourceClaimName\` or \`resourceClaimTemplateName\` may be specified`,
      );
    if (!byName && !byTemplate)
      throw invalid(
        pod,
        path,
        `Invalid value: ${shown}: must specify one of: \`resourceClaimName\`, \`resourceClaimTemplateName\``,
      );
    return {
      name: claim.name,
      ...(byName ? { resourceClaimName: claim.resourceClaimName! } : {}),
      ...(byTemplate ? { resourceClaimTemplateName: claim.resourceClaimTemplateName! } : {}),
    };
  });
}

/** Parses and validates a pod; throws KubeletSimError('Invalid') naming the field. */
export function parsePodSpec(input: unknown, nodeName: string): PodSpec {
  const parsed = podInputSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = (input as { metadata?: { name?: unknown } } | null)?.metadata?.name;
    throw new KubeletSimError(
      'Invalid',
      `Pod "${typeof name === 'string' ? name : ''}" is invalid: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'malformed object'}`,
      { reason: 'Invalid' },
    );
  }
  const p = parsed.data;
  const name = p.metadata.name;
  const namespace = p.metadata.namespace ?? 'default';
  if (!DNS1123_SUBDOMAIN.test(name) || name.length > 253) {
    throw invalid(
      name,
      'metadata.name',
      `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'`,
    );
  }
  if (!DNS1123_LABEL.test(namespace))
    throw invalid(
      name,
      'metadata.namespace',
      `Invalid value: "${namespace}": a lowercase RFC 1123 label is required`,
    );
  if (p.spec.nodeName && p.spec.nodeName !== nodeName) {
    throw invalid(
      name,
      'spec.nodeName',
      `Invalid value: "${p.spec.nodeName}": this kubelet runs node "${nodeName}"`,
    );
  }
  const resourceClaims = validatePodClaims(name, p.spec.resourceClaims ?? []);
  const podClaimNames = new Set(resourceClaims.map((c) => c.name));
  const initContainers = (p.spec.initContainers ?? []).map((c, i) =>
    normalizeContainer(name, c, `spec.initContainers[${i}]`, true, podClaimNames),
  );
  const containers = p.spec.containers.map((c, i) =>
    normalizeContainer(name, c, `spec.containers[${i}]`, false, podClaimNames),
  );
  const seen = new Set<string>();
  for (const [i, c] of [...initContainers, ...containers].entries()) {
    if (seen.has(c.name)) throw invalid(name, `spec.containers[${i}].name`, `Duplicate value: "${c.name}"`);
    seen.add(c.name);
  }
  const restartPolicy = p.spec.restartPolicy ?? 'Always';
  const rawSpec: Record<string, unknown> = {
    ...p.spec,
    nodeName,
    restartPolicy,
    containers: containers.map((c) => c.raw),
    ...(initContainers.length ? { initContainers: initContainers.map((c) => c.raw) } : {}),
    dnsPolicy: 'ClusterFirst',
    schedulerName: 'default-scheduler',
    terminationGracePeriodSeconds: 30,
    securityContext: {},
    enableServiceLinks: true,
    preemptionPolicy: 'PreemptLowerPriority',
    priority: 0,
  };
  return {
    name,
    namespace,
    uid: p.metadata.uid ?? randomUUID(),
    labels: { ...(p.metadata.labels ?? {}) },
    annotations: { ...(p.metadata.annotations ?? {}) },
    restartPolicy,
    initContainers,
    containers,
    resourceClaims,
    requestedNodeName: p.spec.nodeName ? p.spec.nodeName : null,
    rawSpec,
  };
}

/**
 * The pod as the device manager and the node-resources predicate see it: each container without
 * the resources its pod's special claim serves (the device manager's isDRAExtendedResource skips
 * them, the predicate's removeMissingExtendedResources drops them).
 */
export function withoutDraExtendedResources(
  spec: PodSpec,
  status: PodExtendedResourceClaimStatus | null,
): PodSpec {
  const mappings = status?.requestMappings ?? [];
  if (mappings.length === 0) return spec;
  const strip = (c: ContainerSpec): ContainerSpec => {
    const mapped = new Set(mappings.filter((m) => m.containerName === c.name).map((m) => m.resourceName));
    if (mapped.size === 0) return c;
    const keep = (m: Map<string, number>) => new Map([...m].filter(([r]) => !mapped.has(r)));
    return { ...c, requests: keep(c.requests), limits: keep(c.limits) };
  };
  return { ...spec, initContainers: spec.initContainers.map(strip), containers: spec.containers.map(strip) };
}
