#!/usr/bin/env node
// Reliability suite: runs every *.reliability.test.ts in its full form (or --short, the form that
// `npm test` runs too), collects the figures each test reports and writes docs/RELIABILITY.md.
//   npm run test:reliability                 full form (~15 min), writes docs/RELIABILITY.md
//   npm run test:reliability -- --short      short form (~1–2 min), prints the table
//   … -- --out FILE                          write the report to FILE instead
//   … -- --only soak,ws-load                 only test files whose name contains one of these
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(fileURLToPath(import.meta.url), '../..');
const { values } = parseArgs({
  options: { short: { type: 'boolean' }, out: { type: 'string' }, only: { type: 'string' } },
});
const form = values.short ? 'short' : 'full';
const out = values.out ?? (form === 'full' ? join(root, 'docs/RELIABILITY.md') : null);

const SKIP = new Set(['node_modules', 'dist', '.next', '.git', 'test-results', 'playwright-report']);
function find(dir, acc = []) {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) find(full, acc);
    else if (name.endsWith('.reliability.test.ts')) acc.push(relative(root, full));
  }
  return acc;
}
let files = ['packages', 'apps'].flatMap((d) => find(join(root, d))).sort();
if (values.only) files = files.filter((f) => values.only.split(',').some((o) => f.includes(o)));
if (files.length === 0) {
  console.error('no reliability tests found');
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), 'pb-reliability-'));
const figuresFile = join(work, 'figures.jsonl');
const started = Date.now();
const load = loadavg()[0];
// Full form: one file at a time, so load tests do not measure each other.
const concurrency = form === 'full' ? 1 : 2;
console.log(`reliability (${form} form): ${files.length} files, concurrency ${concurrency}`);
const child = spawn(
  process.execPath,
  [
    // The soak samples the heap after a full GC when it can.
    '--expose-gc',
    '--conditions=@plugboard/source',
    '--import',
    'tsx',
    '--test',
    '--test-reporter=spec',
    `--test-concurrency=${concurrency}`,
    ...files,
  ],
  {
    cwd: root,
    env: { ...process.env, PLUGBOARD_RELIABILITY: form, PLUGBOARD_RELIABILITY_FIGURES: figuresFile },
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
let output = '';
child.stdout.on('data', (b) => {
  process.stdout.write(b);
  output += b.toString();
});
const code = await new Promise((r) => child.on('exit', (c) => r(c ?? 1)));
const seconds = (Date.now() - started) / 1000;

let figures = [];
try {
  figures = readFileSync(figuresFile, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
} catch {
  // no figures: every test failed before reporting
}
rmSync(work, { recursive: true, force: true });
const count = (what) => Number(new RegExp(`^ℹ ${what} (\\d+)`, 'm').exec(output)?.[1] ?? 0);
const seen = new Set();
// The spec reporter lists failures twice (in place and in its summary): keep the first.
const results = [...output.matchAll(/^(✔|✖) (.+?) \((\d+(?:\.\d+)?)ms\)$/gm)]
  .map((m) => ({
    ok: m[1] === '✔',
    name: m[2],
    ms: Number(m[3]),
  }))
  .filter((r) => !seen.has(r.name) && seen.add(r.name));

// What each scenario proves, in the order of the issue (figures without an entry go last).
const SCENARIOS = [
  [
    'kubelet-restarts',
    'Kubelet restarts in a row',
    "kubelet-sim restart() deletes every socket each time; the gateway's plugins re-register exactly once per resource; no duplicate listening socket (/proc/net/unix), no fd growth (/proc/self/fd), device health and active faults identical before and after.",
  ],
  [
    'plugin-sigkill',
    'Plugin process SIGKILLed and restarted',
    'The `plugboard-plugin` CLI as a child, killed with SIGKILL (its socket file stays, refusing connections); the next process replaces the stale socket and registers again; one server listens.',
  ],
  [
    'pod-resources-outage',
    'PodResources socket absent, then appearing, then gone while serving',
    'A Unix relay makes the socket appear and vanish; the gateway reports `connecting`, then `ok`, then serves the last state marked `stale` throughout the outage and recovers without help.',
  ],
  [
    'kube-api-faults',
    'Kubernetes API: 500s, hangs, 410 Gone',
    "A misbehaving proxy in front of kubelet-sim's API slice; `sources.kubernetes` turns `stale` with the reason, changes made during the outage arrive after it, and watches that always end in 410 relist at a paced rate.",
  ],
  [
    'gateway-restart-faults',
    'Gateway restarted with active faults and TTLs',
    'Faults still due come back with the same id and expiry and reach the kubelet again; those whose TTL ran out while the gateway was down are cleared and reported (`expired-while-down`).',
  ],
  [
    'state-dir-unwritable',
    'Read-only state dir / disk full',
    'Read-only at start (sysfs, which even root cannot write) and ENOSPC later (the write lands on /dev/full): a warning with the reason, `snapshot.gateway.persistence.enabled: false`, faults keep working in memory; persistence comes back when writes succeed again.',
  ],
  [
    'allocate-load',
    'Allocate under load',
    'Allocate calls with 32 in flight on the plugin socket while faults flap on other devices of the same resource (ListAndWatch sends a new list every few ms): all succeed, lists keep arriving between every tenth of the calls.',
  ],
  [
    'ws-load',
    'WebSocket clients with slow consumers',
    'Stream clients on one `plugboard-gateway` process, 10 of which never read after the upgrade; NUMA-node fail/heal cycles until the bounded queue (`stream.maxQueueBytes` 64 KiB here) cuts the slow ones (`plugboard_gateway_stream_dropped_clients_total{reason="slow"}`); the others miss no patch. Documented bound: gateway RSS growth < 100 MiB with 200 clients, < 250 MiB with 1,000.',
  ],
  [
    'soak',
    'Soak of the demo cluster',
    'The three-node demo in one process with a flapping device per node, a REST fault every 2 s and a stream client per gateway; slopes are least-squares over the samples after the warm-up (8 s short, 60 s full). In the short form the RSS/heap slope mostly shows the heap filling before its first major GC; the full form is the one to read.',
  ],
  [
    'grpc-bad-input',
    'gRPC bad input',
    'Allocate / GetPreferredAllocation / PreStartContainer with empty, 10,000, duplicated, unknown, unhealthy IDs and impossible sizes: INVALID_ARGUMENT naming (at most 20 of) the IDs; garbage bytes on the socket; the plugin keeps serving the kubelet.',
  ],
  [
    'http-fuzz',
    'HTTP/WebSocket fuzzing (fast-check)',
    'Methods × paths (traversal, bad percent-encoding, unknown IDs) × queries × bodies (malformed JSON/YAML, wrong types, unknown resources/devices, oversized) × content types × tokens; raw garbage; WebSocket upgrade queries and client frames. Never a 5xx, every error problem+json, state unchanged after every request.',
  ],
  [
    'config-table',
    'Invalid configuration table',
    'Plugin and gateway config examples: each error names the file, the field and the reason; the CLIs exit 1/2 (plugin) and 2 (gateway).',
  ],
  [
    'security',
    'Security',
    'Every mutating endpoint: 401 without or with a bad token, 403 when SubjectAccessReview denies (a two-endpoint TokenReview/SubjectAccessReview fake behind the API proxy — kubelet-sim has none), 403 with faults disabled; stream frames close 1008; foreign Origins 403; 429 + Retry-After before any TokenReview; captured logs scanned for tokens, secrets and request bodies.',
  ],
];
const known = new Set(SCENARIOS.map(([id]) => id));
const ids = [
  ...SCENARIOS.map(([id]) => id),
  ...new Set(figures.map((f) => f.scenario).filter((s) => !known.has(s))),
];
const esc = (s) => String(s).replaceAll('|', '\\|');

const lines = [];
lines.push('# Reliability report', '');
lines.push(
  `Produced by \`npm run test:reliability${form === 'short' ? ' -- --short' : ''}\` (scripts/reliability.mjs) on ${new Date().toISOString().slice(0, 16)}Z: ` +
    `**${form} form**, ${count('tests')} tests, ${count('pass')} passed, ${count('fail')} failed, ${seconds.toFixed(0)} s ` +
    `(${cpus().length} CPUs, load average ${load.toFixed(1)} at start, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.versions.node}).`,
  '',
  'The short form of every scenario runs inside `npm test`; `npm run test:reliability` runs the full form one file at a time and rewrites this page. ' +
    'Threats and defaults: [SECURITY.md](SECURITY.md).',
  '',
  '## Figures',
  '',
  '| scenario | figure | value | bound / context |',
  '| --- | --- | --- | --- |',
);
for (const id of ids) {
  const title = SCENARIOS.find(([s]) => s === id)?.[1] ?? id;
  const rows = figures.filter((f) => f.scenario === id);
  if (rows.length === 0) lines.push(`| ${esc(title)} | — | not run | |`);
  for (const f of rows)
    lines.push(
      `| ${esc(title)} | ${esc(f.figure)} | ${esc(`${f.value}${f.unit ? ` ${f.unit}` : ''}`)} | ${esc(f.bound ?? '')} |`,
    );
}
lines.push('', '## Scenarios', '');
for (const [id, title, text] of SCENARIOS) lines.push(`- **${title}** (\`${id}\`): ${text}`);
lines.push('', '## Tests', '', '| test | result | time |', '| --- | --- | --- |');
for (const r of results)
  lines.push(`| ${esc(r.name)} | ${r.ok ? 'pass' : '**FAIL**'} | ${(r.ms / 1000).toFixed(1)} s |`);
lines.push(
  '',
  '## Sizes',
  '',
  '| scenario | short (`npm test`) | full |',
  '| --- | --- | --- |',
  '| kubelet restarts | 20 | 100 |',
  '| plugin SIGKILL + restart | 2 | 10 |',
  '| PodResources outage | 3 s | 30 s |',
  '| gateway restart with faults | 10 faults | 40 faults |',
  '| Allocate calls (32 in flight) | 2,000 | 10,000 |',
  '| WebSocket clients (10 slow) | 200 | 1,000 |',
  '| soak | 30 s | 10 min |',
  '| fuzzed HTTP requests / WebSocket cases | 300 / 40 | 5,000 / 400 |',
  '',
  'Fuzzing uses a fixed seed (8) so runs repeat; `PLUGBOARD_FUZZ_SEED=N` explores others.',
  '',
);
const report = lines.join('\n');
if (out) {
  writeFileSync(out, report);
  console.log(`\nwrote ${relative(root, out)}`);
} else {
  console.log(`\n${lines.slice(lines.indexOf('## Figures'), lines.indexOf('## Scenarios')).join('\n')}`);
}
console.log(`reliability (${form}): ${count('pass')}/${count('tests')} passed in ${seconds.toFixed(0)} s`);
process.exit(code);
