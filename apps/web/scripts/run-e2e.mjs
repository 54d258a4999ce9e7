#!/usr/bin/env node
// Browser tests: builds the production bundle if it is stale (ensure-build.mjs), then runs
// Playwright on Debian's Chromium.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const web = resolve(fileURLToPath(import.meta.url), '../..');
const require = createRequire(import.meta.url);
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1', PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' };

const built = spawnSync(process.execPath, [join(web, 'scripts/ensure-build.mjs')], {
  cwd: web,
  env,
  stdio: 'inherit',
});
if (built.status !== 0) process.exit(built.status ?? 1);
if (!existsSync('/usr/bin/chromium')) {
  console.error('[test:web] /usr/bin/chromium is missing: apt-get install -y chromium');
  process.exit(1);
}
const r = spawnSync(
  process.execPath,
  [
    join(dirname(require.resolve('@playwright/test/package.json')), 'cli.js'),
    'test',
    ...process.argv.slice(2),
  ],
  {
    cwd: web,
    env,
    stdio: 'inherit',
  },
);
process.exit(r.status ?? 1);
