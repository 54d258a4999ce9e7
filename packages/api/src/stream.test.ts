// checkSequence: the stream clients' one seq rule, table-driven.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkSequence, type SequenceCheck } from './stream.ts';

test('checkSequence: apply in order, skip what was seen, a gap when something was missed', () => {
  const gap = (reason: string): SequenceCheck => ({ kind: 'gap', reason });
  const cases: [number | null, 'snapshot' | 'patch' | 'heartbeat', number, SequenceCheck][] = [
    [null, 'snapshot', 7, { kind: 'apply' }],
    [5, 'snapshot', 5, { kind: 'apply' }],
    [5, 'snapshot', 9, { kind: 'apply' }],
    [5, 'snapshot', 4, { kind: 'skip' }],
    [null, 'patch', 1, gap('patch before snapshot')],
    [5, 'patch', 6, { kind: 'apply' }],
    [5, 'patch', 5, { kind: 'skip' }],
    [5, 'patch', 3, { kind: 'skip' }],
    [5, 'patch', 8, gap('gap: expected seq 6, got 8')],
    [null, 'heartbeat', 5, { kind: 'skip' }],
    [5, 'heartbeat', 5, { kind: 'apply' }],
    [5, 'heartbeat', 4, { kind: 'apply' }],
    [5, 'heartbeat', 6, gap('heartbeat at seq 6, have 5')],
  ];
  for (const [applied, type, seq, want] of cases) {
    assert.deepEqual(checkSequence(applied, { type, seq }), want, `${type} ${seq} after ${String(applied)}`);
  }
});
