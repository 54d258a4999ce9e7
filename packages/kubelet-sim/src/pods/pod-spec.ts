// Pod input for the simulator: a Kubernetes Pod object (or the subset that matters here), parsed
// once with zod and validated and defaulted the way the API server would (pkg/apis/core/validation
// and the v1 defaults, Kubernetes 1.33) before a kubelet ever sees it: extended resources are
// integers with requests equal to limits, requests default to limits; QoS class as
// pkg/apis/core/v1/helper/qos computes it.

import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { KubeletSimError } from '../errors.js';
import { parseInteger, parseMilliCpu, parseQuantity } from '../util/quantity.js';
import { isExtendedResourceName, isNativeResourceName } from '../util/resource-names.js';

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

export interface ContainerSpec {
  name: string;
  init: boolean;
  /** An init container with restartPolicy Always (a sidecar): keeps running, keeps its devices. */
  sidecar: boolean;
  /** cpu in millicores, memory/hugepages in bytes, extended resources as device counts. */
  requests: Map<string, number>;
  limits: Map<string, number>;
  /** The container as it is served back (requests defaulted from limits). */
  raw: Record<string, unknown>;
}

export interface PodSpec {
  name: string;
  namespace: string;
  uid: string;
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

function parseResource(pod: string, field: string, name: string, value: string | number): number {
  const text = String(value);
  if (name === 'cpu') {
    const v = parseMilliCpu(value);
    if (v === undefined || v < 0)
      throw invalid(pod, field, `Invalid value: "${text}": must be a valid quantity`);
    return v;
  }
  if (isNativeResourceName(name)) {
    const v = parseQuantity(value);
    if (v === undefined || v < 0)
      throw invalid(pod, field, `Invalid value: "${text}": must be a valid quantity`);
    return Math.ceil(v);
  }
  if (!isExtendedResourceName(name))
    throw invalid(
      pod,
      field,
      `Invalid value: "${name}": must be a standard resource type or fully qualified`,
    );
  const v = parseInteger(value);
  if (v === undefined || v < 0) throw invalid(pod, field, `Invalid value: "${text}": must be an integer`);
  return v;
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
  const rawRequests = { ...(c.resources?.requests ?? {}) };
  const rawLimits = { ...(c.resources?.limits ?? {}) };
  const requests = new Map<string, number>();
  const limits = new Map<string, number>();
  for (const [name, value] of Object.entries(rawLimits))
    limits.set(name, parseResource(pod, `${path}.resources.limits[${name}]`, name, value));
  for (const [name, value] of Object.entries(rawRequests)) {
    requests.set(name, parseResource(pod, `${path}.resources.requests[${name}]`, name, value));
  }
  // API defaulting: a resource with only a limit gets a request equal to it.
  for (const [name, value] of limits) {
    if (!requests.has(name)) {
      requests.set(name, value);
      rawRequests[name] = rawLimits[name]!;
    }
  }
  for (const [name, req] of requests) {
    const lim = limits.get(name);
    if (isNativeResourceName(name)) {
      if (lim !== undefined && req > lim) {
        throw invalid(
          pod,
          `${path}.resources.requests`,
          `Invalid value: "${String(rawRequests[name])}": must be less than or equal to ${name} limit of ${String(rawLimits[name])}`,
        );
      }
      continue;
    }
    // Extended resources cannot be overcommitted: a limit is required and must equal the request.
    if (lim === undefined)
      throw invalid(
        pod,
        `${path}.resources.limits[${name}]`,
        'Required value: Limit must be set for non overcommitable resources',
      );
    if (lim !== req)
      throw invalid(
        pod,
        `${path}.resources.requests[${name}]`,
        `Invalid value: "${String(rawRequests[name])}": must be equal to ${name} limit of ${String(rawLimits[name])}`,
      );
  }
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
  return { name: c.name, init, sidecar: init && c.restartPolicy === 'Always', requests, limits, raw };
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

/** The pod's effective request per resource: max(largest init container, sum of app containers + sidecars). */
export function effectiveRequests(pod: PodSpec): Map<string, number> {
  const sum = new Map<string, number>();
  const add = (m: Map<string, number>, c: ContainerSpec) => {
    for (const [k, v] of c.requests) m.set(k, (m.get(k) ?? 0) + v);
  };
  for (const c of pod.containers) add(sum, c);
  const sidecars = new Map<string, number>();
  const out = new Map(sum);
  for (const c of pod.initContainers) {
    if (c.sidecar) {
      add(sidecars, c);
      for (const [k, v] of c.requests) out.set(k, (out.get(k) ?? 0) + v);
      continue;
    }
    for (const [k, v] of c.requests) out.set(k, Math.max(out.get(k) ?? 0, v + (sidecars.get(k) ?? 0)));
  }
  return out;
}

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/** QoS class from cpu and memory requests/limits, as the API server computes it. */
export function qosClass(pod: PodSpec): QosClass {
  const all = [...pod.initContainers, ...pod.containers];
  const has = (c: ContainerSpec, r: string) => c.requests.has(r) || c.limits.has(r);
  if (all.every((c) => !has(c, 'cpu') && !has(c, 'memory'))) return 'BestEffort';
  const guaranteed = all.every((c) =>
    ['cpu', 'memory'].every((r) => c.limits.has(r) && c.requests.get(r) === c.limits.get(r)),
  );
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
