// Extended resources backed by DRA (KEP-5004, DRAExtendedResource: GA and locked on in 1.37), the
// DynamicResources plugin's part of it: kubernetes pkg/scheduler/framework/plugins/dynamicresources/
// extendeddynamicresources.go (1.37) and the DeviceClass mapping it reads,
// k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache.
//
// A pod asking `limits: {example.com/gpu: 1}` (no claim) where a DeviceClass has
// `spec.extendedResourceName: example.com/gpu` — or asking the implicit name
// `deviceclass.resource.kubernetes.io/<class>` — gets, at PreFilter, one in-memory "special" claim
// (owner = the pod, annotation `resource.kubernetes.io/extended-resource-claim: "true"`,
// generateName `<pod>-extended-resources-`); at Filter its requests, one per container and resource
// that the node does not serve through a device plugin (allocatable 0 or absent), named
// `container-<index in init+app containers>-request-<index of the resource in the container's
// sorted requests>`; PreBind creates it (the API server names it), allocates and reserves it, and
// writes `pod.status.extendedResourceClaimStatus` (claim name + container/resource/request
// mappings). Pure: nothing here writes.

import { effectiveRequests, isExtendedResourceName, type ContainerRequests } from '@plugboard/topology';
import type {
  ContainerExtendedResourceRequest,
  DeviceClass,
  DeviceRequest,
  ResourceClaim,
} from '../types.js';

/** resourceapi.ExtendedResourceClaimAnnotation. */
export const EXTENDED_RESOURCE_CLAIM_ANNOTATION = 'resource.kubernetes.io/extended-resource-claim';
/** resourceapi.ResourceDeviceClassPrefix: the implicit extended resource name of every class. */
export const RESOURCE_DEVICE_CLASS_PREFIX = 'deviceclass.resource.kubernetes.io/';
/** specialClaimInMemName: intentionally not a valid claim name; the API server names the claim. */
export const SPECIAL_CLAIM_IN_MEM_NAME = '<extended-resources>';

/** The pod as this part of the plugin reads it: identity and each container's requests. */
export interface ExtendedResourcePod {
  name: string;
  namespace: string;
  uid: string;
  initContainers: readonly ContainerRequests[];
  containers: readonly ContainerRequests[];
}

/** schedutil.IsDRAExtendedResourceName: an extended resource name or a class's implicit name. */
export function isDRAExtendedResourceName(name: string): boolean {
  return isExtendedResourceName(name) || name.startsWith(RESOURCE_DEVICE_CLASS_PREFIX);
}

/**
 * ExtendedResourceCache.GetDeviceClass over the current DeviceClasses: every class answers its
 * implicit name; an explicit `extendedResourceName` shared by several classes resolves to the one
 * created last (equal timestamps: the smaller name), as the cache keeps it.
 */
export class DeviceClassResolver {
  private readonly byName = new Map<string, DeviceClass>();

  constructor(classes: readonly DeviceClass[]) {
    const created = (c: DeviceClass) => Date.parse(c.metadata.creationTimestamp ?? '') || 0;
    for (const c of classes) {
      this.byName.set(RESOURCE_DEVICE_CLASS_PREFIX + c.metadata.name, c);
      const explicit = c.spec.extendedResourceName;
      if (explicit === undefined) continue;
      const other = this.byName.get(explicit);
      if (
        other &&
        (created(c) < created(other) ||
          (created(c) === created(other) && c.metadata.name >= other.metadata.name))
      )
        continue;
      this.byName.set(explicit, c);
    }
  }

  getDeviceClass(resourceName: string): DeviceClass | undefined {
    return this.byName.get(resourceName);
  }
}

/** resourcehelper.PodRequests: the pod's effective request per resource. */
export function podRequests(pod: ExtendedResourcePod): Map<string, number> {
  return effectiveRequests({
    uid: pod.uid,
    initContainers: [...pod.initContainers],
    containers: [...pod.containers],
  });
}

/** hasDeviceClassMappedExtendedResource: a non-zero request of a name some DeviceClass maps. */
export function hasDeviceClassMappedExtendedResource(
  requests: ReadonlyMap<string, number>,
  resolver: DeviceClassResolver,
): boolean {
  for (const [name, value] of requests)
    if (value !== 0 && isDRAExtendedResourceName(name) && resolver.getDeviceClass(name)) return true;
  return false;
}

/** findExtendedResourceClaim: the annotated claim whose controller is this pod. */
export function findExtendedResourceClaim(
  pod: ExtendedResourcePod,
  claims: readonly ResourceClaim[],
): ResourceClaim | undefined {
  return claims.find(
    (c) =>
      c.metadata.annotations?.[EXTENDED_RESOURCE_CLAIM_ANNOTATION] === 'true' &&
      (c.metadata.ownerReferences ?? []).some(
        (o) => o.name === pod.name && o.controller === true && o.uid === pod.uid,
      ),
  );
}

/** The in-memory special claim of preFilterExtendedResources (no requests yet, a temporary UID). */
export function inMemoryExtendedResourceClaim(pod: ExtendedResourcePod, uid: string): ResourceClaim {
  return {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaim',
    metadata: {
      namespace: pod.namespace,
      name: SPECIAL_CLAIM_IN_MEM_NAME,
      uid,
      generateName: `${pod.name}-extended-resources-`,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: pod.name, uid: pod.uid, controller: true }],
      annotations: { [EXTENDED_RESOURCE_CLAIM_ANNOTATION]: 'true' },
    },
    spec: { devices: {} },
  };
}

