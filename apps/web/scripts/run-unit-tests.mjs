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
const res = spawnSync(
  process.execPath,
  ['--conditions=@plugboard/source', '--import', 'tsx', '--import', './test/register-dom.ts', '--test', '--test-reporter=spec', '--test-concurrency=2', ...files],
  { stdio: 'inherit', cwd: web, env: { ...process.env, NODE_ENV: 'test' } },
);
process.exit(res.status ?? 1);
