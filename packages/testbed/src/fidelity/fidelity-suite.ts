// Fidelity, measured: the scenarios of packages/testbed/fidelity/scenarios/ run on kubelet-sim and on
// the real kubelet (v1.37.2) by the same runner, at the same time, the outcomes normalised and
// compared field by field; a difference must be listed, with its reason, in
// packages/testbed/fidelity/explained.yaml (and docs/KUBELET-SIM.md, "Fidelity, measured"). The
// scenarios are split over three test files (fidelity-*.real.test.ts), each well inside node:test's
// per-file timeout on a loaded machine; each writes its part of the report into
// PLUGBOARD_FIDELITY_REPORT_DIR, which `npm run fidelity` sums into its summary line.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { realCluster } from '../real-cluster.js';
import { simCluster } from '../sim-cluster.js';
import { compare, describeDifference, loadExplanations, type Comparison } from './compare.js';
import { runScenario } from './run.js';
import { loadScenarios } from './scenario.js';

const dir = new URL('../../fidelity/', import.meta.url).pathname;
const scenarios = loadScenarios(join(dir, 'scenarios'));
const explanations = loadExplanations(join(dir, 'explained.yaml'));
const only = process.env['PLUGBOARD_FIDELITY_ONLY'];

/** Which part of the scenarios a test file runs: by name. */
export type FidelityPart = 'device-plugins' | 'dra' | 'validation';

export function partOf(name: string): FidelityPart {
  if (name.startsWith('dra-')) return 'dra';
  if (name.startsWith('invalid-')) return 'validation';
  return 'device-plugins';
}

/** The suite for one part: each scenario on both kinds at once, compared. */
export function fidelitySuite(part: FidelityPart): void {
  describe(`fidelity (${part}): kubelet-sim against the real kubelet, scenario by scenario`, () => {
    const work = mkdtempSync(join(tmpdir(), 'pb-fidelity-'));
    const results: (Comparison & { ms: { sim: number; real: number } })[] = [];

    after(() => {
      rmSync(work, { recursive: true, force: true });
      const fields = results.reduce((n, r) => n + r.fields, 0);
      const unexplained = results.reduce((n, r) => n + r.unexplained.length, 0);
      const used = new Set(results.flatMap((r) => r.used));
      const report = {
        scenarios: results.length,
        fields,
        explained: results.reduce((n, r) => n + r.explained.length, 0),
        unexplained,
        unusedExplanations: explanations.filter((e) => !used.has(e)).map((e) => e.path),
        results,
      };
      const reportDir = process.env['PLUGBOARD_FIDELITY_REPORT_DIR'];
      if (reportDir) writeFileSync(join(reportDir, `${part}.json`), `${JSON.stringify(report, null, 2)}\n`);
    });

    const mine = scenarios.filter(
      (s) => partOf(s.name) === part && (!only || only.split(',').includes(s.name)),
    );
    for (const scenario of mine)
      it(`${scenario.name}: ${scenario.description}`, async (t) => {
        // The two kinds at once: separate nodes, namespaces and work directories.
        const [sim, real] = await Promise.all([
          runScenario(scenario, simCluster(join(work, 'sim')), join(work, scenario.name, 'sim')),
          runScenario(scenario, realCluster(), join(work, scenario.name, 'real')),
        ]);
        const c = compare(scenario.name, sim.observations, real.observations, explanations);
        results.push({ ...c, ms: { sim: sim.ms, real: real.ms } });
        t.diagnostic(
          `${scenario.name}: ${c.fields} fields, ${c.explained.length} explained, ${c.unexplained.length} unexplained differences (sim ${sim.ms} ms, real ${real.ms} ms)`,
        );
        for (const d of c.explained) t.diagnostic(`explained ${describeDifference(d)}`);
        assert.deepEqual(
          c.unexplained.map(describeDifference),
          [],
          `unexplained differences in ${scenario.name} (fix kubelet-sim, or list them with their reason in packages/testbed/fidelity/explained.yaml)`,
        );
      });
  });
}
