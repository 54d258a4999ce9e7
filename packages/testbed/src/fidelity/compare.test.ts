import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compare, describeDifference, explain, loadExplanations, parseExplanations } from './compare.js';
import { tableRows } from './observe.js';

const explanations = parseExplanations(
  `
- path: '*.tables.node[0].VERSION'
  reason: the simulator names itself in its version
- path: 'end.events.Pod/*.Pulling'
  scenarios: ['dra-*']
  reason: the real node's fake runtime pulls images
`,
  'explained.yaml',
);

describe('fidelity comparison', () => {
  it('counts every field of either side and sorts differences into explained and unexplained', () => {
    const sim = {
      end: {
        a: 1,
        same: 'x',
        tables: { node: [{ VERSION: 'v1-sim' }] },
        events: { 'Pod/p': { Pulled: 'Normal' } },
      },
    };
    const real = {
      end: {
        a: 2,
        same: 'x',
        tables: { node: [{ VERSION: 'v1' }] },
        events: { 'Pod/p': { Pulled: 'Normal', Pulling: 'Normal' } },
      },
    };
    const c = compare('dra-x', sim, real, explanations);
    assert.equal(c.fields, 5);
    assert.deepEqual(c.unexplained.map(describeDifference), ['end.a: sim=1 real=2']);
    assert.deepEqual(
      c.explained.map((d) => d.path),
      ['end.events.Pod/p.Pulling', 'end.tables.node[0].VERSION'],
    );
    assert.equal(c.used.length, 2);
    // The second entry is for dra-* scenarios only.
    assert.deepEqual(
      compare('device-x', sim, real, explanations).unexplained.map((d) => d.path),
      ['end.a', 'end.events.Pod/p.Pulling'],
    );
  });

  it('matches `*` across dots and nothing else loosely', () => {
    assert.ok(explain(explanations, 's', 'x.y.tables.node[0].VERSION'));
    assert.equal(explain(explanations, 's', 'x.tables.node[1].VERSION'), undefined);
  });

  it('refuses an entry without a reason, naming the file', () => {
    assert.throws(
      () => parseExplanations('- path: a\n  reason: short\n', 'e.yaml'),
      /e\.yaml: \[0\]\.reason: say why/,
    );
  });

  it('the project’s explained-differences file parses', () => {
    assert.ok(
      loadExplanations(new URL('../../fidelity/explained.yaml', import.meta.url).pathname).length > 0,
    );
  });

  it('reads kubectl get tables by column, without AGE', () => {
    assert.deepEqual(
      tableRows('NAME    READY   STATUS    RESTARTS   AGE\ntrain   1/1     Running   0          5s\n'),
      [{ NAME: 'train', READY: '1/1', STATUS: 'Running', RESTARTS: '0' }],
    );
  });
});
