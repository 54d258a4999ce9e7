// Third-party device plugins and DRA drivers the test bed runs against real and simulated kubelets,
// built from the Go module proxy at pinned versions and cached outside the repository beside the
// Kubernetes binaries (same cache root, same Go check). Each is built in a throw-away Go module that
// requires only the pinned module: its own go.mod decides every dependency (minimal version
// selection, sums checked against the checksum database), so module@version alone keys the cache.
// Two processes asking at once may both build; each builds into a directory of its own and the
// first rename into place wins, the other's copy is dropped — a reader only ever sees a whole binary.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildKey, cacheRoot } from './binaries.js';
import { LocalClusterError } from './errors.js';
import { checkGo, goCommand } from './go-toolchain.js';

export type ThirdPartyBinaryName = 'dra-example-kubeletplugin' | 'generic-device-plugin';

/** A binary built from a module the Go module proxy serves, at an exact version. */
export interface ModuleProxySource {
  kind: 'module-proxy';
  /** The Go module. */
  module: string;
  /** The exact version built (the newest the module proxy serves here). */
  version: string;
  /** The main package inside the module. */
  package: string;
}

/**
 * A binary built from upstream's sources kept in this package (third-party/<name>/, with their
 * LICENSE and an UPSTREAM note): for a module the Go module proxy refuses. Its cache key is a hash
 * of those files, so an update rebuilds.
 */
export interface InRepoSource {
  kind: 'in-repo';
  /** The upstream module the sources are from. */
  module: string;
  /** The upstream commit they were copied from. */
  commit: string;
  /** The module's directory. */
  dir: string;
}

export type ThirdPartyBinary = ModuleProxySource | InRepoSource;

/**
 * The pinned third-party binaries: the one place their versions are set. Change a version here and
 * the next `plugboard-cluster build-third-party` (which `npm test` runs) builds it anew.
 */
export const THIRD_PARTY_BINARIES: Readonly<Record<ThirdPartyBinaryName, ThirdPartyBinary>> = {
  // kubernetes-sigs/dra-example-driver's kubelet plugin (driver gpu.example.com by default).
  'dra-example-kubeletplugin': {
    kind: 'module-proxy',
    module: 'sigs.k8s.io/dra-example-driver',
    version: 'v0.4.0',
    package: 'sigs.k8s.io/dra-example-driver/cmd/dra-example-kubeletplugin',
  },
  // squat/generic-device-plugin (squat.ai/<name> from path globs): the module proxy refuses every
  // version of it here, so its sources are in third-party/generic-device-plugin/ (see UPSTREAM).
  'generic-device-plugin': {
    kind: 'in-repo',
    module: 'github.com/squat/generic-device-plugin',
    commit: '179b1fee5dcbf259b9940b4a233f95aefaec96e8',
    dir: fileURLToPath(new URL('../third-party/generic-device-plugin/', import.meta.url)),
  },
};

export const THIRD_PARTY_NAMES = Object.keys(THIRD_PARTY_BINARIES) as ThirdPartyBinaryName[];

/** What a binary is built from, in words: `module@version`, or `module@commit (in-repo)`. */
export function thirdPartyLabel(spec: ThirdPartyBinary): string {
  return spec.kind === 'module-proxy'
    ? `${spec.module}@${spec.version}`
    : `${spec.module}@${spec.commit.slice(0, 12)} (sources in the repository)`;
}

/** The cache entry's version: the module version, or the commit and a hash of the kept sources. */
function cacheVersion(spec: ThirdPartyBinary): string {
  return spec.kind === 'module-proxy' ? spec.version : `${spec.commit.slice(0, 12)}-${buildKey(spec.dir)}`;
}

/** Where one pinned binary lives once built: `<cache>/third-party/<name>/<version>/<name>`. */
export function thirdPartyDir(name: ThirdPartyBinaryName, env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'third-party', name, cacheVersion(THIRD_PARTY_BINARIES[name]));
}

/** The built binary's path, or null when this version has not been built. */
export function cachedThirdPartyBinary(
  name: ThirdPartyBinaryName,
  env: NodeJS.ProcessEnv = process.env,
): string | null {
  const bin = join(thirdPartyDir(name, env), name);
  return existsSync(bin) ? bin : null;
}

/** The go.mod of the throw-away module that builds `spec`. */
export function builderGoMod(spec: ModuleProxySource): string {
  return `module plugboard.example/third-party-build\n\ngo 1.26.0\n\nrequire ${spec.module} ${spec.version}\n`;
}

function runGo(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  mod: 'mod' | 'readonly',
): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(goCommand(env), args, {
      cwd,
      // -mod=mod for the throw-away module, which has no go.sum (go writes it, checking each sum
      // against the checksum database); -mod=readonly for sources in the repository, which must
      // build from their own go.mod and go.sum unchanged.
      env: { ...env, GOFLAGS: `${env.GOFLAGS ?? ''} -mod=${mod}`.trim() },
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
  spec: ModuleProxySource,
  moduleDir: string,
  out: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; out: string }> {
  mkdirSync(moduleDir, { recursive: true });
  writeFileSync(join(moduleDir, 'go.mod'), builderGoMod(spec));
  const result = await runGo(['build', '-o', out, spec.package], moduleDir, env, 'mod');
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
  const cached = cachedThirdPartyBinary(name, env);
  if (cached) return cached;
  const spec = THIRD_PARTY_BINARIES[name];
  try {
    await checkGo(goCommand(env));
  } catch (err) {
    throw new LocalClusterError(
      LocalClusterError.from(err, 'go-missing').code,
      `building ${thirdPartyLabel(spec)} (${name}) for the test bed needs Go: ${(err as Error).message}`,
      { cause: err },
    );
  }
  const dir = thirdPartyDir(name, env);
  const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
  mkdirSync(tmp, { recursive: true });
  const started = Date.now();
  opts.onBuild?.({ phase: 'start', ms: 0 });
  try {
    const { code, out } =
      spec.kind === 'module-proxy'
        ? await buildFromModuleProxy(spec, join(tmp, 'module'), join(tmp, name), env)
        : await runGo(['build', '-o', join(tmp, name), '.'], spec.dir, env, 'readonly');
    if (code !== 0) {
      throw new LocalClusterError(
        'build-failed',
        `building ${thirdPartyLabel(spec)} (${name}) failed, exit ${code}:\n${out}`,
      );
    }
    writeFileSync(
      join(tmp, '.complete'),
      `${thirdPartyLabel(spec)} ${new Date().toISOString()} ${Math.round((Date.now() - started) / 1000)} s\n`,
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
  const built = cachedThirdPartyBinary(name, env);
  if (!built) throw new LocalClusterError('internal', `${name} was built but is not at ${dir}`);
  return built;
}
