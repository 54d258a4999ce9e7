import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { flatten, normalise, normaliseString } from './normalise.js';

const ctx = {
  node: 'fid-a1b2c3',
  namespace: 'fid-d4e5f6',
  work: '/tmp/pb-fidelity-x/s/real',
  generated: ['train-gpus-x7k2p'],
};

describe('fidelity normalisation', () => {
  it('replaces the run’s names, UIDs, times and generated suffixes', () => {
    assert.equal(
      normaliseString(
        'k8s.gpu.fid.example/gpu=0f8fad5b-d9cb-469f-a165-70867728950e-gpu-0 on fid-a1b2c3 in fid-d4e5f6-gpu at 2026-01-02T03:04:05Z',
        ctx,
      ),
      'k8s.gpu.fid.example/gpu=<uid>-gpu-0 on <node> in <ns>-gpu at <time>',
    );
    assert.equal(normaliseString('fid-d4e5f6/train-gpus-x7k2p', ctx), '<ns>/train-gpus-<suffix>');
    assert.equal(normaliseString('/tmp/pb-fidelity-x/s/real/ttyUSB0', ctx), '<work>/ttyUSB0');
  });

  it('keeps only the scheduler’s verdicts on this node', () => {
    assert.equal(
      normaliseString(
        "0/7 nodes are available: 1 cannot allocate all claims, 6 node(s) didn't match Pod's node affinity/selector. preemption: 0/7 nodes are available: 7 Preemption is not helpful for scheduling.",
        ctx,
      ),
      '0/<n> nodes are available: 1 cannot allocate all claims. preemption: <not helpful>.',
    );
    assert.equal(
      normaliseString(
        '0/1 nodes are available: 1 cannot allocate all claims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
        ctx,
      ),
      '0/<n> nodes are available: 1 cannot allocate all claims. preemption: <not helpful>.',
    );
  });

  it('sorts lists, normalises keys and drops undefined', () => {
    assert.deepEqual(
      normalise({ 'Pod/fid-d4e5f6': { b: [3, 1, 2], a: undefined, c: [{ x: 2 }, { x: 1 }] } }, ctx),
      {
        'Pod/<ns>': { b: [1, 2, 3], c: [{ x: 1 }, { x: 2 }] },
      },
    );
  });

  it('flattens to leaf fields: plain lists as one field, empty things as fields of their own', () => {
    assert.deepEqual(
      [...flatten({ a: { b: 1, c: ['x', 'y'], d: [{ e: true }], f: {}, g: [], h: null } })],
      [
        ['a.b', 1],
        ['a.c', '["x","y"]'],
        ['a.d[0].e', true],
        ['a.f', '{}'],
        ['a.g', '[]'],
        ['a.h', null],
      ],
    );
  });
});
