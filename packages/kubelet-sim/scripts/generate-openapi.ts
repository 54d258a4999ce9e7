// Writes src/apiserver/openapi/generated/swagger.ts: Kubernetes' own OpenAPI v2 document (a
// release's api/openapi-spec/swagger.json) cut down to the paths of the resources the API slice
// serves (src/apiserver/resources.ts: every subresource and operation upstream has for them) and the
// definitions and shared parameters those reach, plus meta/v1 Status. What is kept is verbatim.
//
//   npm run generate:openapi -w @plugboard/kubelet-sim
//       reads Kubernetes v1.35.0's swagger.json as the official JavaScript client vendors it
//       (kubernetes-client/javascript src/gen/swagger.json.unprocessed; its `settings` file names
//       the Kubernetes tag) from the local mirror of that repository
//   npm run generate:openapi -w @plugboard/kubelet-sim -- <swagger.json> --kubernetes-version v1.36.0
//       reads a swagger.json file instead
//
// Re-run it after adding a resource to resources.ts (openapi.test.ts fails until then).

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { pathOwner } from '../src/apiserver/openapi/paths.js';
import type { SwaggerSource, UpstreamSwagger } from '../src/apiserver/openapi/types.js';
import { RESOURCES } from '../src/apiserver/resources.js';

const DEFAULT_MIRROR = '/work/.mirror/kubernetes-client+javascript/repo';
const MIRROR_FILE = 'src/gen/swagger.json.unprocessed';
const OUT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../src/apiserver/openapi/generated');
/** Definitions every document needs besides what the paths reach: the error body of every API call. */
const EXTRA_DEFINITIONS = ['io.k8s.apimachinery.pkg.apis.meta.v1.Status'];

class GenerateError extends Error {}

function git(repo: string, ...args: string[]): string {
  return execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

/** The swagger.json bytes and where they came from. */
function readSource(
  file: string | undefined,
  version: string | undefined,
): { bytes: Buffer } & SwaggerSource {
  if (file !== undefined) {
    if (!existsSync(file)) throw new GenerateError(`${file}: no such file`);
    if (!version) throw new GenerateError('--kubernetes-version is required with a swagger.json file');
    const bytes = readFileSync(file);
    return { bytes, kubernetesVersion: version, sha256: sha256(bytes), origin: resolve(file) };
  }
  if (!existsSync(DEFAULT_MIRROR)) {
    throw new GenerateError(
      `no swagger.json given and the mirror of kubernetes-client/javascript is missing (${DEFAULT_MIRROR}); ` +
        'pass the path of a Kubernetes api/openapi-spec/swagger.json and --kubernetes-version',
    );
  }
  const commit = git(DEFAULT_MIRROR, 'rev-parse', 'HEAD').trim();
  const bytes = Buffer.from(git(DEFAULT_MIRROR, 'show', `${commit}:${MIRROR_FILE}`), 'utf8');
  const settings = git(DEFAULT_MIRROR, 'show', `${commit}:settings`);
  const branch = /^export KUBERNETES_BRANCH="?([^"\s]+)"?/m.exec(settings)?.[1];
  const kubernetesVersion = version ?? branch;
  if (!kubernetesVersion)
    throw new GenerateError(`cannot tell the Kubernetes release from ${DEFAULT_MIRROR} settings`);
  return {
    bytes,
    kubernetesVersion,
    sha256: sha256(bytes),
    origin: `kubernetes-client/javascript@${commit} ${MIRROR_FILE}`,
  };
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Every `$ref` below `value`. */
function refsIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refsIn(v, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsIn(v, out);
    }
  }
  return out;
}

function sorted<T>(record: Record<string, T>, keys: Iterable<string>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const k of [...keys].sort()) out[k] = record[k]!;
  return out;
}

