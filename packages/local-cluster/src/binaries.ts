// The upstream binaries of the local cluster, built once from the Go module in go/ and cached
// outside the repository, keyed on what decides their content (go.mod, go.sum, the packages built, the module's own
// sources and the version ldflags): a second `npm test` or `plugboard-cluster up` reuses them, and a
// version change rebuilds. One `go build` for the Kubernetes commands shares their compile graph.
// The first build takes many minutes on two cores, so it prints a progress line as it goes.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { LocalClusterError } from './errors.js';
import { ETCD_SERVER_MODULE } from './go-mod.js';
import { checkGo, goCommand } from './go-toolchain.js';
import { GO_MODULE_DIR, KUBERNETES_VERSION } from './versions.js';

/** The binaries a local cluster runs, by name. */
export type BinaryName =
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kubelet'
  | 'kubectl'
  | 'etcd'
  | 'fake-runtime'
  | 'pki'
  | 'sample-device-plugin'
  | 'dra-test-driver';

export type Binaries = Readonly<Record<BinaryName, string>> & { readonly dir: string };

const KUBERNETES_PACKAGES = [
  'k8s.io/kubernetes/cmd/kube-apiserver',
  'k8s.io/kubernetes/cmd/kube-controller-manager',
  'k8s.io/kubernetes/cmd/kube-scheduler',
  'k8s.io/kubernetes/cmd/kubelet',
  'k8s.io/kubernetes/cmd/kubectl',
  // Upstream's own sample device plugin (the e2e tests' image): example.com/resource, two devices.
  // A third-party plugin for the test bed, built with the release it belongs to.
  'k8s.io/kubernetes/test/images/sample-device-plugin',
];
/**
 * Upstream's DRA test driver (test/e2e/dra/test-driver, what the DRA e2e tests run): a kubelet plugin
 * on upstream's kubeletplugin.Helper publishing `--num-devices` devices, preparing claims with CDI
 * files and serving the health API. A third-party driver for the test bed, independent of Plugboard
 * and of dra-example-driver. Built on its own: `go build -o dir/` would name it `test-driver`.
 */
const DRA_TEST_DRIVER_PACKAGE = 'k8s.io/kubernetes/test/e2e/dra/test-driver';
const LOCAL_COMMANDS = ['fake-runtime', 'pki'];
const ALL: readonly BinaryName[] = [
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubelet',
  'kubectl',
  'etcd',
  'fake-runtime',
  'pki',
  'sample-device-plugin',
  'dra-test-driver',
];

/** Where built binaries are kept: $PLUGBOARD_CACHE_DIR, else $XDG_CACHE_HOME/plugboard, else ~/.cache/plugboard. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PLUGBOARD_CACHE_DIR) return env.PLUGBOARD_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'plugboard');
}

/**
 * The version ldflags hack/lib/version.sh sets, so that every binary (and the Node's kubeletVersion)
 * reports the release instead of v0.0.0-master. Built from the module archive, not a git tree: the
 * commit is unknown and the tree state is "archive", as upstream says of a tarball build.
 */
export function versionLdflags(version = KUBERNETES_VERSION, buildDate = '2026-10-27T12:01:04Z'): string {
  const m = /^v(\d+)\.(\d+)\./.exec(version);
  if (!m) throw new LocalClusterError('internal', `not a release version: ${version}`);
  const values: [string, string][] = [
    ['gitVersion', version],
    ['gitMajor', m[1]!],
    ['gitMinor', m[2]!],
    ['gitTreeState', 'archive'],
    ['buildDate', buildDate],
  ];
  return values
    .flatMap(([k, v]) => [
      `-X k8s.io/client-go/pkg/version.${k}=${v}`,
      `-X k8s.io/component-base/version.${k}=${v}`,
    ])
    .join(' ');
}

function moduleFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) moduleFiles(full, out);
    else if (/\.(go|mod|sum)$/.test(name)) out.push(full);
  }
  return out;
}

