// The OpenAPI documents the slice publishes, built from the generated upstream swagger: the v2
// document (`/openapi/v2`) and one v3 document per path group (`/openapi/v3/api/v1`, …), each
// with only the operations resources.ts allows and the definitions those reach.

import { RESOURCES } from '../resources.js';
import { convertPathItem, convertSchema, convertSecurityScheme } from './convert.js';
import { swagger } from './generated/swagger.js';
import { groupVersionPrefix, HTTP_METHODS, operationServed, pathOwner, v3DocumentOf } from './paths.js';
import type { JsonObject, UpstreamSwagger } from './types.js';

/** The error body of every call: every group-version document carries it. */
const STATUS = 'io.k8s.apimachinery.pkg.apis.meta.v1.Status';

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Every `$ref` below `value`. */
export function refsIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refsIn(v, out);
  else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsIn(v, out);
    }
  }
  return out;
}

/** The named definitions and every definition they reach, sorted. */
function closure(roots: Iterable<string>, definitions: Record<string, JsonObject>): string[] {
  const seen = new Set<string>();
  const queue = [...roots];
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (seen.has(name)) continue;
    const schema = definitions[name];
    if (!schema) throw new Error(`OpenAPI: definition ${name} is missing (run npm run generate:openapi)`);
    seen.add(name);
    for (const ref of refsIn(schema)) queue.push(ref.replace(/^#\/(definitions|components\/schemas)\//, ''));
  }
  return [...seen].sort();
}

function pick<T>(record: Record<string, T>, keys: Iterable<string>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const k of keys) out[k] = record[k]!;
  return out;
}

/** The upstream path items of served paths, with only the operations the slice serves. */
export function servedPaths(source: UpstreamSwagger = swagger): Record<string, JsonObject> {
  const out: Record<string, JsonObject> = {};
  for (const [path, item] of Object.entries(source.paths)) {
    const owner = pathOwner(path);
    if (!owner) continue;
    const kept: JsonObject = {};
    let operations = 0;
    for (const [key, value] of Object.entries(item)) {
      const method = HTTP_METHODS.find((m) => m === key);
      if (method === undefined) kept[key] = value;
      else if (isObject(value) && operationServed(owner, method, value)) {
        kept[key] = value;
        operations++;
      }
    }
    if (operations > 0) out[path] = kept;
  }
  return out;
}

/** Definitions a set of v2 path items needs, through shared parameters too. */
function definitionsOf(paths: Record<string, JsonObject>, source: UpstreamSwagger): string[] {
  const roots: string[] = [];
  for (const ref of refsIn(paths)) {
    if (ref.startsWith('#/parameters/')) refsIn(source.parameters[ref.slice('#/parameters/'.length)], roots);
    else roots.push(ref);
  }
  return roots.map((r) => r.replace(/^#\/definitions\//, ''));
}

function resourceDefinitions(doc: string | undefined): string[] {
  return RESOURCES.filter((r) => doc === undefined || doc === v3DocumentOf(`${groupVersionPrefix(r)}/`)).map(
    (r) => r.definition,
  );
}

/** `/openapi/v2`: Swagger 2.0, the served operations and the definitions they reach. */
export function buildOpenApiV2(source: UpstreamSwagger = swagger): UpstreamSwagger {
  const paths = servedPaths(source);
  const parameters = new Set(
    refsIn(paths)
      .filter((r) => r.startsWith('#/parameters/'))
      .map((r) => r.slice('#/parameters/'.length)),
  );
  const definitions = closure(
    [...definitionsOf(paths, source), ...resourceDefinitions(undefined), STATUS],
    source.definitions,
  );
  return {
    swagger: source.swagger,
    info: source.info,
    paths,
    definitions: pick(source.definitions, definitions),
    parameters: pick(source.parameters, [...parameters].sort()),
    securityDefinitions: source.securityDefinitions,
    security: source.security,
  };
}

/**
 * The OpenAPI 3.0 documents, keyed as `/openapi/v3` lists them: `api`, `api/v1`, `apis`,
 * `apis/{group}`, `apis/{group}/{version}` (kube-apiserver publishes one per path group).
 */
export function buildOpenApiV3(source: UpstreamSwagger = swagger): Map<string, JsonObject> {
  const byDocument = new Map<string, Record<string, JsonObject>>();
  for (const [path, item] of Object.entries(servedPaths(source))) {
    const doc = v3DocumentOf(path);
    if (doc === undefined) continue;
    let paths = byDocument.get(doc);
    if (!paths) byDocument.set(doc, (paths = {}));
    paths[path] = item;
  }
  const securitySchemes = Object.fromEntries(
    Object.entries(source.securityDefinitions).map(([k, v]) => [k, convertSecurityScheme(v)]),
  );
  const documents = new Map<string, JsonObject>();
  for (const doc of [...byDocument.keys()].sort()) {
    const v2Paths = byDocument.get(doc)!;
    const isGroupVersion = /^(api\/[^/]+|apis\/[^/]+\/[^/]+)$/.test(doc);
    const roots = [...definitionsOf(v2Paths, source), ...resourceDefinitions(doc)];
    if (isGroupVersion) roots.push(STATUS);
    const schemas: JsonObject = {};
    for (const name of closure(roots, source.definitions))
      schemas[name] = convertSchema(source.definitions[name]!);
    documents.set(doc, {
      openapi: '3.0.0',
      info: source.info,
      paths: Object.fromEntries(
        Object.entries(v2Paths).map(([path, item]) => [path, convertPathItem(item, source.parameters)]),
      ),
      components: { schemas, securitySchemes },
    });
  }
  return documents;
}
