// The Go toolchain, as the build needs it: found on PATH (or $GO), new enough, and asked for the
// module cache's copy of upstream's go.mod.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { LocalClusterError } from './errors.js';
import { MIN_GO_VERSION } from './versions.js';

const run = promisify(execFile);

/** The `go` command to run: $GO, else `go` on PATH. */
export function goCommand(env: NodeJS.ProcessEnv = process.env): string {
  return env.GO && env.GO !== '' ? env.GO : 'go';
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Checks that Go is there and new enough; returns its version (e.g. "1.26.8"). */
export async function checkGo(go = goCommand()): Promise<string> {
  let out: string;
  try {
    ({ stdout: out } = await run(go, ['version']));
  } catch (err) {
    throw new LocalClusterError(
      'go-missing',
      `Go ${MIN_GO_VERSION} or newer is needed to build Kubernetes from source, and "${go}" cannot be run ` +
        `(${(err as NodeJS.ErrnoException).code ?? String(err)}). Install Go (https://go.dev/doc/install) ` +
        'and put it on PATH, or set GO to its path.',
      { cause: err },
    );
  }
  const m = /go(\d+\.\d+(?:\.\d+)?)/.exec(out);
  if (!m) throw new LocalClusterError('go-missing', `cannot read the Go version from "${out.trim()}"`);
  if (compareVersions(m[1]!, MIN_GO_VERSION) < 0) {
    throw new LocalClusterError(
      'go-too-old',
      `Go ${m[1]} is too old: Kubernetes needs Go ${MIN_GO_VERSION} or newer (its go.mod's go line). ` +
        'Install a newer Go (https://go.dev/doc/install), or set GO to its path.',
    );
  }
  return m[1]!;
}

/** Downloads a module into the module cache and returns its go.mod's text. */
export async function downloadedGoMod(
  modulePath: string,
  version: string,
  go = goCommand(),
): Promise<string> {
  const { stdout } = await run(go, ['mod', 'download', '-json', `${modulePath}@${version}`], {
    maxBuffer: 16 * 1024 * 1024,
  });
  const info = JSON.parse(stdout) as { GoMod?: string; Error?: string };
  if (info.Error || !info.GoMod) {
    throw new LocalClusterError(
      'go-mod',
      `go mod download ${modulePath}@${version}: ${info.Error ?? 'no go.mod'}`,
    );
  }
  return readFile(info.GoMod, 'utf8');
}
