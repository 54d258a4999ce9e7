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

function render(trimmed: UpstreamSwagger, source: SwaggerSource): string {
  const header = [
    `// DO NOT EDIT — generated by packages/kubelet-sim/scripts/generate-openapi.ts`,
    `// (npm run generate:openapi -w @plugboard/kubelet-sim) from Kubernetes ${source.kubernetesVersion}`,
    `// api/openapi-spec/swagger.json (sha256 ${source.sha256}),`,
    `// read from ${source.origin}.`,
    `// The paths of the resources in resources.ts, the definitions and parameters they reach, verbatim.`,
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
\`../../resources.ts\`. Add a resource there and regenerate; never edit the data by hand.
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
  const trimmed = trimSwagger(upstream);
  mkdirSync(OUT_DIR, { recursive: true });
  const out = join(OUT_DIR, 'swagger.ts');
  const text = render(trimmed, source);
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
