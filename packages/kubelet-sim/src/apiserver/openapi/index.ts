// OpenAPI v2 (`/openapi/v2`) and v3 (`/openapi/v3`, `/openapi/v3/{path group}`) for the kinds the
// slice serves, as kube-apiserver publishes them through k8s.io/kube-openapi pkg/handler (v2) and
// pkg/handler3 (v3): enough for `kubectl explain` (which reads the v3 document of the resource's
// group-version, finds the kind through the `x-kubernetes-group-version-kind` of the resource's
// paths, then renders that schema) and for clients that validate against the schemas.
//
// Source of the schemas — Kubernetes' own OpenAPI document, not a hand-written or third-party one.
// The candidates were the `kubernetes-models` npm package and the upstream documents; kubernetes-
// models ships compiled ajv validators and TypeScript types without the field descriptions, so it
// cannot drive `kubectl explain`. scripts/generate-openapi.ts therefore cuts Kubernetes' published
// `api/openapi-spec/swagger.json` (v1.35.0, the newest reachable here, as the official JavaScript
// client vendors it) down to the resources in resources.ts into generated/swagger.ts, keeping
// definitions, paths and parameters verbatim; the header of that file names the release and the
// sha256 of the input. At run time documents.ts keeps the operations resources.ts allows and
// converts to OpenAPI 3.0 the way kube-openapi's openapiconv does (convert.ts). The slice otherwise
// follows Kubernetes 1.37; its schemas are 1.35's until a newer swagger.json is generated in.
//
// As upstream: each document's ETag is the upper-case hex SHA-512 of its bytes; `/openapi/v3`
// lists `serverRelativeURL: /openapi/v3/{group}?hash={ETag}`; a request with the current hash is
// answered `Cache-Control: public, immutable` (kubectl's HTTP cache keeps it), a stale hash with a
// 301 to the current URL; If-None-Match answers 304.
//
// Difference: JSON only. kube-apiserver also serves both documents as protobuf (gnostic
// `openapi_v2.Document`, `openapi_v3.Document`); a request that accepts only protobuf is answered
// 406 with a Status. client-go asks for v2 *only* as protobuf (discovery OpenAPISchema), so what
// depends on v2 fails with a 406: kubectl's client-side validation, which kubectl runs only when
// the v3 document shows no PATCH with `fieldValidation` for the kind (so for every kind the slice
// allows no patch on), i.e. `kubectl create|apply -f` needs `--validate=false` ("error validating
// data: failed to download openapi"); `kubectl explain --output=plaintext-openapiv2`. Plain
// `kubectl explain` uses v3.

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
} from '../negotiation.js';
import { buildOpenApiV2, buildOpenApiV3 } from './documents.js';

/** What client-go's discovery client sends as the only Accept for `/openapi/v2`. */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

export interface OpenApiRequest {
  /** The request's query: `hash` on a v3 group document. */
  query?: URLSearchParams | undefined;
  /** The request's If-None-Match: 304 when it names the document's current ETag. */
  ifNoneMatch?: string | undefined;
}

interface Published {
  v2: CachedDocument;
  /** By path group (`api/v1`, `apis/coordination.k8s.io/v1`, …). */
  v3: Map<string, CachedDocument>;
  /** handler3's OpenAPIV3Discovery: `{paths: {group: {serverRelativeURL}}}`. */
  v3Discovery: CachedDocument;
}

let published: Published | undefined;

/** Built on first use, then served from memory (the documents are static). */
function documents(): Published {
  if (!published) {
    const v3 = new Map<string, CachedDocument>();
    for (const [group, doc] of buildOpenApiV3()) v3.set(group, cacheDocument(doc));
    const paths: Record<string, { serverRelativeURL: string }> = {};
    for (const [group, doc] of v3) paths[group] = { serverRelativeURL: serverRelativeURL(group, doc.hash) };
    published = { v2: cacheDocument(buildOpenApiV2()), v3, v3Discovery: cacheDocument({ paths }) };
  }
  return published;
}

/** handler3 constructServerRelativeURL. */
function serverRelativeURL(group: string, hash: string): string {
  return `/openapi/v3/${group}?${new URLSearchParams({ hash }).toString()}`;
}

/** Whether the Accept header takes JSON before any (unsupported) alternative: handler{,3}'s loop. */
function acceptsJson(accept: string | undefined): boolean {
  return parseAccept(accept).some((range) => rangeMatches(range, 'application', 'json'));
}

function notAcceptable(document: string): DocumentResponse {
  return statusResponse(
    406,
    'NotAcceptable',
    `${document} is served as application/json only; kubelet-sim does not encode OpenAPI as protobuf`,
  );
}

/**
 * Serves `openapi/v2`, `openapi/v3` and `openapi/v3/{group}` (`path` without slashes around it;
 * the v3 group as `/openapi/v3` lists it, e.g. `api/v1`). Null for any other path.
 */
export function openApi(
  method: string,
  path: string,
  accept: string | undefined,
  request: OpenApiRequest = {},
): DocumentResponse | null {
  const p = path.replace(/^\/+|\/+$/g, '');
  if (p !== 'openapi/v2' && p !== 'openapi/v3' && !p.startsWith('openapi/v3/')) return null;
  if (method !== 'GET' && method !== 'HEAD')
    return statusResponse(
      405,
      'MethodNotAllowed',
      'the server does not allow this method on the requested resource',
    );
  const docs = documents();

  if (p === 'openapi/v2') {
    if (!acceptsJson(accept)) return notAcceptable('/openapi/v2');
    return serve(docs.v2, { Vary: 'Accept' }, request);
  }
  // handler3 HandleDiscovery: JSON whatever the Accept header says.
  if (p === 'openapi/v3') return serve(docs.v3Discovery, {}, request);

  const group = p.slice('openapi/v3/'.length);
  const doc = docs.v3.get(group);
  // kube-aggregator's v3 proxy: a group-version nobody serves is a 404.
  if (!doc) return statusResponse(404, 'NotFound', 'the server could not find the requested resource');
  if (!acceptsJson(accept)) return notAcceptable(`/openapi/v3/${group}`);
  const headers: Record<string, string> = { Vary: 'Accept' };
  const hash = request.query?.get('hash');
  if (hash) {
    if (hash !== doc.hash) {
      const location = serverRelativeURL(group, doc.hash);
      const html = `<a href="${location}">Moved Permanently</a>.\n\n`;
      return {
        status: 301,
        contentType: 'text/html; charset=utf-8',
        body: html,
        serialized: html,
        headers: { Location: location },
      };
    }
    headers['Cache-Control'] = 'public, immutable';
    headers['Expires'] = new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString();
  }
  return serve(doc, headers, request);
}

function serve(
  doc: CachedDocument,
  headers: Record<string, string>,
  request: OpenApiRequest,
): DocumentResponse {
  const all = { ETag: `"${doc.hash}"`, ...headers };
  if (ifNoneMatchHits(request.ifNoneMatch, doc.hash)) return notModified(all);
  return documentResponse(200, 'application/json', doc, all);
}