// --- resource.k8s.io/v1 DeviceTaintRule, derived ------------------------------------------------
//
// DeviceTaintRule is resource.k8s.io/v1 since Kubernetes 1.37 (k8s.io/api resource/v1/types.go, with
// a `status` subresource), but the newest swagger.json reachable here is v1.35.0's, which has the
// kind only in v1alpha3 and v1beta2. Until a 1.37 swagger can be read, the v1 definitions and paths
// are derived from the v1beta2 ones, whose fields, json names and descriptions are those of the 1.37
// v1 type (the tombstoned `deviceClassName` and `selectors` of DeviceTaintSelector are gone from
// v1beta2 already; they are dropped here too should a source still carry them). Deriving renames:
// the definitions (io.k8s.api.resource.v1beta2.X → v1.X), every `$ref` to a resource.k8s.io/v1beta2
// type, the group-version-kinds, the paths (/apis/resource.k8s.io/v1beta2/… → v1), operation IDs
// (…ResourceV1beta2… → …ResourceV1…) and tags. One behaviour of v1 differs from v1beta2 and is
// carried over: its DELETE answers a Status, not the deleted object
// (pkg/registry/resource/devicetaintrule/storage: NewRESTv1 has returnDeletedObject false; the API
// server's installer then documents Status). The renaming is checked on DeviceClass, which both
// versions have: v1beta2's DeviceClass paths renamed must be v1's, byte for byte. A swagger.json
// that has the v1 kind already is taken as it is.

const DERIVED_GROUP = 'resource.k8s.io';
const DERIVED_FROM = 'v1beta2';
const DERIVED_TYPES = [
  'DeviceTaintRule',
  'DeviceTaintRuleList',
  'DeviceTaintRuleSpec',
  'DeviceTaintRuleStatus',
  'DeviceTaintSelector',
] as const;
/** Fields k8s.io/api resource/v1/types.go tombstones (commented out, "Tombstoned since 1.35"). */
const TOMBSTONED: Partial<Record<(typeof DERIVED_TYPES)[number], readonly string[]>> = {
  DeviceTaintSelector: ['deviceClassName', 'selectors'],
};
const STATUS_REF = '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status';

const resourceDefinition = (version: string, type: string) => `io.k8s.api.resource.${version}.${type}`;

/** `value` with every resource.k8s.io/v1beta2 reference, GVK, operation ID and tag renamed to v1. */
function renameToV1(value: unknown, key?: string): unknown {
  if (Array.isArray(value)) return value.map((v) => renameToV1(v, key));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = renameToV1(v, k);
    if (
      key === 'x-kubernetes-group-version-kind' &&
      out['group'] === DERIVED_GROUP &&
      out['version'] === DERIVED_FROM
    )
      out['version'] = 'v1';
    return out;
  }
  if (typeof value !== 'string') return value;
  switch (key) {
    case '$ref':
      return value.replace(
        `#/definitions/io.k8s.api.resource.${DERIVED_FROM}.`,
        '#/definitions/io.k8s.api.resource.v1.',
      );
    case 'operationId':
      return value.replace('ResourceV1beta2', 'ResourceV1');
    case 'tags':
      return value === 'resource_v1beta2' ? 'resource_v1' : value;
    default:
      return value;
  }
}

const v1Path = (path: string) =>
  path.replace(`/apis/${DERIVED_GROUP}/${DERIVED_FROM}/`, `/apis/${DERIVED_GROUP}/v1/`);
const resourcePaths = (upstream: UpstreamSwagger, version: string, resource: string) =>
  Object.keys(upstream.paths).filter((p) =>
    new RegExp(`^/apis/${DERIVED_GROUP.replace(/\./g, '\\.')}/${version}/(?:watch/)?${resource}(?:/|$)`).test(
      p,
    ),
  );