export type FilterExtendedResourcesResult =
  | { kind: 'none' }
  | { kind: 'unschedulable'; reason: string }
  | { kind: 'claim'; claim: ResourceClaim; mappings: ContainerExtendedResourceRequest[] };

/**
 * filterExtendedResources: the special claim for this node (its requests and the pod's mappings),
 * `none` when the node serves every such request through a device plugin, or why the pod does not
 * fit. `allocatable` is the Node's status.allocatable (scalar resources as counts).
 */
export function filterExtendedResources(
  pod: ExtendedResourcePod,
  claim: ResourceClaim,
  requests: ReadonlyMap<string, number>,
  allocatable: ReadonlyMap<string, number>,
  resolver: DeviceClassResolver,
  hasUserClaims: boolean,
): FilterExtendedResourcesResult {
  // A claim from an earlier cycle: unschedulable, PostFilter deletes it and the pod tries anew.
  if (claim.spec.devices.requests !== undefined)
    return { kind: 'unschedulable', reason: 'cannot schedule extended resource claim' };
  const extended = new Map<string, number>();
  for (const [name, quantity] of requests) {
    if (!isDRAExtendedResourceName(name) || quantity === 0) continue;
    const served = allocatable.get(name);
    const backedByDRA = resolver.getDeviceClass(name) !== undefined;
    if (backedByDRA && (served ?? 0) === 0) extended.set(name, quantity);
    else if (served === undefined) return { kind: 'unschedulable', reason: 'cannot fit resource' };
  }
  if ((!hasUserClaims && extended.size === 0) || claim.status?.allocation) return { kind: 'none' };
  const { requests: deviceRequests, mappings } = createRequestsAndMappings(pod, extended, resolver);
  const nodeClaim = structuredClone(claim);
  nodeClaim.spec = { devices: { requests: deviceRequests } };
  return { kind: 'claim', claim: nodeClaim, mappings };
}

/** createResourceRequestAndMappings for one container and resource. */
function containerRequestAndMappings(
  index: number,
  container: ContainerRequests,
  resource: string,
  className: string,
  reusable: readonly (DeviceRequest | undefined)[],
): { request?: DeviceRequest; mappings: ContainerExtendedResourceRequest[] } {
  const mappings: ContainerExtendedResourceRequest[] = [];
  const quantity = container.requests.get(resource);
  if (quantity === undefined || quantity === 0) return { mappings };
  let sum = 0;
  for (const r of reusable) {
    if (!r) continue;
    sum += r.exactly?.count ?? 0;
    mappings.push({ containerName: container.name, resourceName: resource, requestName: r.name });
    if (sum >= quantity) return { mappings };
  }
  // Go sorts the container's request names (a map) to fix the resource's index.
  const ridx = [...container.requests.keys()].sort().indexOf(resource);
  const requestName = `container-${index}-request-${ridx}`;
  mappings.push({ containerName: container.name, resourceName: resource, requestName });
  return {
    request: {
      name: requestName,
      exactly: { deviceClassName: className, allocationMode: 'ExactCount', count: quantity - sum },
    },
    mappings,
  };
}

/**
 * createRequestsAndMappings: per resource (sorted), one request per long-lived container (app
 * containers and sidecars), and for the short-lived init containers only the largest request they
 * cannot take from the long-lived ones after them; requests sorted by name.
 */
export function createRequestsAndMappings(
  pod: ExtendedResourcePod,
  extended: ReadonlyMap<string, number>,
  resolver: DeviceClassResolver,
): { requests: DeviceRequest[]; mappings: ContainerExtendedResourceRequest[] } {
  const containers = [...pod.initContainers, ...pod.containers];
  const initCount = pod.initContainers.length;
  const longLived: number[] = [];
  const shortLived: number[] = [];
  containers.forEach((c, i) => (i < initCount && !c.sidecar ? shortLived : longLived).push(i));

  const requests: DeviceRequest[] = [];
  const mappings: ContainerExtendedResourceRequest[] = [];
  for (const resource of [...extended.keys()].sort()) {
    const cls = resolver.getDeviceClass(resource);
    if (!cls) continue;
    const longLivedRequests: (DeviceRequest | undefined)[] = new Array<DeviceRequest | undefined>(
      containers.length,
    ).fill(undefined);
    const longLivedMappings: ContainerExtendedResourceRequest[] = [];
    for (const i of longLived) {
      const r = containerRequestAndMappings(i, containers[i]!, resource, cls.metadata.name, []);
      longLivedRequests[i] = r.request;
      longLivedMappings.push(...r.mappings);
    }
    let maxShortLived: DeviceRequest | undefined;
    const shortLivedNames = new Set<string>();
    const shortLivedMappings: ContainerExtendedResourceRequest[] = [];
    for (const i of shortLived) {
      const r = containerRequestAndMappings(
        i,
        containers[i]!,
        resource,
        cls.metadata.name,
        longLivedRequests.slice(i),
      );
      if (r.request) {
        shortLivedNames.add(r.request.name);
        if (!maxShortLived || (maxShortLived.exactly?.count ?? 0) < (r.request.exactly?.count ?? 0))
          maxShortLived = r.request;
      }
      shortLivedMappings.push(...r.mappings);
    }
    if (maxShortLived && shortLivedNames.size > 1) {
      shortLivedNames.delete(maxShortLived.name);
      for (const m of shortLivedMappings)
        if (shortLivedNames.has(m.requestName)) m.requestName = maxShortLived.name;
    }
    if (maxShortLived) requests.push(maxShortLived);
    for (const r of longLivedRequests) if (r) requests.push(r);
    mappings.push(...longLivedMappings, ...shortLivedMappings);
  }
  requests.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { requests, mappings };
}
