// API discovery as kube-apiserver 1.37 serves it, built from resources.ts alone. Mirrors
// k8s.io/apiserver pkg/endpoints/discovery: the legacy documents (root.go `/apis` APIGroupList,
// group.go `/apis/{group}` APIGroup, version.go `/api/v1` and `/apis/{group}/{version}`
// APIResourceList, legacy.go `/api` APIVersions) and aggregated discovery (aggregated/wrapper.go
// picks it by Accept, handler.go builds the APIGroupDiscoveryList, etag.go its ETag).
//
// kubectl asks `/api` and `/apis` first with
//   Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json
// and takes the aggregated document only if the response's Content-Type names that GVK
// (client-go discovery_client.go ContentTypeIsGVK); otherwise it walks the legacy documents.
// `apidiscovery.k8s.io/v2beta1` is not served: AggregatedDiscoveryRemoveBetaType is locked on
// since 1.35, so a v2beta1-only Accept gets what the legacy handler gives it (406).
//
// Differences: JSON only (no protobuf or YAML); no storageVersionHash; serverAddressByClientCIDRs
// is empty; a path that is not a served discovery document returns null, for the router's 404.

import { apiGroups, RESOURCES, type ResourceInfo } from './resources.js';
import {
  cacheDocument,
  documentResponse,
  ifNoneMatchHits,
  notModified,
  parseAccept,
  rangeMatches,
  statusResponse,
  type CachedDocument,
  type DocumentResponse,
} from './negotiation.js';

/** The Content-Type of an aggregated discovery response (and what kubectl puts first in Accept). */
export const AGGREGATED_DISCOVERY_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

export interface ConditionalHeaders {
  /** The request's If-None-Match: aggregated discovery answers 304 when it names the current ETag. */
  ifNoneMatch?: string | undefined;
}

/**
 * kube-apiserver's group priorities (GroupPriorityMinimum of the built-in APIServices,
 * k8s.io/kubernetes pkg/controlplane/apiserver/aggregator.go): `/apis` lists groups by it, highest
 * first, then by name. Groups not listed here come last.
 */
const GROUP_PRIORITY: Readonly<Record<string, number>> = {
  'events.k8s.io': 17750,
  'authentication.k8s.io': 17700,
  'authorization.k8s.io': 17600,
  'certificates.k8s.io': 17300,
  'rbac.authorization.k8s.io': 17000,
  'apiextensions.k8s.io': 16700,
  'admissionregistration.k8s.io': 16700,
  'coordination.k8s.io': 16500,
  'discovery.k8s.io': 16200,
  'flowcontrol.apiserver.k8s.io': 16100,
};

type Document =
  | { kind: 'APIVersions' }
  | { kind: 'APIGroupList' }
  | { kind: 'APIGroup'; group: string }
  | { kind: 'APIResourceList'; group: string; version: string };

/**
 * Serves the discovery document at `path` (`api`, `api/v1`, `apis`, `apis/{group}`,
 * `apis/{group}/{version}`, without slashes around it), or returns null when the path is none of
 * them (an unknown group or version included: the router answers that 404 as for any unknown path).
 */
export function discovery(
  method: string,
  path: string,
  accept: string | undefined,
  conditional: ConditionalHeaders = {},
): DocumentResponse | null {
  const doc = documentAt(path.replace(/^\/+|\/+$/g, ''));
  if (!doc) return null;
  if (method !== 'GET')
    return statusResponse(
      405,
      'MethodNotAllowed',
      'the server does not allow this method on the requested resource',
    );
  const aggregatable = doc.kind === 'APIVersions' || doc.kind === 'APIGroupList';
  const format = negotiate(accept, aggregatable);
  if (format === undefined) {
    const types = aggregatable ? `application/json, ${AGGREGATED_DISCOVERY_V2}` : 'application/json';
    return statusResponse(406, 'NotAcceptable', `only the following media types are accepted: ${types}`);
  }
  if (format === 'aggregated') {
    const cached = aggregated(doc.kind === 'APIVersions' ? 'api' : 'apis');
    // aggregated/etag.go ServeHTTPWithETag: the ETag is a hash of the document, Vary on Accept.
    const headers = { ETag: `"${cached.hash}"`, Vary: 'Accept', 'Cache-Control': 'public' };
    if (ifNoneMatchHits(conditional.ifNoneMatch, cached.hash)) return notModified(headers);
    return documentResponse(200, AGGREGATED_DISCOVERY_V2, cached, headers);
  }
  return documentResponse(200, 'application/json', legacy(doc));
}

function documentAt(path: string): Document | undefined {
  const parts = path.split('/');
  if (parts[0] === 'api') {
    if (parts.length === 1)
      return RESOURCES.some((r) => r.group === '') ? { kind: 'APIVersions' } : undefined;
    const version = parts[1]!;
    if (parts.length === 2 && served('', version)) return { kind: 'APIResourceList', group: '', version };
    return undefined;
  }
  if (parts[0] !== 'apis') return undefined;
  if (parts.length === 1) return { kind: 'APIGroupList' };
  const group = parts[1]!;
  if (group === '' || !RESOURCES.some((r) => r.group === group)) return undefined;
  if (parts.length === 2) return { kind: 'APIGroup', group };
  const version = parts[2]!;
  if (parts.length === 3 && served(group, version)) return { kind: 'APIResourceList', group, version };
  return undefined;
}

function served(group: string, version: string): boolean {
  return RESOURCES.some((r) => r.group === group && r.version === version);
}

/**
 * Picks the format the first acceptable Accept clause asks for (aggregated/wrapper.go, then the
 * legacy handler's negotiation): `application/json` carrying the apidiscovery.k8s.io/v2
 * APIGroupDiscoveryList GVK (only at `/api` and `/apis`), or plain JSON (`*∕*`, `application/*`).
 * A clause naming any other GVK, or a media type the slice does not encode, is skipped.
 */
