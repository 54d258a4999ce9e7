// Builds the dashboard when there is no production build yet or its sources changed since, so that
// `npm start` works on a fresh clone and starts in seconds afterwards.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DemoError } from './errors.js';

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
  const why = webBuildNeeded(webDir);
  if (why === null) {
    progress('dashboard: using the existing production build');
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
