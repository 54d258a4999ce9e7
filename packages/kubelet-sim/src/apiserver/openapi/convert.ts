// OpenAPI v2 → v3, the way k8s.io/kube-openapi pkg/openapiconv (ConvertV2ToV3) converts the
// swagger of an aggregated API server that publishes no v3: `#/definitions/` refs become
// `#/components/schemas/`, a `$ref` with siblings is wrapped in `allOf` (builder3/util WrapRefs, as
// kube-apiserver's own v3 documents have it), body parameters become `requestBody` per `consumes`
// type, response schemas `content` per `produces` type, simple parameters get a `schema`. One
// difference: `#/parameters/…` refs are inlined, because kube-apiserver's v3 documents (builder3)
// carry every parameter inline and have no `components.parameters` for such a ref to point at.
// Vendor extensions (`x-kubernetes-group-version-kind`, `x-kubernetes-action`, …) are kept.

import type { JsonObject } from './types.js';
import { HTTP_METHODS } from './paths.js';

const V2_DEFINITIONS = '#/definitions/';
const V3_SCHEMAS = '#/components/schemas/';

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function mapValues(record: unknown, f: (v: JsonObject) => JsonObject): JsonObject {
  const out: JsonObject = {};
  if (isObject(record)) for (const [k, v] of Object.entries(record)) out[k] = isObject(v) ? f(v) : v;
  return out;
}

function extensions(source: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(source).filter(([k]) => k.startsWith('x-')));
}

/** A v2 `$ref` to a definition, pointed at the v3 document's schemas. */
export function convertRef(ref: unknown): unknown {
  return typeof ref === 'string' && ref.startsWith(V2_DEFINITIONS)
    ? V3_SCHEMAS + ref.slice(V2_DEFINITIONS.length)
    : ref;
}

/** openapiconv.ConvertSchema: nested schemas converted, refs renamed, refs with siblings wrapped. */
export function convertSchema(v2: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(v2)) {
    switch (key) {
      case '$ref':
        out[key] = convertRef(value);
        break;
      case 'properties':
      case 'patternProperties':
      case 'definitions':
        out[key] = mapValues(value, convertSchema);
        break;
      case 'items':
        out[key] = Array.isArray(value)
          ? convertSchemas(value)
          : isObject(value)
            ? convertSchema(value)
            : value;
        break;
      case 'additionalProperties':
      case 'additionalItems':
      case 'not':
        out[key] = isObject(value) ? convertSchema(value) : value;
        break;
      case 'allOf':
      case 'anyOf':
      case 'oneOf':
        out[key] = Array.isArray(value) ? convertSchemas(value) : value;
        break;
      default:
        out[key] = value;
    }
  }
  return wrapRef(out);
}

function convertSchemas(list: readonly unknown[]): unknown[] {
  return list.map((v) => (isObject(v) ? convertSchema(v) : v));
}

/**
 * builder3/util WrapRefs: in OpenAPI 3.0 a `$ref`'s siblings are ignored, so a ref that carries a
 * description (or any other member) moves into `allOf: [{$ref}]` next to them.
 */
function wrapRef(schema: JsonObject): JsonObject {
  if (!('$ref' in schema) || Object.keys(schema).length === 1) return schema;
  const { $ref, ...rest } = schema;
  return { ...rest, allOf: [{ $ref }] };
}

/** openapiconv.ConvertParameter, after resolving a `#/parameters/…` ref against the swagger's. */
function convertParameter(v2: JsonObject, shared: Record<string, JsonObject>): JsonObject {
  let param = v2;
  if (typeof v2['$ref'] === 'string' && v2['$ref'].startsWith('#/parameters/')) {
    const resolved = shared[v2['$ref'].slice('#/parameters/'.length)];
    if (!resolved) throw new Error(`dangling parameter reference ${v2['$ref']}`);
    param = resolved;
  }
  const schema = isObject(param['schema'])
    ? convertSchema(param['schema'])
    : {
        type: param['type'],
        ...(param['format'] ? { format: param['format'] } : {}),
        ...(param['uniqueItems'] ? { uniqueItems: param['uniqueItems'] } : {}),
      };
  return {
    name: param['name'],
    in: param['in'],
    ...(param['description'] !== undefined ? { description: param['description'] } : {}),
    ...(param['required'] ? { required: true } : {}),
    ...(param['allowEmptyValue'] ? { allowEmptyValue: true } : {}),
    schema,
    ...extensions(param),
  };
}

