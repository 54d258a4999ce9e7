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
// `/openapi/v2` is also served as protobuf, as kube-apiserver serves it and as client-go's
// discovery OpenAPISchema() asks for it (only `Accept: application/com.github.proto-openapi.spec.v2@
// v1.0+protobuf`), which is what kubectl's client-side validation (`kubectl create|apply -f`, for
// kinds whose v3 document shows no PATCH with `fieldValidation`) and `kubectl explain
// --output=plaintext-openapiv2` read: gnostic's `openapi_v2.Document` (@plugboard/proto's
// openapiv2), converted from the JSON document's own bytes as kube-openapi's ToProtoBinary does
// (gnostic.ts), built on the first such request and kept. Negotiation is pkg/handler's: for each
// Accept clause in preference order, the first of JSON, `…spec.v2@v1.0+protobuf` (deprecated) and
// `…spec.v2.v1.0+protobuf` it matches; both protobuf types are answered with Content-Type
// `application/com.github.proto-openapi.spec.v2.v1.0+protobuf` and the JSON document's ETag
// (upstream reuses it: the response varies by Accept). Difference: v3 stays JSON only, a
// protobuf-only request for a v3 document is answered 406 with a Status (kubectl asks v3 for JSON).

import * as openapiv2 from './generated/openapiv2/OpenAPIv2.pb.js';
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
import { gnosticDocument } from './gnostic.js';

/** What client-go's discovery client sends as the only Accept for `/openapi/v2` (deprecated upstream). */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
/** The current name of the same type, and the Content-Type kube-apiserver answers either with. */
export const OPENAPI_V2_PROTOBUF_CURRENT = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/** pkg/handler's accepted types for `/openapi/v2`, in the order each Accept clause is tried. */
const V2_FORMATS = [
  { subtype: 'json', format: 'json' },
  { subtype: OPENAPI_V2_PROTOBUF.slice('application/'.length), format: 'protobuf' },
  { subtype: OPENAPI_V2_PROTOBUF_CURRENT.slice('application/'.length), format: 'protobuf' },
] as const;

export interface OpenApiRequest {
  /** The request's query: `hash` on a v3 group document. */
  query?: URLSearchParams | undefined;
  /** The request's If-None-Match: 304 when it names the document's current ETag. */
  ifNoneMatch?: string | undefined;
}

interface Published {
  v2: CachedDocument;
  /** The v2 document as gnostic's protobuf, built on first request. */
  v2Protobuf?: { document: openapiv2.Document; bytes: Uint8Array };
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

/** Whether the Accept header takes JSON before any (unsupported) alternative: handler3's loop. */
function acceptsJson(accept: string | undefined): boolean {
  return parseAccept(accept).some((range) => rangeMatches(range, 'application', 'json'));
}

/** handler's loop for `/openapi/v2`: the first accepted format of the most preferred clause. */
function v2Format(accept: string | undefined): 'json' | 'protobuf' | undefined {
  for (const range of parseAccept(accept))
    for (const { subtype, format } of V2_FORMATS)
      if (rangeMatches(range, 'application', subtype)) return format;
  return undefined;
}

/** ToProtoBinary: the gnostic Document of the served JSON bytes, encoded. */
function v2Protobuf(docs: Published): { document: openapiv2.Document; bytes: Uint8Array } {
  if (!docs.v2Protobuf) {
    const document = gnosticDocument(JSON.parse(docs.v2.serialized) as object);
    docs.v2Protobuf = { document, bytes: openapiv2.Document.encode(document).finish() };
  }
  return docs.v2Protobuf;
}

function notAcceptable(document: string, types: string): DocumentResponse {
  return statusResponse(406, 'NotAcceptable', `${document} is served as ${types} only`);
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
    const format = v2Format(accept);
    if (format === undefined)
      return notAcceptable('/openapi/v2', `application/json and ${OPENAPI_V2_PROTOBUF_CURRENT}`);
    if (format === 'json') return serve(docs.v2, { Vary: 'Accept' }, request);
    // Upstream gives the protobuf the JSON document's ETag; the response varies by Accept.
    const headers = { ETag: `"${docs.v2.hash}"`, Vary: 'Accept' };
    if (ifNoneMatchHits(request.ifNoneMatch, docs.v2.hash)) return notModified(headers);
    const { document, bytes } = v2Protobuf(docs);
    return {
      status: 200,
      contentType: OPENAPI_V2_PROTOBUF_CURRENT,
      body: document,
      serialized: bytes,
      headers,
    };
  }
  // handler3 HandleDiscovery: JSON whatever the Accept header says.
  if (p === 'openapi/v3') return serve(docs.v3Discovery, {}, request);

  const group = p.slice('openapi/v3/'.length);
  const doc = docs.v3.get(group);
  // kube-aggregator's v3 proxy: a group-version nobody serves is a 404.
  if (!doc) return statusResponse(404, 'NotFound', 'the server could not find the requested resource');
  if (!acceptsJson(accept)) return notAcceptable(`/openapi/v3/${group}`, 'application/json');
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
