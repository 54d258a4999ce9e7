#!/usr/bin/env node
// Root test runner: every workspace's tests, ending with one summary line (the web suite's result,
// node:test's counts) after node:test's own summary.
//   npm test                      all tests (web browser tests first, then every *.test.ts)
//   npm test -- packages/plugin   only test files under the given paths (no browser tests)
// The real-cluster suites (*.real.test.ts) run on one real Kubernetes (packages/local-cluster)
// started here for the run — a control plane whose nodes each suite adds and removes — and torn
// down at the end, whatever happened. What the tests need on the machine is got first
// (scripts/test-prereqs.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDebianPackages, goProblems, realClusterProblems } from './test-prereqs.mjs';

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

const webDir = join(root, 'apps', 'web');
const runWeb = filters.length === 0;
const problems = ensureDebianPackages([
  ...(runWeb ? [['chromium', 'chromium']] : []),
  ['prometheus', 'prometheus'],
  ['promtool', 'prometheus'],
]);
if (problems.length > 0) {
  for (const p of problems) console.error(`npm test: ${p}`);
  process.exit(1);
}

// Browser and component tests of the web app (their own runners) come first so that
// node:test's summary is the last thing printed, before the run's one line.
const webStatus = runWeb ? run('npm', ['run', 'test:web', '-w', '@plugboard/web']) : null;

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
// One real cluster for every real-cluster suite of this run.
const clusterBin = join(root, 'packages', 'local-cluster', 'bin', 'plugboard-cluster.js');
let clusterDir = null;
function stopCluster() {
  if (!clusterDir) return;
  const dir = clusterDir;
  clusterDir = null;
  // Quiet when it stops cleanly, so that the run ends with the tests' summary.
  const res = spawnSync(process.execPath, [clusterBin, 'down', '--dir', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: root,
    encoding: 'utf8',
  });
  if (res.status === 0) rmSync(dir, { recursive: true, force: true });
  else {
    process.stderr.write(`${res.stdout ?? ''}${res.stderr ?? ''}`);
    console.error(`npm test: the real cluster in ${dir} did not stop cleanly; its logs are in ${dir}/logs`);
  }
}
const env = { ...process.env };
// The suites that start other projects' plugins and drivers (the test bed's `thirdParty`), built with
// Go (upstream's sample device plugin and DRA test driver with the Kubernetes binaries, the others at
// the versions pinned in packages/local-cluster/src/third-party.ts): built here, the first time, so
// that no test spends its time budget on a build.
if (files.some((f) => readFileSync(f, 'utf8').includes('thirdParty.'))) {
  const why = goProblems('the third-party suites build their plugins and drivers from source');
  if (why.length > 0) {
    for (const p of why) console.error(`npm test: ${p}`);
    process.exit(1);
  }
  if (
    run(process.execPath, [clusterBin, 'build-third-party'], { stdio: ['ignore', 'ignore', 'inherit'] }) !== 0
  )
    process.exit(1);
}
if (files.some((f) => f.endsWith('.real.test.ts'))) {
  const why = realClusterProblems();
  if (why.length > 0) {
    for (const p of why) console.error(`npm test: ${p}`);
    process.exit(1);
  }
  // Builds the binaries the first time (a progress line as it goes), then starts the control plane.
  if (run(process.execPath, [clusterBin, 'build'], { stdio: ['ignore', 'ignore', 'inherit'] }) !== 0)
    process.exit(1);
  clusterDir = mkdtempSync(join(tmpdir(), 'pb-real-cluster-'));
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
      stopCluster();
      process.exit(130);
    });
  }
  const up = spawnSync(
    process.execPath,
    [clusterBin, 'up', '--nodes', '0', '--dir', clusterDir, '--apiserver-port', '0'],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
      cwd: root,
    },
  );
  if (up.status !== 0) {
    stopCluster();
    process.exit(1);
  }
  env.PLUGBOARD_REAL_CLUSTER_DIR = clusterDir;
}
const tapFile = join(mkdtempSync(join(tmpdir(), 'pb-test-')), 'node-test.tap');
const status = run(
  process.execPath,
  [
    '--conditions=@plugboard/source',
    '--import',
    'tsx',
    '--test',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    // The same run as TAP in a file, for the counts of the last line.
    '--test-reporter=tap',
    `--test-reporter-destination=${tapFile}`,
    `--test-concurrency=${process.env.PLUGBOARD_TEST_CONCURRENCY ?? 3}`,
    // A bound, not a pause: a test that waits on something that never comes fails after 10 minutes
    // instead of holding the whole run until CI's limit.
    '--test-timeout=600000',
    ...files.map((f) => relative(root, f)),
  ],
  { env },
);
stopCluster();

/** node:test's closing counts (`# tests N`, `# pass N`, …) from the TAP file. */
function tapCounts(file) {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const count = (name) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { tests: count('tests'), pass: count('pass'), fail: count('fail'), cancelled: count('cancelled') };
}
const c = tapCounts(tapFile);
rmSync(dirname(tapFile), { recursive: true, force: true });
const failed = (webStatus ?? 0) !== 0 || status !== 0;
const parts = [
  ...(webStatus === null ? [] : [`web (components and Playwright) ${webStatus === 0 ? 'passed' : 'FAILED'}`]),
  Number.isNaN(c.tests)
    ? `node:test ${status === 0 ? 'passed' : `FAILED (exit ${status}, no summary)`}`
    : `node:test ${c.pass} of ${c.tests} passed${c.fail > 0 ? `, ${c.fail} failed` : ''}${c.cancelled > 0 ? `, ${c.cancelled} cancelled` : ''} in ${files.length} files`,
];
console.log(`\nnpm test: ${failed ? 'FAILED' : 'passed'} — ${parts.join('; ')}`);
process.exit(failed ? 1 : 0);
