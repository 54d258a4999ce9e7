// Third-party device plugins and DRA drivers the test bed runs against real and simulated kubelets,
// built from the Go module proxy at pinned versions and cached outside the repository beside the
// Kubernetes binaries (same cache root, same Go check). Each is built in a throw-away Go module that
// requires only the pinned module: its own go.mod decides every dependency (minimal version
// selection, sums checked against the checksum database), so module@version and the Go version that
// builds it are the whole cache key.
// Two processes asking at once may both build; each builds into a directory of its own and the
// first rename into place wins, the other's copy is dropped — a reader only ever sees a whole binary.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from './binaries.js';
import { LocalClusterError } from './errors.js';
import { checkGo, goCommand } from './go-toolchain.js';

export type ThirdPartyBinaryName = 'dra-example-kubeletplugin';

/** A binary built from a module the Go module proxy serves, at an exact version. */
export interface ThirdPartyBinary {
  /** The Go module. */
  module: string;
  /** The exact version built (the newest the module proxy serves here). */
  version: string;
  /** The main package inside the module. */
  package: string;
}

/**
 * The pinned third-party binaries: the one place their versions are set. Change a version here and
 * the next `plugboard-cluster build-third-party` (which `npm test` runs) builds it anew. Upstream's
 * sample device plugin is not here: it is part of k8s.io/kubernetes, whose staging modules only its
 * own go.mod's replacements resolve, so it is built with the Kubernetes binaries (binaries.ts).
 */
export const THIRD_PARTY_BINARIES: Readonly<Record<ThirdPartyBinaryName, ThirdPartyBinary>> = {
  // kubernetes-sigs/dra-example-driver's kubelet plugin (driver gpu.example.com by default).
  'dra-example-kubeletplugin': {
    module: 'sigs.k8s.io/dra-example-driver',
    version: 'v0.4.0',
    package: 'sigs.k8s.io/dra-example-driver/cmd/dra-example-kubeletplugin',
  },
};

export const THIRD_PARTY_NAMES = Object.keys(THIRD_PARTY_BINARIES) as ThirdPartyBinaryName[];

/** What a binary is built from, in words: `module@version`. */
export function thirdPartyLabel(spec: ThirdPartyBinary): string {
  return `${spec.module}@${spec.version}`;
}

/**
 * Where one pinned binary lives once built with Go `goVersion`:
 * `<cache>/third-party/<module>@<version>/go<goVersion>/<name>`. Its module, version and the Go that
 * built it are the whole key (the module's own go.mod decides every dependency): neither a
 * Kubernetes bump nor a change to local-cluster's Go module rebuilds it.
 */
export function thirdPartyDir(
  name: ThirdPartyBinaryName,
  goVersion: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const spec = THIRD_PARTY_BINARIES[name];
  return join(cacheRoot(env), 'third-party', `${spec.module}@${spec.version}`, `go${goVersion}`);
}

/** The built binary's path, or null when this version has not been built with that Go. */
export function cachedThirdPartyBinary(
  name: ThirdPartyBinaryName,
  goVersion: string,
  env: NodeJS.ProcessEnv = process.env,
): string | null {
  const bin = join(thirdPartyDir(name, goVersion, env), name);
  return existsSync(bin) ? bin : null;
}

/** The go.mod of the throw-away module that builds `spec`. */
export function builderGoMod(spec: ThirdPartyBinary): string {
  return `module plugboard.example/third-party-build\n\ngo 1.26.0\n\nrequire ${spec.module} ${spec.version}\n`;
}

function runGo(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(goCommand(env), args, {
      cwd,
      // -mod=mod: the throw-away module has no go.sum; go writes it, checking each sum against the
      // checksum database.
      env: { ...env, GOFLAGS: `${env.GOFLAGS ?? ''} -mod=mod`.trim() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const onData = (chunk: Buffer): void => void (out = (out + chunk.toString()).slice(-8000));
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, out }));
  });
}

async function buildFromModuleProxy(
  spec: ThirdPartyBinary,
  moduleDir: string,
  out: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; out: string }> {
  mkdirSync(moduleDir, { recursive: true });
  writeFileSync(join(moduleDir, 'go.mod'), builderGoMod(spec));
  const result = await runGo(['build', '-o', out, spec.package], moduleDir, env);
  if (result.code === 0) {
    // The module's go.sum stays beside the binary: it records exactly what was built.
    renameSync(join(moduleDir, 'go.sum'), join(moduleDir, '..', 'go.sum'));
  }
  rmSync(moduleDir, { recursive: true, force: true });
  return result;
}

/**
 * Returns the path of the pinned binary `name`, building it first if this version has none
 * (minutes the first time on two cores; `onBuild` is told when a build starts and ends).
 */
export async function ensureThirdPartyBinary(
  name: ThirdPartyBinaryName,
  opts: { env?: NodeJS.ProcessEnv; onBuild?: (event: { phase: 'start' | 'done'; ms: number }) => void } = {},
): Promise<string> {
  const env = opts.env ?? process.env;
  const spec = THIRD_PARTY_BINARIES[name];
  let goVersion: string;
  try {
    goVersion = await checkGo(goCommand(env));
  } catch (err) {
    throw new LocalClusterError(
      LocalClusterError.from(err, 'go-missing').code,
      `building ${thirdPartyLabel(spec)} (${name}) for the test bed needs Go: ${(err as Error).message}`,
      { cause: err },
    );
  }
  const cached = cachedThirdPartyBinary(name, goVersion, env);
  if (cached) return cached;
  const dir = thirdPartyDir(name, goVersion, env);
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  mkdirSync(tmp, { recursive: true });
  const started = Date.now();
  opts.onBuild?.({ phase: 'start', ms: 0 });
  try {
    const { code, out } = await buildFromModuleProxy(spec, join(tmp, 'module'), join(tmp, name), env);
    if (code !== 0) {
      throw new LocalClusterError(
        'build-failed',
        `building ${thirdPartyLabel(spec)} (${name}) failed, exit ${code}:\n${out}`,
      );
    }
    writeFileSync(
      join(tmp, '.complete'),
      `${thirdPartyLabel(spec)} go${goVersion} ${new Date().toISOString()} ${Math.round((Date.now() - started) / 1000)} s\n`,
    );
    try {
      renameSync(tmp, dir);
    } catch (err) {
      // Another process put its build in place first: keep that one.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  opts.onBuild?.({ phase: 'done', ms: Date.now() - started });
  const built = cachedThirdPartyBinary(name, goVersion, env);
  if (!built) throw new LocalClusterError('internal', `${name} was built but is not at ${dir}`);
  return built;
}
