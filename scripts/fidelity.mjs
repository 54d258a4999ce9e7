#!/usr/bin/env node
// `npm run fidelity`: the fidelity scenarios (packages/testbed/fidelity/scenarios) on kubelet-sim
// and on the real kubelet, through the root test runner (which builds and starts the real cluster),
// then the one summary line from the report the suite writes:
//   fidelity: S scenarios, F fields compared, U unexplained differences
// Arguments are scenario names to run only those (PLUGBOARD_FIDELITY_ONLY).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(import.meta.url), '../..');
const dir = mkdtempSync(join(tmpdir(), 'pb-fidelity-report-'));
const report = join(dir, 'report.json');
const only = process.argv.slice(2);
const res = spawnSync(
  process.execPath,
  [join(root, 'scripts', 'test.mjs'), join(root, 'packages', 'testbed', 'src', 'fidelity')],
  {
    stdio: 'inherit',
    cwd: root,
    env: {
      ...process.env,
      PLUGBOARD_FIDELITY_REPORT: report,
      ...(only.length > 0 ? { PLUGBOARD_FIDELITY_ONLY: only.join(',') } : {}),
    },
  },
);
let summary;
try {
  summary = JSON.parse(readFileSync(report, 'utf8'));
} catch {
  console.error('fidelity: the suite wrote no report (it did not get to run its scenarios)');
  process.exit(res.status || 1);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (summary.unusedExplanations.length > 0)
  console.log(
    `fidelity: explanations no difference needed this run: ${summary.unusedExplanations.join(', ')}`,
  );
console.log(
  `fidelity: ${summary.scenarios} scenarios, ${summary.fields} fields compared, ${summary.unexplained} unexplained differences`,
);
process.exit(res.status ?? 1);
