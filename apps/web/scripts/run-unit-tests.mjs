#!/usr/bin/env node
// Component and logic tests of the web app: node:test + tsx, with happy-dom as the DOM.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = resolve(fileURLToPath(import.meta.url), '../..');
const SKIP = new Set(['node_modules', '.next', 'e2e', 'test-results', 'playwright-report']);
function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) find(full, out);
    else if (/\.test\.tsx?$/.test(name)) out.push(relative(web, full));
  }
  return out;
}
const files = find(web).sort();
// Logic and integration tests run on plain Node (real fetch/WebSocket); component tests get a
// happy-dom window as their global DOM. Two runs keep the DOM globals away from the former.
const runs = [
  { files: files.filter((f) => f.endsWith('.ts')), preload: [] },
  { files: files.filter((f) => f.endsWith('.tsx')), preload: ['--import', './test/register-dom.ts'] },
];
let status = 0;
for (const run of runs) {
  if (run.files.length === 0) continue;
  const res = spawnSync(
    process.execPath,
    [
      '--conditions=@plugboard/source',
      '--import',
      'tsx',
      ...run.preload,
      '--test',
      '--test-reporter=spec',
      '--test-concurrency=2',
      ...run.files,
    ],
    { stdio: 'inherit', cwd: web, env: { ...process.env, NODE_ENV: 'test' } },
  );
  status ||= res.status ?? 1;
}
process.exit(status);
