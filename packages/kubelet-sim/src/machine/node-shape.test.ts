// The simulated machine: CPUs split across NUMA nodes, SMT siblings, hugepages, bad shapes;
// cpulists as sysfs and --reserved-cpus write them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildNodeShape, formatCpuList, parseCpuList } from './node-shape.js';

test('node shape splits CPUs across NUMA nodes, SMT siblings within a node', () => {
  const odd = buildNodeShape({ cpus: 5, numaNodes: 2, memoryPerNumaBytes: 10 });
  assert.deepEqual(odd.numaNodes, [
    { id: 0, cpus: [0, 1, 2], memoryBytes: 10, hugepages: {} },
    { id: 1, cpus: [3, 4], memoryBytes: 10, hugepages: {} },
  ]);
  assert.equal(odd.threadsPerCore, 1, 'an odd CPU count on a node means no SMT by default');
  const smt = buildNodeShape({
    cpus: 8,
    numaNodes: 2,
    hugepagesPerNumaBytes: { 'hugepages-2Mi': 2 ** 30, 'hugepages-1Gi': 0 },
  });
  assert.equal(smt.threadsPerCore, 2);
  assert.deepEqual(
    smt.cpus.map((c) => [c.id, c.coreId, c.numaNode, c.siblings]),
    [
      [0, 0, 0, [0, 1]],
      [1, 0, 0, [0, 1]],
      [2, 1, 0, [2, 3]],
      [3, 1, 0, [2, 3]],
      [4, 2, 1, [4, 5]],
      [5, 2, 1, [4, 5]],
      [6, 3, 1, [6, 7]],
      [7, 3, 1, [6, 7]],
    ],
  );
  assert.deepEqual(smt.numaNodes[1]!.hugepages, { 'hugepages-2Mi': 2 ** 30 });
  assert.equal(buildNodeShape({ cpus: 8, threadsPerCore: 4 }).cpus[5]!.siblings.join(','), '4,5,6,7');
  const bad: [Parameters<typeof buildNodeShape>[0], RegExp][] = [
    [{ cpus: 1, numaNodes: 2 }, /cpus: must be an integer of at least numaNodes/],
    [{ cpus: 6, numaNodes: 2, threadsPerCore: 2 }, /threadsPerCore: must be a positive integer dividing/],
    [
      { hugepagesPerNumaBytes: { 'hugepages-1Gi': 2 ** 20 } },
      /hugepagesPerNumaBytes.hugepages-1Gi: must be a multiple/,
    ],
    [{ cpus: 64, numaNodes: 17 }, /numaNodes: must be an integer from 1 to 16/],
  ];
  for (const [opts, message] of bad) assert.throws(() => buildNodeShape(opts), message);
});

test('cpulists parse and format like sysfs and --reserved-cpus', () => {
  const cases: [string, number[] | undefined][] = [
    ['0-3,8,10-11', [0, 1, 2, 3, 8, 10, 11]],
    ['5', [5]],
    ['', []],
    ['3-1', undefined],
    ['a', undefined],
    ['0,,1', undefined],
  ];
  for (const [text, want] of cases) assert.deepEqual(parseCpuList(text), want, text);
  assert.equal(formatCpuList([11, 0, 1, 2, 3, 8, 10]), '0-3,8,10-11');
  assert.equal(formatCpuList([]), '');
});
