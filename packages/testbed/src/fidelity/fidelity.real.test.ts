// Fidelity, measured: every scenario of packages/testbed/fidelity/scenarios/ run on kubelet-sim and
// on the real kubelet (v1.37.2) by the same runner, the outcomes normalised and compared field by
// field; a difference must be listed, with its reason, in packages/testbed/fidelity/explained.yaml
// (and docs/KUBELET-SIM.md, "Fidelity, measured"). `npm run fidelity` runs this file alone and
// prints the summary line from the report it writes (PLUGBOARD_FIDELITY_REPORT).
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

describe('fidelity: kubelet-sim against the real kubelet, scenario by scenario', () => {
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
    const file = process.env['PLUGBOARD_FIDELITY_REPORT'];
    if (file) writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  });

  for (const scenario of scenarios.filter((s) => !only || only.split(',').includes(s.name)))
    it(`${scenario.name}: ${scenario.description}`, async (t) => {
      const sim = await runScenario(
        scenario,
        simCluster(join(work, 'sim')),
        join(work, scenario.name, 'sim'),
      );
      const real = await runScenario(scenario, realCluster(), join(work, scenario.name, 'real'));
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
