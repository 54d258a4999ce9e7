// Table-driven tests of the Topology Manager's hint arithmetic: hint generation (preferred =
// narrowest possible), the cross-product merge and the four policies' decisions, on cases taken
// from the kubelet's documentation and its policy tests (2 and 4 NUMA nodes).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allMasks, bitsOf, isNarrower, maskOf } from './bitmask.js';
import { applyPolicy } from './policy.js';
import {
  generateHints,
  type ResourceHints,
  type TopologyHint,
  type TopologyManagerPolicy,
} from './topology-manager.js';

/** `h([0], true)` = a hint for NUMA node 0, preferred; `h(null, …)` = any NUMA node. */
const h = (nodes: number[] | null, preferred: boolean): TopologyHint => ({
  mask: nodes === null ? null : maskOf(nodes),
  preferred,
});
const p = (resource: string, hints: TopologyHint[] | null): ResourceHints => ({
  provider: resource === 'cpu' ? 'cpu' : resource === 'memory' ? 'memory' : 'devices',
  resource,
  hints,
});

/** Expected result per policy: NUMA nodes (null = no affinity), preferred, admit. */
type Want = [number[] | null, boolean, boolean];

interface Case {
  name: string;
  numa: number[];
  providers: ResourceHints[];
  want: Record<Exclude<TopologyManagerPolicy, 'none'>, Want>;
}

const TWO = [0, 1];
const FOUR = [0, 1, 2, 3];

const cases: Case[] = [
  {
    name: 'no provider has a preference: any NUMA node, preferred',
    numa: TWO,
    providers: [p('cpu', null), p('example.com/gpu', null)],
    want: {
      'best-effort': [[0, 1], true, true],
      restricted: [[0, 1], true, true],
      'single-numa-node': [null, true, true],
    },
  },
  {
    // The docs' example: a device fits on either node, CPUs too; the narrowest common node wins.
    name: 'device and CPUs both fit on either node: NUMA node 0 (narrowest, lowest)',
    numa: TWO,
    providers: [
      p('example.com/gpu', [h([0], true), h([1], true), h([0, 1], false)]),
      p('cpu', [h([0], true), h([1], true), h([0, 1], false)]),
    ],
    want: {
      'best-effort': [[0], true, true],
      restricted: [[0], true, true],
      'single-numa-node': [[0], true, true],
    },
  },
  {
    name: 'devices only fit on node 1: CPUs follow them',
    numa: TWO,
    providers: [
      p('example.com/gpu', [h([1], true), h([0, 1], false)]),
      p('cpu', [h([0], true), h([1], true), h([0, 1], false)]),
    ],
    want: {
      'best-effort': [[1], true, true],
      restricted: [[1], true, true],
      'single-numa-node': [[1], true, true],
    },
  },
  {
    // No common preferred node: the narrowest non-preferred merge ({0} from the device's {0} and
    // the CPUs' {0,1}) wins; best-effort admits it, CPUs then come from node 0 if they can.
    name: 'device only on node 0, CPUs only on node 1: node 0, not preferred',
    numa: TWO,
    providers: [
      p('example.com/gpu', [h([0], true), h([0, 1], false)]),
      p('cpu', [h([1], true), h([0, 1], false)]),
    ],
    want: {
      'best-effort': [[0], false, true],
      restricted: [[0], false, false],
      'single-numa-node': [null, false, false],
    },
  },
  {
    name: 'a provider has no possible affinity ([]): cannot be preferred',
    numa: TWO,
    providers: [p('example.com/gpu', []), p('cpu', [h([0], true), h([1], true), h([0, 1], false)])],
    want: {
      'best-effort': [[0], false, true],
      restricted: [[0], false, false],
      'single-numa-node': [null, false, false],
    },
  },
  {
    name: 'the request needs both nodes and every provider says so: preferred across two nodes',
    numa: TWO,
    providers: [p('example.com/gpu', [h([0, 1], true)]), p('cpu', [h([0, 1], true)])],
    want: {
      'best-effort': [[0, 1], true, true],
      restricted: [[0, 1], true, true],
      'single-numa-node': [null, false, false],
    },
  },
  {
    // mergePermutation: affinities must be equal for a preferred merge ({0,1} AND {0} is not).
    name: 'devices need both nodes, CPUs fit on one: the wider mask wins, not preferred',
    numa: TWO,
    providers: [
      p('example.com/gpu', [h([0, 1], true)]),
      p('cpu', [h([0], true), h([1], true), h([0, 1], false)]),
    ],
    want: {
      'best-effort': [[0, 1], false, true],
      restricted: [[0, 1], false, false],
      'single-numa-node': [null, false, false],
    },
  },
  {
    name: 'one provider without preference does not constrain the others',
    numa: TWO,
    providers: [
      p('example.com/gpu', null),
      p('cpu', [h([1], true), h([0, 1], false)]),
      p('memory', [h([1], true), h([0, 1], false)]),
    ],
    want: {
      'best-effort': [[1], true, true],
      restricted: [[1], true, true],
      'single-numa-node': [[1], true, true],
    },
  },
  {
    name: 'preferred hints that do not intersect lose to a non-preferred common one',
    numa: TWO,
    providers: [
      p('example.com/gpu', [h([0], true), h([0, 1], false)]),
      p('example.com/nic', [h([1], true), h([0, 1], false)]),
      p('cpu', [h([0], true), h([1], true), h([0, 1], false)]),
    ],
    want: {
      'best-effort': [[0], false, true],
      restricted: [[0], false, false],
      'single-numa-node': [null, false, false],
    },
  },
  {
    // bestNonPreferredAffinityCount: among non-preferred merges, prefer the width the most
    // demanding provider needs (3 here) over narrower ones that would starve it.
    name: '4 NUMA nodes: non-preferred merges gravitate to the widest minimal need',
    numa: FOUR,
    providers: [
      p('example.com/gpu', [h([0, 1, 2], false), h([0, 1, 2, 3], false)]),
      p('cpu', [h([0], true), h([0, 1], false), h([0, 1, 2, 3], false)]),
    ],
    want: {
      'best-effort': [[0, 1, 2], false, true],
      restricted: [[0, 1, 2], false, false],
      'single-numa-node': [null, false, false],
    },
  },
  {
    name: '4 NUMA nodes: two nodes preferred by all providers beat a single non-preferred one',
    numa: FOUR,
    providers: [
      p('example.com/gpu', [h([2, 3], true), h([1, 2, 3], false), h([0, 1, 2, 3], false)]),
      p('cpu', [h([2], false), h([2, 3], true), h([0, 1, 2, 3], false)]),
    ],
    want: {
      'best-effort': [[2, 3], true, true],
      restricted: [[2, 3], true, true],
      'single-numa-node': [null, false, false],
    },
  },
];