function negotiate(accept: string | undefined, aggregatable: boolean): 'aggregated' | 'legacy' | undefined {
  for (const range of parseAccept(accept)) {
    if (!rangeMatches(range, 'application', 'json')) continue;
    const { g, v, as } = range.params;
    if (g === undefined && v === undefined && as === undefined) return 'legacy';
    if (
      aggregatable &&
      range.type === 'application' &&
      range.subtype === 'json' &&
      g === 'apidiscovery.k8s.io' &&
      v === 'v2' &&
      as === 'APIGroupDiscoveryList'
    )
      return 'aggregated';
  }
  return undefined;
}

// --- documents, each built once -------------------------------------------------------------

const cache = new Map<string, CachedDocument>();

function cached(key: string, build: () => unknown): CachedDocument {
  let doc = cache.get(key);
  if (!doc) {
    doc = cacheDocument(build());
    cache.set(key, doc);
  }
  return doc;
}

/** Groups besides the core group, in kube-apiserver's `/apis` order. */
function orderedGroups(): string[] {
  const priority = (g: string) => GROUP_PRIORITY[g] ?? 0;
  return apiGroups().sort((a, b) => priority(b) - priority(a) || (a < b ? -1 : a > b ? 1 : 0));
}

function versionsOf(group: string): string[] {
  return [...new Set(RESOURCES.filter((r) => r.group === group).map((r) => r.version))];
}

function groupVersionString(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

function apiGroup(group: string): Record<string, unknown> {
  const versions = versionsOf(group).map((version) => ({
    groupVersion: groupVersionString(group, version),
    version,
  }));
  return { name: group, versions, preferredVersion: versions[0] };
}

/** Verbs as the API server lists them: sorted. */
function sortedVerbs(verbs: readonly string[]): string[] {
  return [...verbs].sort();
}

/** metav1.APIResource entries of a group-version: resources and `resource/subresource`, by name. */
function apiResources(group: string, version: string): Record<string, unknown>[] {
  const entries = RESOURCES.filter((r) => r.group === group && r.version === version).flatMap(
    (r: ResourceInfo) => [
      {
        name: r.resource,
        singularName: r.singular,
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: sortedVerbs(r.verbs),
        ...(r.shortNames.length > 0 ? { shortNames: [...r.shortNames] } : {}),
        ...(r.categories.length > 0 ? { categories: [...r.categories] } : {}),
      },
      ...r.subresources.map((s) => ({
        name: `${r.resource}/${s.name}`,
        singularName: '',
        namespaced: r.namespaced,
        kind: s.kind,
        verbs: sortedVerbs(s.verbs),
      })),
    ],
  );
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function legacy(doc: Document): CachedDocument {
  switch (doc.kind) {
    case 'APIVersions':
      return cached('legacy:api', () => ({
        kind: 'APIVersions',
        versions: versionsOf(''),
        serverAddressByClientCIDRs: [],
      }));
    case 'APIGroupList':
      return cached('legacy:apis', () => ({
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: orderedGroups().map(apiGroup),
      }));
    case 'APIGroup':
      return cached(`legacy:apis/${doc.group}`, () => ({
        kind: 'APIGroup',
        apiVersion: 'v1',
        ...apiGroup(doc.group),
      }));
    case 'APIResourceList':
      return cached(`legacy:${doc.group}/${doc.version}`, () => ({
        kind: 'APIResourceList',
        // The core group's list carries no apiVersion (as kube-apiserver serves /api/v1).
        ...(doc.group === '' ? {} : { apiVersion: 'v1' }),
        groupVersion: groupVersionString(doc.group, doc.version),
        resources: apiResources(doc.group, doc.version),
      }));
  }
}

/**
 * apidiscovery.k8s.io/v2 APIResourceDiscovery entries, converted from the legacy ones the way
 * endpoints/discovery/aggregated (ConvertGroupVersionIntoToDiscovery) does: subresources folded
 * into their resource, responseKind with the empty group and version of a same-group kind.
 */
function resourceDiscovery(group: string, version: string): Record<string, unknown>[] {
  return RESOURCES.filter((r) => r.group === group && r.version === version)
    .sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0))
    .map((r) => ({
      resource: r.resource,
      responseKind: { group: '', version: '', kind: r.kind },
      scope: r.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: r.singular,
      verbs: sortedVerbs(r.verbs),
      ...(r.shortNames.length > 0 ? { shortNames: [...r.shortNames] } : {}),
      ...(r.categories.length > 0 ? { categories: [...r.categories] } : {}),
      ...(r.subresources.length > 0
        ? {
            subresources: [...r.subresources]
              .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
              .map((s) => ({
                subresource: s.name,
                responseKind: { group: '', version: '', kind: s.kind },
                verbs: sortedVerbs(s.verbs),
              })),
          }
        : {}),
    }));
}

function groupDiscovery(group: string): Record<string, unknown> {
  return {
    // Since Kubernetes 1.34 a zero creationTimestamp is omitted rather than sent as null.
    metadata: group === '' ? {} : { name: group },
    versions: versionsOf(group).map((version) => ({
      version,
      resources: resourceDiscovery(group, version),
      freshness: 'Current',
    })),
  };
}

/** The APIGroupDiscoveryList of `/api` (the core group) or `/apis` (every other group). */
function aggregated(root: 'api' | 'apis'): CachedDocument {
  return cached(`aggregated:${root}`, () => ({
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: root === 'api' ? [groupDiscovery('')] : orderedGroups().map(groupDiscovery),
  }));
}
