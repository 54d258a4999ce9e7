// SelfSubjectAccessReview and SelfSubjectRulesReview (authorization.k8s.io/v1), answered truthfully
// for what this API slice allows the caller: every verb listed in resources.ts for the served
// resources and subresources, where a write (`create` of Events; the pod proxy's verbs) needs the
// bearer token when the simulator has one, as the server enforces it; the discovery, OpenAPI,
// version and health paths for non-resource URLs. Upstream answers these from the authorizer
// chain (RBAC); the slice has one fixed policy, so the answer is computed from the same table the
// router enforces — `kubectl auth can-i` can never say "yes" to a request the server refuses.

import { RESOURCES, type ResourceInfo, type Verb } from './resources.js';
import { HttpError } from './http.js';

/** Whether the caller holds the control token (or none is configured). */
export interface Caller {
  mayWrite: boolean;
}

const READ_VERBS = new Set<string>(['get', 'list', 'watch']);

/** Non-resource URLs every caller may GET (the API server's system:discovery and health roles). */
export const NON_RESOURCE_URLS = [
  '/api',
  '/api/*',
  '/apis',
  '/apis/*',
  '/healthz',
  '/livez',
  '/readyz',
  '/openapi',
  '/openapi/*',
  '/version',
  '/version/',
];

interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

/** The verbs the caller may use on a resource or one of its subresources. */
function allowedVerbs(r: ResourceInfo, subresource: string, caller: Caller): readonly string[] {
  const verbs: readonly Verb[] =
    subresource === '' ? r.verbs : (r.subresources.find((s) => s.name === subresource)?.verbs ?? []);
  // Reviews are open to every caller (upstream: system:basic-user); other writes and the pod proxy
  // (which reaches into a workload) need the token.
  if (r.group === 'authorization.k8s.io' || caller.mayWrite) return verbs;
  if (r.resource === 'pods' && subresource === 'proxy') return [];
  return verbs.filter((v) => READ_VERBS.has(v));
}

function matchesPath(pattern: string, path: string): boolean {
  return pattern.endsWith('*') ? path.startsWith(pattern.slice(0, -1)) : pattern === path;
}

function decide(attrs: ResourceAttributes, caller: Caller): { allowed: boolean; reason: string } {
  const verb = attrs.verb ?? '';
  const group = attrs.group ?? '';
  const resource = attrs.resource ?? '';
  const candidates = RESOURCES.filter(
    (r) =>
      (group === '*' || r.group === group) &&
      (resource === '*' || r.resource === resource) &&
      (!attrs.version || attrs.version === '*' || r.version === attrs.version),
  );
  if (candidates.length === 0)
    return { allowed: false, reason: `kubelet-sim does not serve ${resource || '""'} in group "${group}"` };
  const ok = candidates.every((r) => {
    const verbs = allowedVerbs(r, attrs.subresource ?? '', caller);
    return verb === '*' ? verbs.length > 0 : verbs.includes(verb);
  });
  if (ok) return { allowed: true, reason: 'allowed by the kubelet-sim API slice' };
  const needsToken = candidates.some((r) =>
    (attrs.subresource
      ? (r.subresources.find((s) => s.name === attrs.subresource)?.verbs ?? [])
      : r.verbs
    ).some((v) => v === verb),
  );
  return {
    allowed: false,
    reason: needsToken
      ? `${verb} needs the kubelet-sim control token`
      : `the kubelet-sim API slice does not allow ${verb} on ${resource}${attrs.subresource ? `/${attrs.subresource}` : ''}`,
  };
}

/** POST selfsubjectaccessreviews: the review with its `status` filled in. */
export function selfSubjectAccessReview(body: unknown, caller: Caller): Record<string, unknown> {
  const review = asObject(body, 'SelfSubjectAccessReview');
  const spec = asObject(review['spec'], 'SelfSubjectAccessReview spec');
  const resourceAttributes = spec['resourceAttributes'] as ResourceAttributes | undefined;
  const nonResource = spec['nonResourceAttributes'] as { path?: string; verb?: string } | undefined;
  if (!!resourceAttributes === !!nonResource) {
    throw new HttpError(
      422,
      'Invalid',
      'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
    );
  }
  let status: { allowed: boolean; reason: string };
  if (nonResource) {
    const path = nonResource.path ?? '';
    const allowed = nonResource.verb === 'get' && NON_RESOURCE_URLS.some((p) => matchesPath(p, path));
    status = {
      allowed,
      reason: allowed ? 'allowed by the kubelet-sim API slice' : `kubelet-sim does not serve ${path}`,
    };
  } else {
    status = decide(resourceAttributes!, caller);
  }
  return {
    kind: 'SelfSubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec,
    status: status.allowed
      ? { allowed: true, reason: status.reason }
      : { allowed: false, reason: status.reason },
  };
}

/** POST selfsubjectrulesreviews: every rule the caller has in `spec.namespace`. */
export function selfSubjectRulesReview(body: unknown, caller: Caller): Record<string, unknown> {
  const review = asObject(body, 'SelfSubjectRulesReview');
  const spec = asObject(review['spec'] ?? {}, 'SelfSubjectRulesReview spec');
  const namespace = typeof spec['namespace'] === 'string' ? spec['namespace'] : '';
  const rules = new Map<string, { verbs: string[]; apiGroups: string[]; resources: string[] }>();
  for (const r of RESOURCES) {
    const entries: [string, readonly string[]][] = [
      [r.resource, allowedVerbs(r, '', caller)],
      ...r.subresources.map(
        (s) => [`${r.resource}/${s.name}`, allowedVerbs(r, s.name, caller)] as [string, readonly string[]],
      ),
    ];
    for (const [name, verbs] of entries) {
      if (verbs.length === 0) continue;
      const key = `${r.group}|${verbs.join(',')}`;
      const rule = rules.get(key) ?? { verbs: [...verbs], apiGroups: [r.group], resources: [] };
      rule.resources.push(name);
      rules.set(key, rule);
    }
  }
  return {
    kind: 'SelfSubjectRulesReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec: { namespace },
    status: {
      resourceRules: [...rules.values()],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: NON_RESOURCE_URLS }],
      incomplete: false,
    },
  };
}

function asObject(v: unknown, what: string): Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw new HttpError(400, 'BadRequest', `${what}: the body of the request was in an unknown format`);
  return v as Record<string, unknown>;
}
