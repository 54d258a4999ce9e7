#!/usr/bin/env node
// `npm run fidelity`: the fidelity scenarios (packages/testbed/fidelity/scenarios) on kubelet-sim
// and on the real kubelet, through the root test runner (which builds and starts the real cluster),
// then the one summary line from the report the suite writes:
//   fidelity: S scenarios, F fields compared, U unexplained differences
// Arguments are scenario names to run only those (PLUGBOARD_FIDELITY_ONLY).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(import.meta.url), '../..');
const dir = mkdtempSync(join(tmpdir(), 'pb-fidelity-report-'));
const only = process.argv.slice(2);
const res = spawnSync(
  process.execPath,
  [join(root, 'scripts', 'test.mjs'), join(root, 'packages', 'testbed', 'src', 'fidelity')],
  {
    stdio: 'inherit',
    cwd: root,
    env: {
      ...process.env,
      PLUGBOARD_FIDELITY_REPORT_DIR: dir,
      ...(only.length > 0 ? { PLUGBOARD_FIDELITY_ONLY: only.join(',') } : {}),
    },
  },
);
// One report per test file (fidelity-<part>.real.test.ts); an explanation is unused only if no
// part used it.
const parts = readdirSync(dir).map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')));
rmSync(dir, { recursive: true, force: true });
if (parts.length < 3) {
  console.error(
    `fidelity: ${3 - parts.length} of the 3 parts wrote no report (they did not get to run their scenarios)`,
  );
  process.exit(res.status || 1);
}
const unused = parts.map((p) => new Set(p.unusedExplanations));
const summary = {
  scenarios: parts.reduce((n, p) => n + p.scenarios, 0),
  fields: parts.reduce((n, p) => n + p.fields, 0),
  unexplained: parts.reduce((n, p) => n + p.unexplained, 0),
  unusedExplanations: [...unused[0]].filter((e) => unused.every((u) => u.has(e))),
};
if (summary.unusedExplanations.length > 0)
  console.log(
    `fidelity: explanations no difference needed this run: ${summary.unusedExplanations.join(', ')}`,
  );
console.log(
  `fidelity: ${summary.scenarios} scenarios, ${summary.fields} fields compared, ${summary.unexplained} unexplained differences`,
);
process.exit(res.status ?? 1);