/** Adds the derived v1 DeviceTaintRule definitions and paths; returns the derived definitions' names. */
function deriveDeviceTaintRuleV1(upstream: UpstreamSwagger): string[] {
  if (upstream.definitions[resourceDefinition('v1', 'DeviceTaintRule')]) return [];
  // The check of the renaming: v1beta2 DeviceClass paths become v1's exactly.
  for (const p of resourcePaths(upstream, DERIVED_FROM, 'deviceclasses')) {
    const renamed = JSON.stringify(renameToV1(upstream.paths[p]));
    if (renamed !== JSON.stringify(upstream.paths[v1Path(p)]))
      throw new GenerateError(
        `renaming ${DERIVED_FROM} to v1 does not reproduce ${v1Path(p)}; cannot derive DeviceTaintRule`,
      );
  }
  const derived: string[] = [];
  for (const type of DERIVED_TYPES) {
    const source = upstream.definitions[resourceDefinition(DERIVED_FROM, type)];
    if (!source)
      throw new GenerateError(`${resourceDefinition(DERIVED_FROM, type)} is not in the swagger.json`);
    const schema = renameToV1(source) as Record<string, unknown>;
    const tombstoned = TOMBSTONED[type] ?? [];
    if (tombstoned.length > 0) {
      const properties = { ...(schema['properties'] as Record<string, unknown>) };
      for (const field of tombstoned) delete properties[field];
      schema['properties'] = properties;
    }
    for (const ref of refsIn(schema)) {
      const target = ref.slice('#/definitions/'.length);
      if (!upstream.definitions[target] && !DERIVED_TYPES.some((t) => resourceDefinition('v1', t) === target))
        throw new GenerateError(`derived ${type} refers to ${target}, which the swagger.json does not have`);
    }
    upstream.definitions[resourceDefinition('v1', type)] = schema;
    derived.push(resourceDefinition('v1', type));
  }
  const paths = resourcePaths(upstream, DERIVED_FROM, 'devicetaintrules');
  if (paths.length === 0)
    throw new GenerateError(`no ${DERIVED_FROM} devicetaintrules paths to derive v1 from`);
  for (const p of paths) {
    const item = renameToV1(upstream.paths[p]) as Record<string, Record<string, unknown>>;
    const del = item['delete'];
    if (del?.['x-kubernetes-action'] === 'delete') {
      const responses = del['responses'] as Record<string, Record<string, unknown>>;
      for (const code of ['200', '202'])
        if (responses[code]) responses[code] = { ...responses[code], schema: { $ref: STATUS_REF } };
    }
    upstream.paths[v1Path(p)] = item;
  }
  return derived;
}

function trimSwagger(upstream: UpstreamSwagger): UpstreamSwagger {
  const paths = Object.keys(upstream.paths).filter((p) => pathOwner(p) !== undefined);
  const parameters = new Set<string>();
  const roots: string[] = [...EXTRA_DEFINITIONS];
  for (const r of RESOURCES) {
    if (!upstream.definitions[r.definition])
      throw new GenerateError(`${r.resource}: definition ${r.definition} is not in the swagger.json`);
    roots.push(r.definition);
    if (upstream.definitions[`${r.definition}List`]) roots.push(`${r.definition}List`);
  }
  for (const p of paths) {
    for (const ref of refsIn(upstream.paths[p])) {
      if (ref.startsWith('#/parameters/')) {
        const name = ref.slice('#/parameters/'.length);
        const parameter = upstream.parameters[name];
        if (!parameter) throw new GenerateError(`${p}: dangling ${ref}`);
        parameters.add(name);
        for (const r of refsIn(parameter)) roots.push(r.slice('#/definitions/'.length));
      } else if (ref.startsWith('#/definitions/')) roots.push(ref.slice('#/definitions/'.length));
      else throw new GenerateError(`${p}: unexpected $ref ${ref}`);
    }
  }
  const definitions = new Set<string>();
  while (roots.length > 0) {
    const name = roots.pop()!;
    if (definitions.has(name)) continue;
    const schema = upstream.definitions[name];
    if (!schema) throw new GenerateError(`dangling reference to definition ${name}`);
    definitions.add(name);
    for (const ref of refsIn(schema)) roots.push(ref.slice('#/definitions/'.length));
  }
  return {
    swagger: upstream.swagger,
    info: upstream.info,
    paths: sorted(upstream.paths, paths),
    parameters: sorted(upstream.parameters, parameters),
    definitions: sorted(upstream.definitions, definitions),
    securityDefinitions: upstream.securityDefinitions,
    security: upstream.security,
  };
}

