// The resources the API slice serves, in one table: what discovery (legacy and aggregated), the
// OpenAPI documents, server-side Tables, SelfSubject*Reviews and the router all read. Names, short
// names, categories and verbs are kube-apiserver's for these kinds (Kubernetes 1.37, as `kubectl
// api-resources -o wide` lists them on a real cluster) — except `verbs`, which lists what the slice
// really allows: a verb a real cluster has but the slice refuses is answered 405 (see server.ts).

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface SubresourceInfo {
  /** `log`, `proxy`, `status`. */
  name: string;
  /** Kind answered (`Pod` for status, `Pod` for log as upstream reports it, `NodeProxyOptions`, …). */
  kind: string;
  verbs: readonly Verb[];
}

export interface ResourceInfo {
  /** API group, `''` for the core group. */
  group: string;
  version: string;
  /** Plural resource name in URLs (`pods`). */
  resource: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  verbs: readonly Verb[];
  shortNames: readonly string[];
  categories: readonly string[];
  subresources: readonly SubresourceInfo[];
  /** The OpenAPI definition name of the kind (`io.k8s.api.core.v1.Pod`). */
  definition: string;
}

const READ: readonly Verb[] = ['get', 'list', 'watch'];
/** What kube-apiserver allows on the resource.k8s.io kinds (drivers, operators and the control API write them). */
const READ_WRITE: readonly Verb[] = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
];

/**
 * Dynamic Resource Allocation, `resource.k8s.io/v1` (GA since 1.34; DeviceTaintRule with its `status`
 * subresource since 1.37).
 */
function draResources(): ResourceInfo[] {
  const dra = (resource: string, kind: string, namespaced: boolean, withStatus: boolean): ResourceInfo => ({
    group: 'resource.k8s.io',
    version: 'v1',
    resource,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced,
    verbs: READ_WRITE,
    shortNames: [],
    categories: [],
    subresources: withStatus ? [{ name: 'status', kind, verbs: ['get', 'patch', 'update'] }] : [],
    definition: `io.k8s.api.resource.v1.${kind}`,
  });
  return [
    dra('deviceclasses', 'DeviceClass', false, false),
    dra('devicetaintrules', 'DeviceTaintRule', false, true),
    dra('resourceclaims', 'ResourceClaim', true, true),
    dra('resourceclaimtemplates', 'ResourceClaimTemplate', true, false),
    dra('resourceslices', 'ResourceSlice', false, false),
  ];
}

export const RESOURCES: readonly ResourceInfo[] = [
  {
    group: '',
    version: 'v1',
    resource: 'namespaces',
    singular: 'namespace',
    kind: 'Namespace',
    listKind: 'NamespaceList',
    namespaced: false,
    verbs: READ,
    shortNames: ['ns'],
    categories: [],
    subresources: [],
    definition: 'io.k8s.api.core.v1.Namespace',
  },
  {
    group: '',
    version: 'v1',
    resource: 'nodes',
    singular: 'node',
    kind: 'Node',
    listKind: 'NodeList',
    namespaced: false,
    verbs: READ,
    shortNames: ['no'],
    categories: [],
    subresources: [{ name: 'proxy', kind: 'NodeProxyOptions', verbs: ['get'] }],
    definition: 'io.k8s.api.core.v1.Node',
  },
  {
    group: '',
    version: 'v1',
    resource: 'pods',
    singular: 'pod',
    kind: 'Pod',
    listKind: 'PodList',
    namespaced: true,
    // create: a Pod written through the API (kubectl apply) goes to this node's scheduler and kubelet;
    // delete: the kubelet stops it at once (no grace period) and the object goes.
    verbs: ['create', 'delete', 'get', 'list', 'watch'],
    shortNames: ['po'],
    categories: ['all'],
    subresources: [
      { name: 'log', kind: 'Pod', verbs: ['get'] },
      { name: 'proxy', kind: 'PodProxyOptions', verbs: ['get', 'create', 'update', 'patch', 'delete'] },
    ],
    definition: 'io.k8s.api.core.v1.Pod',
  },
  {
    group: '',
    version: 'v1',
    resource: 'events',
    singular: 'event',
    kind: 'Event',
    listKind: 'EventList',
    namespaced: true,
    verbs: ['create', 'get', 'list', 'watch'],
    shortNames: ['ev'],
    categories: [],
    subresources: [],
    definition: 'io.k8s.api.core.v1.Event',
  },
  {
    group: '',
    version: 'v1',
    resource: 'services',
    singular: 'service',
    kind: 'Service',
    listKind: 'ServiceList',
    namespaced: true,
    verbs: READ,
    shortNames: ['svc'],
    categories: ['all'],
    subresources: [],
    definition: 'io.k8s.api.core.v1.Service',
  },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    resource: 'leases',
    singular: 'lease',
    kind: 'Lease',
    listKind: 'LeaseList',
    namespaced: true,
    verbs: READ,
    shortNames: [],
    categories: [],
    subresources: [],
    definition: 'io.k8s.api.coordination.v1.Lease',
  },
  ...draResources(),
  {
    group: 'authorization.k8s.io',
    version: 'v1',
    resource: 'selfsubjectaccessreviews',
    singular: 'selfsubjectaccessreview',
    kind: 'SelfSubjectAccessReview',
    listKind: 'SelfSubjectAccessReviewList',
    namespaced: false,
    verbs: ['create'],
    shortNames: [],
    categories: [],
    subresources: [],
    definition: 'io.k8s.api.authorization.v1.SelfSubjectAccessReview',
  },
  {
    group: 'authorization.k8s.io',
    version: 'v1',
    resource: 'selfsubjectrulesreviews',
    singular: 'selfsubjectrulesreview',
    kind: 'SelfSubjectRulesReview',
    listKind: 'SelfSubjectRulesReviewList',
    namespaced: false,
    verbs: ['create'],
    shortNames: [],
    categories: [],
    subresources: [],
    definition: 'io.k8s.api.authorization.v1.SelfSubjectRulesReview',
  },
];

/** `v1` for the core group, `group/version` otherwise. */
export function groupVersion(r: Pick<ResourceInfo, 'group' | 'version'>): string {
  return r.group === '' ? r.version : `${r.group}/${r.version}`;
}

/** The API groups served (besides the core group), in discovery order. */
export function apiGroups(resources: readonly ResourceInfo[] = RESOURCES): string[] {
  return [...new Set(resources.filter((r) => r.group !== '').map((r) => r.group))];
}

/** The store of a resource, keyed `${group}/${resource}` (`/pods`, `resource.k8s.io/resourceclaims`). */
export const storeKey = (group: string, resource: string) => `${group}/${resource}`;

export function findResource(group: string, version: string, resource: string): ResourceInfo | undefined {
  return RESOURCES.find((r) => r.group === group && r.version === version && r.resource === resource);
}
