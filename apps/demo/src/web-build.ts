// Builds the dashboard when there is no production build yet or its sources changed since, so that
// `npm start` works on a fresh clone and starts in seconds afterwards. Two starts at once (two
// terminals, or the demo's test files side by side) build one after the other under a lock file
// (proper-lockfile: a crashed holder's lock goes stale); the second then finds the build current.
// `next build` itself refuses to run beside another ("Another next build process is already running").
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { lock } from 'proper-lockfile';
import { DemoError } from './errors.js';

/** How long another start's build is waited for (a cold build takes 1–3 min on 2 cores). */
const BUILD_WAIT_MS = 15 * 60_000;

const SOURCE_DIRS = ['app', 'components', 'lib'];
const SOURCE_FILES = ['next.config.ts', 'package.json', 'tsconfig.json'];

function newestMtime(path: string): number {
  let st;
  try {
    st = statSync(path);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const name of readdirSync(path)) {
    if (name === 'node_modules' || name.endsWith('.test.ts') || name.endsWith('.test.tsx')) continue;
    newest = Math.max(newest, newestMtime(join(path, name)));
  }
  return newest;
}

/** Why the web app needs building, or null when its build is current. */
export function webBuildNeeded(webDir: string): string | null {
  const buildId = join(webDir, '.next', 'BUILD_ID');
  if (!existsSync(buildId)) return 'no production build yet';
  const built = statSync(buildId).mtimeMs;
  const changed = [...SOURCE_DIRS, ...SOURCE_FILES].find((p) => newestMtime(join(webDir, p)) > built);
  return changed ? `${changed} changed since the last build` : null;
}

export async function ensureWebBuild(
  webDir: string,
  logFile: string,
  progress: (line: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  if (webBuildNeeded(webDir) === null) {
    progress('dashboard: using the existing production build');
    return;
  }
  const lockOptions = { lockfilePath: join(webDir, '.next-build.lock'), stale: 30_000 };
  let release: () => Promise<void>;
  try {
    release = await lock(webDir, lockOptions);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
    progress('dashboard: another start is building it; waiting for that build');
    release = await lock(webDir, {
      ...lockOptions,
      retries: { retries: Math.ceil(BUILD_WAIT_MS / 1000), factor: 1, minTimeout: 1000, maxTimeout: 1000 },
    }).catch((e: unknown) => {
      throw new DemoError(
        'build',
        `the dashboard build of another start did not finish within ${BUILD_WAIT_MS / 60_000} min (lock ${lockOptions.lockfilePath})`,
        { cause: e },
      );
    });
  }
  try {
    await buildLocked(webDir, logFile, progress, signal);
  } finally {
    await release();
  }
}

/** The build, under the lock: the build another start just made may have made it current. */
async function buildLocked(
  webDir: string,
  logFile: string,
  progress: (line: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  const why = webBuildNeeded(webDir);
  if (why === null) {
    progress('dashboard: using the production build another start just made');
    return;
  }
  progress(`dashboard: building (${why}; takes a minute or two on 2 cores, once) — log: ${logFile}`);
  const started = Date.now();
  const out = createWriteStream(logFile, { flags: 'a' });
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn(process.execPath, [join(webDir, '../../node_modules/next/dist/bin/next'), 'build'], {
      cwd: webDir,
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Ctrl-C during the build must not leave `next build` running.
      ...(signal ? { signal, killSignal: 'SIGTERM' as const } : {}),
    });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    child.on('error', (err) =>
      reject(signal?.aborted ? new DemoError('build', 'the dashboard build was interrupted') : err),
    );
    child.on('exit', (c) => resolve(c ?? 1));
  });
  out.end();
  if (code !== 0) {
    const tail = readFileSync(logFile, 'utf8').split('\n').slice(-25).join('\n');
    throw new DemoError(
      'build',
      `the dashboard build failed (exit ${code}); last lines of ${logFile}:\n${tail}`,
    );
  }
  progress(`dashboard: built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