for (const c of cases) {
  test(`merge: ${c.name}`, () => {
    for (const [policy, [nodes, preferred, admit]] of Object.entries(c.want)) {
      const got = applyPolicy(policy as TopologyManagerPolicy, c.numa, c.providers);
      assert.deepEqual(
        {
          nodes: got.hint.mask === null ? null : bitsOf(got.hint.mask),
          preferred: got.hint.preferred,
          admit: got.admit,
        },
        { nodes, preferred, admit },
        policy,
      );
    }
    // The none policy merges nothing and admits everything.
    assert.deepEqual(applyPolicy('none', c.numa, c.providers), {
      hint: { mask: null, preferred: false },
      admit: true,
    });
  });
}

test('masks: every combination smallest first; narrower = fewer nodes, then lower ones', () => {
  assert.deepEqual(allMasks([0, 1, 2]).map(bitsOf), [[0], [1], [2], [0, 1], [0, 2], [1, 2], [0, 1, 2]]);
  assert.ok(isNarrower(maskOf([1]), maskOf([0, 1])));
  assert.ok(isNarrower(maskOf([0, 2]), maskOf([1, 2])));
  assert.ok(!isNarrower(maskOf([1]), maskOf([0])));
});

test('hint generation: a hint per combination that can hold the request, preferred when minimal', () => {
  // 4 devices per node on 2 nodes; free: 2 on node 0, 3 on node 1.
  const total = (mask: number) => bitsOf(mask).length * 4;
  const free = (mask: number) => (bitsOf(mask).includes(0) ? 2 : 0) + (bitsOf(mask).includes(1) ? 3 : 0);
  const show = (hints: TopologyHint[]) =>
    hints.map((x) => `${bitsOf(x.mask!).join('+')}${x.preferred ? '*' : ''}`);
  assert.deepEqual(show(generateHints(TWO, 2, total, free)), ['0*', '1*', '0+1']);
  assert.deepEqual(show(generateHints(TWO, 3, total, free)), ['1*', '0+1']);
  // 4 fit on one node in principle (preferred width 1), but only both nodes together have 4 free.
  assert.deepEqual(show(generateHints(TWO, 4, total, free)), ['0+1']);
  // 6 need two nodes even on an empty machine: the two-node hint is preferred.
  assert.deepEqual(show(generateHints(TWO, 5, total, (m) => total(m))), ['0+1*']);
  assert.deepEqual(generateHints(TWO, 9, total, free), [], 'nothing can hold 9');
  // A mask ruled out by its provider (reusable devices outside it) yields no hint.
  assert.deepEqual(show(generateHints(TWO, 1, total, (m) => (bitsOf(m).includes(1) ? free(m) : null))), [
    '1*',
    '0+1',
  ]);
});
