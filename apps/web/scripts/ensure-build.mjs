#!/usr/bin/env node
// Builds the production bundle (next build) when .next is missing or older than any source file.
// Used by the browser tests and the benchmark; exits non-zero when the build fails.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const web = resolve(fileURLToPath(import.meta.url), '../..');
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };

function newest(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let t = 0;
  for (const name of readdirSync(path)) {
    if (name.endsWith('.test.ts') || name.endsWith('.test.tsx')) continue;
    t = Math.max(t, newest(join(path, name)));
  }
  return t;
}

const buildId = join(web, '.next', 'BUILD_ID');
const sources = [
  'app',
  'components',
  'lib',
  // Pages import server/cluster-snapshot.ts (the hub's document for the overview's first render).
  'server',
  'next.config.ts',
  'package.json',
  'tsconfig.json',
  'tsconfig.next.json',
]
  .map((p) => join(web, p))
  .filter(existsSync);
const stale = !existsSync(buildId) || sources.some((p) => newest(p) > statSync(buildId).mtimeMs);
if (stale) {
  console.log('[test:web] building the production bundle (next build)…');
  const b = spawnSync(process.execPath, [require.resolve('next/dist/bin/next'), 'build'], {
    cwd: web,
    env,
    stdio: 'inherit',
  });
  if (b.status !== 0) process.exit(b.status ?? 1);
} else {
  console.log('[test:web] production build is up to date');
}