/** openapiconv.ConvertResponse: the schema once per `produces` media type. */
function convertResponse(v2: JsonObject, produces: unknown): JsonObject {
  const out: JsonObject = {};
  if (typeof v2['$ref'] === 'string')
    out['$ref'] = v2['$ref'].replace('#/responses/', '#/components/responses/');
  if (v2['description'] !== undefined) out['description'] = v2['description'];
  if (isObject(v2['schema']) && Array.isArray(produces)) {
    const schema = v2['schema'];
    out['content'] = Object.fromEntries(
      produces.map((mediaType) => [String(mediaType), { schema: convertSchema(schema) }]),
    );
  }
  return { ...out, ...extensions(v2) };
}

/** openapiconv.ConvertOperation: `consumes`/`produces`/`schemes` dissolve into the media types. */
function convertOperation(v2: JsonObject, shared: Record<string, JsonObject>): JsonObject {
  const out: JsonObject = {};
  for (const key of ['tags', 'summary', 'description', 'externalDocs', 'operationId'])
    if (v2[key] !== undefined) out[key] = v2[key];
  const parameters: JsonObject[] = [];
  for (const p of Array.isArray(v2['parameters']) ? (v2['parameters'] as unknown[]) : []) {
    if (!isObject(p)) continue;
    const resolved =
      typeof p['$ref'] === 'string' ? (shared[p['$ref'].slice('#/parameters/'.length)] ?? p) : p;
    if (resolved['in'] === 'body' && isObject(resolved['schema'])) {
      const schema = resolved['schema'];
      const consumes = Array.isArray(v2['consumes']) ? (v2['consumes'] as unknown[]) : [];
      out['requestBody'] = {
        content: Object.fromEntries(consumes.map((c) => [String(c), { schema: convertSchema(schema) }])),
      };
    } else parameters.push(convertParameter(p, shared));
  }
  if (parameters.length > 0) out['parameters'] = parameters;
  out['responses'] = mapValues(v2['responses'], (r) => convertResponse(r, v2['produces']));
  if (v2['deprecated'] !== undefined) out['deprecated'] = v2['deprecated'];
  return { ...out, ...extensions(v2) };
}

/** openapiconv.ConvertPathItem. */
export function convertPathItem(v2: JsonObject, shared: Record<string, JsonObject>): JsonObject {
  const out: JsonObject = {};
  for (const method of HTTP_METHODS) {
    const op = v2[method];
    if (isObject(op)) out[method] = convertOperation(op, shared);
  }
  if (Array.isArray(v2['parameters'])) {
    out['parameters'] = (v2['parameters'] as unknown[])
      .filter(isObject)
      .map((p) => convertParameter(p, shared));
  }
  return { ...out, ...extensions(v2) };
}

/** openapiconv.ConvertSecurityScheme (Kubernetes has only the `BearerToken` API key). */
export function convertSecurityScheme(v2: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of ['type', 'description', 'name', 'in']) if (v2[key] !== undefined) out[key] = v2[key];
  if (typeof v2['flow'] === 'string') {
    out['flows'] = {
      [v2['flow']]: {
        ...(v2['authorizationUrl'] !== undefined ? { authorizationUrl: v2['authorizationUrl'] } : {}),
        ...(v2['tokenUrl'] !== undefined ? { tokenUrl: v2['tokenUrl'] } : {}),
        ...(v2['scopes'] !== undefined ? { scopes: v2['scopes'] } : {}),
      },
    };
  }
  return { ...out, ...extensions(v2) };
}
