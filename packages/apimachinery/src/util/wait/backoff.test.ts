// wait.Backoff's Step, table-driven from k8s.io/apimachinery/pkg/util/wait/backoff_test.go's cases
// (TestBackoff_Step) and the shapes Plugboard's retry sites use.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Backoff, type BackoffParameters, jitter } from './backoff.js';

const steps = (b: Backoff, n: number): number[] => Array.from({ length: n }, () => b.step());

describe('Backoff.step', () => {
  const cases: { name: string; initial: BackoffParameters; want: number[] }[] = [
    { name: 'zero steps: the duration, unchanged', initial: { duration: 1, steps: 0 }, want: [1, 1, 1] },
    { name: 'one step, no factor', initial: { duration: 1, steps: 1 }, want: [1, 1, 1] },
    { name: 'factor 1', initial: { duration: 1, factor: 1, steps: 1 }, want: [1, 1, 1] },
    { name: 'factor 2, two steps', initial: { duration: 1, factor: 2, steps: 2 }, want: [1, 2, 4, 4] },
    {
      name: 'factor 2, capped: steps stop at the cap',
      initial: { duration: 1, factor: 2, steps: 10, cap: 5 },
      want: [1, 2, 4, 5, 5, 5],
    },
    {
      name: 'doubling until the cap (Infinity steps)',
      initial: { duration: 100, factor: 2, steps: Infinity, cap: 5000 },
      want: [100, 200, 400, 800, 1600, 3200, 5000, 5000],
    },
    {
      name: 'the first step is not capped (as upstream)',
      initial: { duration: 10, factor: 2, steps: Infinity, cap: 5 },
      want: [10, 5, 5],
    },
  ];
  for (const c of cases) {
    test(c.name, () => assert.deepEqual(steps(new Backoff(c.initial), c.want.length), c.want));
  }

  test('jitter adds [0, jitter × duration) and does not feed the next duration', () => {
    const b = new Backoff({ duration: 400, factor: 2, jitter: 0.5, steps: Infinity, cap: 8000 }, () => 0.5);
    assert.deepEqual(steps(b, 7), [500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
    assert.equal(b.duration, 8000);
    const low = new Backoff({ duration: 400, jitter: 0.5 }, () => 0);
    assert.deepEqual(steps(low, 2), [400, 400]);
  });

  test('jitter: a non-positive factor counts as 1', () => {
    assert.equal(
      jitter(100, 0, () => 0.5),
      150,
    );
    assert.equal(
      jitter(100, 0.2, () => 1),
      120,
    );
  });
});
