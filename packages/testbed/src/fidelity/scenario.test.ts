import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadScenarios, parseScenario, ScenarioError } from './scenario.js';

const ok = `
description: one pod
devicePlugins:
  - name: plugboard.example/gpu
    simulated: { count: 2 }
steps:
  - apply: [{ apiVersion: v1, kind: Pod, metadata: { name: p } }]
  - wait: { object: pod/p, for: condition=Ready }
  - fault: { resource: plugboard.example/gpu, device: gpu-0 }
  - observe: end
`;

describe('fidelity scenario format', () => {
  it('parses a scenario, names it after its file and fills the defaults', () => {
    const s = parseScenario(ok, '/x/one-pod.yaml');
    assert.equal(s.name, 'one-pod');
    assert.deepEqual(s.steps[1], { wait: { object: 'pod/p', for: 'condition=Ready', timeoutSeconds: 120 } });
    assert.deepEqual(s.steps[2], {
      fault: { resource: 'plugboard.example/gpu', device: 'gpu-0', reason: 'simulated fault' },
    });
    assert.deepEqual(s.draDrivers, []);
  });

  const bad: [string, string, RegExp][] = [
    [
      'an unknown step',
      ok.replace('- observe: end', '- sleep: 5\n  - observe: end'),
      /f\.yaml: steps\[3\]: expected one of apply, delete/,
    ],
    [
      'a field of a step',
      ok.replace('for: condition=Ready', 'for: condition=Ready, extra: 1'),
      /f\.yaml: steps\[1\]\.wait: Unrecognized key: "extra"/,
    ],
    [
      'a fault on an unknown plugin',
      ok.replace('resource: plugboard.example/gpu, device', 'resource: other.example/x, device'),
      /steps\[2\]: resource "other\.example\/x" is not one of devicePlugins/,
    ],
    [
      'a fault naming both kinds',
      ok.replace(
        'resource: plugboard.example/gpu, device',
        'resource: plugboard.example/gpu, driver: d, device',
      ),
      /steps\[2\]\.fault: names exactly one of resource/,
    ],
    ['no observe step', ok.replace('  - observe: end\n', ''), /steps: needs at least one observe step/],
    [
      'a label used twice',
      ok.replace('  - observe: end\n', '  - observe: end\n  - observe: end\n'),
      /label "end" used twice/,
    ],
    ['a missing description', ok.replace('description: one pod\n', ''), /f\.yaml: description: /],
    [
      'a bad quantity',
      `description: d\ndraDrivers: [{ driver: a.example, count: 1, shared: { memory: lots, default: 1Gi, min: 1Gi } }]\nsteps: [{ observe: x }]`,
      /draDrivers\[0\]\.shared\.memory: a quantity such as 40Gi/,
    ],
    ['not YAML', 'a: [', /f\.yaml: not YAML/],
  ];
  for (const [what, text, message] of bad)
    it(`refuses ${what}, naming the file and the field`, () => {
      assert.throws(
        () => parseScenario(text, 'f.yaml'),
        (err: Error) => {
          assert.ok(err instanceof ScenarioError);
          assert.match(err.message, message);
          return true;
        },
      );
    });

  it('every scenario in packages/testbed/fidelity/scenarios parses', () => {
    const all = loadScenarios(new URL('../../fidelity/scenarios/', import.meta.url).pathname);
    assert.ok(all.length >= 15, `${all.length} scenarios`);
  });
});
