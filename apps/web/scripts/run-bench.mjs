#!/usr/bin/env node
// `npm run bench -w @plugboard/web`: builds the production bundle if needed, then runs the
// benchmark (it writes docs/benchmarks/web.md).
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = resolve(fileURLToPath(import.meta.url), '../..');
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };
const build = spawnSync(process.execPath, ['scripts/ensure-build.mjs'], { cwd: web, env, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const r = spawnSync(
  process.execPath,
  ['--conditions=@plugboard/source', '--import', 'tsx', 'bench/web-bench.ts'],
  { cwd: web, env, stdio: 'inherit' },
);
process.exit(r.status ?? 1);
