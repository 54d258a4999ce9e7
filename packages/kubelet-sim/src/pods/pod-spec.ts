// Pod input for the simulator: a Kubernetes Pod object (or the subset that matters here), parsed
// once with zod and validated and defaulted the way the API server would (pkg/apis/core/validation
// and the v1 defaults, Kubernetes 1.33) before a kubelet ever sees it. Names and the served object
// are checked here; each container's requests and limits (extended resources are integers with
// requests equal to limits, requests default to limits) are parsed by @plugboard/topology, which
// also has the QoS class and the pod-level request.

import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { containerRequests, type ContainerRequests, type PodRequests } from '@plugboard/topology';
import { fromTopology, KubeletSimError } from '../errors.js';

const quantity = z.union([z.string(), z.number()]);
const resourceList = z.record(z.string(), quantity);

const containerSchema = z
  .object({
    name: z.string(),
    image: z.string().optional(),
    restartPolicy: z.literal('Always').optional(),
    resources: z
      .object({ requests: resourceList.optional(), limits: resourceList.optional() })
      .loose()
      .optional(),
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
}

export interface PodSpec extends PodRequests {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  restartPolicy: RestartPolicy;
  initContainers: ContainerSpec[];
  containers: ContainerSpec[];
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
): ContainerSpec {
  if (!DNS1123_LABEL.test(c.name) || c.name.length > 63) {
    throw invalid(
      pod,
      `${path}.name`,
      `Invalid value: "${c.name}": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'`,
    );
  }
  const { rawRequests, rawLimits, ...requests } = fromTopology(() => containerRequests(pod, c, path, init));
  const raw: Record<string, unknown> = {
    ...c,
    image: c.image ?? DEFAULT_IMAGE,
    resources: {
      ...(Object.keys(rawLimits).length ? { limits: rawLimits } : {}),
      ...(Object.keys(rawRequests).length ? { requests: rawRequests } : {}),
    },
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    imagePullPolicy: 'IfNotPresent',
  };
  return { ...requests, raw };
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
  const initContainers = (p.spec.initContainers ?? []).map((c, i) =>
    normalizeContainer(name, c, `spec.initContainers[${i}]`, true),
  );
  const containers = p.spec.containers.map((c, i) =>
    normalizeContainer(name, c, `spec.containers[${i}]`, false),
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
    rawSpec,
  };
}