/** The cache key: a hash of the Go module's files, the packages built and the ldflags. */
export function buildKey(moduleDir = GO_MODULE_DIR): string {
  const hash = createHash('sha256');
  hash.update(ALL.join(',')).update('\0');
  for (const file of moduleFiles(moduleDir)) {
    hash.update(relative(moduleDir, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  hash.update(versionLdflags());
  return hash.digest('hex').slice(0, 16);
}

export function binariesDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'kubernetes', `${KUBERNETES_VERSION}-${buildKey()}`);
}

function binariesIn(dir: string): Binaries {
  const out = { dir } as Record<string, string>;
  for (const name of ALL) out[name] = join(dir, name);
  return out as unknown as Binaries;
}

/** The cached binaries, or null when they have not been built for this key. */
export function cachedBinaries(env: NodeJS.ProcessEnv = process.env): Binaries | null {
  const dir = binariesDir(env);
  return existsSync(join(dir, '.complete')) ? binariesIn(dir) : null;
}

export interface BuildProgress {
  /** Packages compiled so far, and how many the build needs at most. */
  done: number;
  total: number;
  elapsedMs: number;
}

function runGo(
  args: string[],
  opts: { onLine?: (line: string) => void; env?: NodeJS.ProcessEnv },
): Promise<{ code: number; tail: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(goCommand(), args, {
      cwd: GO_MODULE_DIR,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tail: string[] = [];
    let partial = '';
    const onData = (chunk: Buffer): void => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        tail.push(line);
        if (tail.length > 40) tail.shift();
        opts.onLine?.(line);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, tail }));
  });
}

/** Counts the packages a build of `pkgs` compiles at most (for the progress line). */
async function countPackages(pkgs: string[]): Promise<number> {
  let n = 0;
  const { code } = await runGo(['list', '-deps', ...pkgs], { onLine: (l) => (l.trim() ? n++ : 0) });
  return code === 0 ? n : 0;
}

/**
 * Returns the binaries, building them first if this key has none. Concurrent callers (two test
 * processes) wait for one build: the first takes a lock directory beside the cache entry.
 */
export async function ensureBinaries(
  opts: { onProgress?: (p: BuildProgress) => void; env?: NodeJS.ProcessEnv } = {},
): Promise<Binaries> {
  const env = opts.env ?? process.env;
  const cached = cachedBinaries(env);
  if (cached) return cached;
  await checkGo();
  const dir = binariesDir(env);
  mkdirSync(join(dir, '..'), { recursive: true });
  const lock = `${dir}.lock`;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (!lockHolderAlive(lock)) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      await new Promise((r) => setTimeout(r, 2000));
      const built = cachedBinaries(env);
      if (built) return built;
    }
  }
  try {
    const again = cachedBinaries(env);
    if (again) return again;
    await build(dir, opts.onProgress);
    return binariesIn(dir);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function lockHolderAlive(lock: string): boolean {
  try {
    const pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // No pid file yet: the holder has just made the directory.
    return (
      (err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'EPERM'
    );
  }
}

async function build(dir: string, onProgress?: (p: BuildProgress) => void): Promise<void> {
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const started = Date.now();
  const kubePkgs = KUBERNETES_PACKAGES;
  const localPkgs = LOCAL_COMMANDS.map((c) => `./cmd/${c}`);
  const total = await countPackages([...kubePkgs, DRA_TEST_DRIVER_PACKAGE, ETCD_SERVER_MODULE, ...localPkgs]);
  const seen = new Set<string>();
  const progress = (line: string): void => {
    // `go build -v` names each package as it is compiled (or taken from the build cache).
    if (/^[\w.\-/]+$/.test(line) && !seen.has(line)) {
      seen.add(line);
      onProgress?.({ done: seen.size, total: Math.max(total, seen.size), elapsedMs: Date.now() - started });
    }
  };
  const ldflags = versionLdflags();
  const steps: { args: string[]; what: string }[] = [
    {
      what: 'Kubernetes',
      args: ['build', '-v', '-ldflags', ldflags, '-o', `${tmp}/`, ...kubePkgs, ...localPkgs],
    },
    {
      what: 'the DRA test driver',
      args: ['build', '-v', '-ldflags', ldflags, '-o', join(tmp, 'dra-test-driver'), DRA_TEST_DRIVER_PACKAGE],
    },
    // etcd's main package is the module root (…/server/v3), which `go build -o dir/` would name "v3".
    { what: 'etcd', args: ['build', '-v', '-o', join(tmp, 'etcd'), ETCD_SERVER_MODULE] },
  ];
  for (const step of steps) {
    const { code, tail } = await runGo(step.args, { onLine: progress });
    if (code !== 0) {
      rmSync(tmp, { recursive: true, force: true });
      throw new LocalClusterError(
        'build-failed',
        `building ${step.what} ${KUBERNETES_VERSION} failed (go ${step.args.slice(0, 2).join(' ')} …, exit ${code}):\n${tail.join('\n')}`,
      );
    }
  }
  writeFileSync(
    join(tmp, '.complete'),
    `${new Date().toISOString()} ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
}
