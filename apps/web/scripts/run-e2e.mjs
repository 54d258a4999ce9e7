#!/usr/bin/env node
// Browser tests: builds the production bundle when .next is missing or older than any source file,
// then runs Playwright on Debian's Chromium.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const web = resolve(fileURLToPath(import.meta.url), '../..');
const require = createRequire(import.meta.url);
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1', PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' };

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
const sources = ['app', 'components', 'lib', 'next.config.ts', 'package.json', 'tsconfig.json']
  .map((p) => join(web, p))
  .filter(existsSync);
const stale = !existsSync(buildId) || sources.some((p) => newest(p) > statSync(buildId).mtimeMs);
if (stale) {
  console.log('[test:web] building the production bundle (next build)…');
  const b = spawnSync(process.execPath, [require.resolve('next/dist/bin/next'), 'build'], { cwd: web, env, stdio: 'inherit' });
  if (b.status !== 0) process.exit(b.status ?? 1);
} else {
  console.log('[test:web] production build is up to date');
}
if (!existsSync('/usr/bin/chromium')) {
  console.error('[test:web] /usr/bin/chromium is missing: apt-get install -y chromium');
  process.exit(1);
}
const r = spawnSync(process.execPath, [join(dirname(require.resolve('@playwright/test/package.json')), 'cli.js'), 'test', ...process.argv.slice(2)], {
  cwd: web,
  env,
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
