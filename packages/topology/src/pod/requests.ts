// What the resource managers read from a pod: each container's requests and limits (cpu in
// millicores, memory and hugepages in bytes, extended resources as counts), parsed, validated and
// defaulted as the API server does (pkg/apis/core/validation and the v1 defaults, Kubernetes 1.33:
// a resource with only a limit gets an equal request; extended resources are integers with
// requests equal to limits), the pod-level request (init containers, sidecars) and the QoS class
// (pkg/apis/core/v1/helper/qos).

import { TopologyError } from '../errors.js';
import { parseInteger, parseMilliCpu, parseQuantity } from '../resource/quantity.js';
import { isExtendedResourceName, isNativeResourceName } from '../resource/resource-names.js';

export interface ContainerRequests {
  name: string;
  init: boolean;
  /** An init container with restartPolicy Always (a sidecar): keeps running, keeps its devices. */
  sidecar: boolean;
  /** cpu in millicores, memory/hugepages in bytes, extended resources as device counts. */
  requests: Map<string, number>;
  limits: Map<string, number>;
}

export interface PodRequests {
  uid: string;
  initContainers: ContainerRequests[];
  containers: ContainerRequests[];
}

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

type Quantity = string | number;

/** A container as a Pod object has it (the fields read here). */
export interface ContainerInput {
  name: string;
  restartPolicy?: string | undefined;
  resources?:
    | { requests?: Record<string, Quantity> | undefined; limits?: Record<string, Quantity> | undefined }
    | undefined;
}

export function invalid(pod: string, field: string, detail: string): TopologyError {
  return new TopologyError('Invalid', `Pod "${pod}" is invalid: ${field}: ${detail}`);
}

function parseResource(pod: string, field: string, name: string, value: Quantity): number {
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

/**
 * One container's requests and limits, validated and defaulted; `path` names it in errors
 * (`spec.containers[0]`). Also answers the defaulted raw requests (what the API server serves back).
 * Throws TopologyError('Invalid') naming the field.
 */
export function containerRequests(
  pod: string,
  c: ContainerInput,
  path: string,
  init: boolean,
): ContainerRequests & { rawRequests: Record<string, Quantity>; rawLimits: Record<string, Quantity> } {
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
  return {
    name: c.name,
    init,
    sidecar: init && c.restartPolicy === 'Always',
    requests,
    limits,
    rawRequests,
    rawLimits,
  };
}

/** Max of the init containers' need vs the sum over app containers and sidecars (the pod-level request). */
export function podLevel(pod: PodRequests, need: (c: ContainerRequests) => number): number {
  let sum = pod.containers.reduce((s, c) => s + need(c), 0);
  let sidecars = 0;
  let max = 0;
  for (const c of pod.initContainers) {
    if (c.sidecar) {
      sidecars += need(c);
      sum += need(c);
    } else max = Math.max(max, need(c) + sidecars);
  }
  return Math.max(max, sum);
}

/**
 * The pod's effective request per resource (component-helpers' resource.PodRequests): the app
 * containers plus the sidecars, or the largest init container with the sidecars started before
 * it, whichever is more.
 */
export function effectiveRequests(pod: PodRequests): Map<string, number> {
  const add = (m: Map<string, number>, from: ReadonlyMap<string, number>) => {
    for (const [k, v] of from) m.set(k, (m.get(k) ?? 0) + v);
  };
  const out = new Map<string, number>();
  for (const c of pod.containers) add(out, c.requests);
  const sidecars = new Map<string, number>();
  const init = new Map<string, number>();
  for (const c of pod.initContainers) {
    let need: Map<string, number>;
    if (c.sidecar) {
      add(out, c.requests);
      add(sidecars, c.requests);
      need = new Map(sidecars);
    } else {
      need = new Map(c.requests);
      add(need, sidecars);
    }
    for (const [k, v] of need) init.set(k, Math.max(init.get(k) ?? 0, v));
  }
  for (const [k, v] of init) out.set(k, Math.max(out.get(k) ?? 0, v));
  return out;
}

/** QoS class from cpu and memory requests/limits, as the API server computes it. */
export function qosClass(pod: PodRequests): QosClass {
  const all = [...pod.initContainers, ...pod.containers];
  const has = (c: ContainerRequests, r: string) => c.requests.has(r) || c.limits.has(r);
  if (all.every((c) => !has(c, 'cpu') && !has(c, 'memory'))) return 'BestEffort';
  const guaranteed = all.every((c) =>
    ['cpu', 'memory'].every((r) => c.limits.has(r) && c.requests.get(r) === c.limits.get(r)),
  );
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
