#!/usr/bin/env node
// Root test runner: every workspace's tests, ending with node:test's own summary.
//   npm test                      all tests (web browser tests first, then every *.test.ts)
//   npm test -- packages/plugin   only test files under the given paths (no browser tests)
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(import.meta.url), '../..');
const SKIP_DIRS = new Set([
  'node_modules',
  'dist',
  '.next',
  'e2e',
  'test-results',
  'playwright-report',
  '.git',
]);
const filters = process.argv.slice(2).map((p) => resolve(p));

function findTests(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (SKIP_DIRS.has(name)) continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) findTests(full, out);
    else if (/\.test\.tsx?$/.test(name)) out.push(full);
  }
  return out;
}

function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
  if (res.error) throw res.error;
  return res.status ?? 1;
}

let failed = 0;
// Browser and component tests of the web app (their own runners) come first so that
// node:test's summary is the last thing printed.
const webDir = join(root, 'apps', 'web');
const runWeb = filters.length === 0;
if (runWeb) failed |= run('npm', ['run', 'test:web', '-w', '@plugboard/web']);

const dirs = ['packages', 'apps', 'deploy', 'scripts'].map((d) => join(root, d)).filter(existsSync);
// The web suite already ran the web app's tests (its .tsx tests need a DOM preload); a filtered run
// takes the web app's plain .test.ts files here.
let files = dirs
  .flatMap((d) => findTests(d))
  .filter((f) => !f.startsWith(webDir) || (!runWeb && /\.test\.ts$/.test(f)));
if (filters.length > 0) files = files.filter((f) => filters.some((p) => f.startsWith(p)));
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const status = run(process.execPath, [
  '--conditions=@plugboard/source',
  '--import',
  'tsx',
  '--test',
  '--test-reporter=spec',
  `--test-concurrency=${process.env.PLUGBOARD_TEST_CONCURRENCY ?? 3}`,
  ...files.map((f) => relative(root, f)),
]);
process.exit(failed || status);
