// Which of Kubernetes' REST paths belong to the resources the slice serves (resources.ts), and which
// operations on them the slice allows. The generator keeps every upstream path of a served resource
// (all subresources, all operations); the documents served at run time keep only what `verbs` and
// `subresources` allow, so changing a verb in resources.ts needs no regeneration.

import { RESOURCES, type ResourceInfo, type Verb } from '../resources.js';

export type PathOwner =
  /** `/api/`, `/api/v1/`, `/apis/`, `/apis/{group}/`, `/apis/{group}/{version}/`: discovery documents. */
  { kind: 'discovery' } | { kind: 'resource'; resource: ResourceInfo; subresource: string | undefined };

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** URL prefix of a group-version: `/api/v1`, `/apis/coordination.k8s.io/v1`. */
export function groupVersionPrefix(r: Pick<ResourceInfo, 'group' | 'version'>): string {
  return r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
}

/**
 * The served resource (and subresource) an upstream path belongs to, or `discovery`, or undefined.
 * Matches the API server's route shapes: the collection and `{name}` below it (namespaced ones also
 * under `namespaces/{namespace}/`), its subresources (`{name}/log`, `{name}/proxy/{path}`) and the
 * deprecated `watch/` forms.
 */
export function pathOwner(
  path: string,
  resources: readonly ResourceInfo[] = RESOURCES,
): PathOwner | undefined {
  if (path === '/api/' || path === '/apis/') return resources.length > 0 ? { kind: 'discovery' } : undefined;
  for (const r of resources) {
    const prefix = groupVersionPrefix(r);
    if (path === `${prefix}/` || (r.group !== '' && path === `/apis/${r.group}/`))
      return { kind: 'discovery' };
  }
  for (const r of resources) {
    const pattern = new RegExp(
      `^${escape(groupVersionPrefix(r))}/(?:watch/)?(?:namespaces/\\{namespace\\}/)?${escape(r.resource)}` +
        `(?:/\\{name\\}(?:/([a-z]+)(?:/\\{path\\})?)?)?$`,
    );
    const m = pattern.exec(path);
    if (m) return { kind: 'resource', resource: r, subresource: m[1] };
  }
  return undefined;
}

/**
 * The RBAC verb an operation needs, from its `x-kubernetes-action` (`connect` operations, like the
 * proxy's, go by HTTP method as the API server's request info does; HEAD and OPTIONS read).
 */
export function operationVerb(action: unknown, method: HttpMethod): Verb | undefined {
  switch (action) {
    case 'get':
    case 'list':
    case 'patch':
    case 'delete':
    case 'deletecollection':
      return action;
    case 'watch':
    case 'watchlist':
      return 'watch';
    case 'post':
      return 'create';
    case 'put':
      return 'update';
    case 'connect':
      return method === 'post'
        ? 'create'
        : method === 'put'
          ? 'update'
          : method === 'patch'
            ? 'patch'
            : method === 'delete'
              ? 'delete'
              : 'get';
    default:
      return undefined;
  }
}

/** Whether the slice serves this operation of a path `pathOwner` attributed to it. */
export function operationServed(owner: PathOwner, method: HttpMethod, operation: { [key: string]: unknown }) {
  if (owner.kind === 'discovery') return method === 'get';
  const verb = operationVerb(operation['x-kubernetes-action'], method);
  if (!verb) return false;
  if (owner.subresource === undefined) return owner.resource.verbs.includes(verb);
  const sub = owner.resource.subresources.find((s) => s.name === owner.subresource);
  return sub !== undefined && sub.verbs.includes(verb);
}

/** The OpenAPI v3 document a path is published in: `api`, `api/v1`, `apis`, `apis/{group}`, `apis/{group}/{version}`. */
export function v3DocumentOf(path: string): string | undefined {
  const m = /^\/(api|apis)\/(?:([^/]+)\/(?:([^/]+)\/)?)?/.exec(path);
  if (!m) return undefined;
  const [, root, first, second] = m;
  if (root === 'api') return first === undefined ? 'api' : `api/${first}`;
  if (first === undefined) return 'apis';
  // `/apis/{group}/` alone is the group document; anything deeper belongs to the group-version.
  return second === undefined ? `apis/${first}` : `apis/${first}/${second}`;
}