function render(trimmed: UpstreamSwagger, source: SwaggerSource, derived: readonly string[]): string {
  const header = [
    `// DO NOT EDIT — generated by packages/kubelet-sim/scripts/generate-openapi.ts`,
    `// (npm run generate:openapi -w @plugboard/kubelet-sim) from Kubernetes ${source.kubernetesVersion}`,
    `// api/openapi-spec/swagger.json (sha256 ${source.sha256}),`,
    `// read from ${source.origin}.`,
    ...(derived.length === 0
      ? [
          `// The paths of the resources in resources.ts, the definitions and parameters they reach, verbatim.`,
        ]
      : [
          `// The paths of the resources in resources.ts, the definitions and parameters they reach, verbatim,`,
          `// except what that release lacks and the generator derives from v1beta2 (deriveDeviceTaintRuleV1):`,
          ...derived.map((d) => `//   ${d}`),
          `//   and the resource.k8s.io/v1 devicetaintrules paths.`,
        ]),
  ].join('\n');
  return (
    `${header}\n\n` +
    `import type { SwaggerSource, UpstreamSwagger } from '../types.js';\n\n` +
    `export const SWAGGER_SOURCE: SwaggerSource = ${JSON.stringify(source, null, 2)};\n\n` +
    `export const swagger: UpstreamSwagger = ${JSON.stringify(trimmed, null, 2)};\n`
  );
}

const README = `# Generated code: DO NOT EDIT

Everything in this folder is written by \`npm run generate:openapi -w @plugboard/kubelet-sim\`
(\`packages/kubelet-sim/scripts/generate-openapi.ts\`): Kubernetes' own OpenAPI v2 document
(\`api/openapi-spec/swagger.json\` of the release named in \`swagger.ts\`) cut down to the resources in
\`../../resources.ts\`, plus the kinds that release lacks and the script derives from an older
version of the same kind (its header names them and the script says why). Add a resource there and
regenerate; never edit the data by hand.
`;

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { 'kubernetes-version': { type: 'string' } },
  });
  if (positionals.length > 1)
    throw new GenerateError('usage: generate-openapi.ts [swagger.json] [--kubernetes-version vX.Y.Z]');
  const { bytes, ...source } = readSource(positionals[0], values['kubernetes-version']);
  let upstream: UpstreamSwagger;
  try {
    upstream = JSON.parse(bytes.toString('utf8')) as UpstreamSwagger;
  } catch (err) {
    throw new GenerateError(`${source.origin}: not JSON`, { cause: err });
  }
  if (
    upstream.swagger !== '2.0' ||
    typeof upstream.definitions !== 'object' ||
    typeof upstream.paths !== 'object'
  )
    throw new GenerateError(`${source.origin}: not a Swagger 2.0 document`);
  const derived = deriveDeviceTaintRuleV1(upstream);
  const trimmed = trimSwagger(upstream);
  mkdirSync(OUT_DIR, { recursive: true });
  const out = join(OUT_DIR, 'swagger.ts');
  // Derived definitions the served resources do not reach are not in the output: name only the others.
  const text = render(
    trimmed,
    source,
    derived.filter((d) => trimmed.definitions[d]),
  );
  writeFileSync(out, text);
  writeFileSync(join(OUT_DIR, 'README.md'), README);
  console.log(
    `${out}: ${Object.keys(trimmed.paths).length} paths, ${Object.keys(trimmed.definitions).length} definitions, ` +
      `${Object.keys(trimmed.parameters).length} parameters, ${Buffer.byteLength(text)} bytes ` +
      `(Kubernetes ${source.kubernetesVersion}, sha256 ${source.sha256})`,
  );
}

try {
  main();
} catch (err) {
  if (!(err instanceof GenerateError)) throw err;
  console.error(`generate-openapi: ${err.message}`);
  process.exit(1);
}
