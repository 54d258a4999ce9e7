// The machine as a node agent builds it from a sysfs layout: cores from SMT siblings, NUMA nodes by
// ID, and a refusal for NUMA IDs the managers cannot index.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TopologyError } from '../errors.js';
import { machineFromLayout, uniformMachine } from './machine-info.js';

test('machineFromLayout: cores from siblings, threads per core, memory and hugepages per node', () => {
  const m = machineFromLayout(
    [
      { id: 1, cpuIds: [2, 3, 6], memoryBytes: 8, hugepages: { 'hugepages-2Mi': 4 } },
      { id: 0, cpuIds: [0, 1, 4], memoryBytes: 16 },
    ],
    new Map([
      [0, [0, 4]],
      [4, [0, 4]],
      [2, [2, 6]],
      [6, [2, 6]],
    ]),
  );
  assert.deepEqual(
    m.numaNodes.map((n) => [n.id, n.cpus, n.memoryBytes, n.hugepages]),
    [
      [0, [0, 1, 4], 16, {}],
      [1, [2, 3, 6], 8, { 'hugepages-2Mi': 4 }],
    ],
  );
  assert.equal(m.threadsPerCore, 2);
  assert.deepEqual(
    [0, 1, 4, 3].map((c) => [c, m.cpus[c]!.coreId, m.cpus[c]!.numaNode, m.cpus[c]!.siblings]),
    [
      [0, 0, 0, [0, 4]],
      [1, 1, 0, [1]],
      [4, 0, 0, [0, 4]],
      [3, 3, 1, [3]],
    ],
  );
  assert.throws(
    () => machineFromLayout([{ id: 1, cpuIds: [0], memoryBytes: 1 }]),
    (err: unknown) =>
      err instanceof TopologyError && err.code === 'Config' && /0…N-1, got 1/.test(err.message),
  );
});

test("uniformMachine: kubelet-sim's numbering (blocks per NUMA node, consecutive siblings)", () => {
  const m = uniformMachine({ cpus: 8, numaNodes: 2, memoryPerNumaBytes: 1 });
  assert.deepEqual(m.numaNodes[1]!.cpus, [4, 5, 6, 7]);
  assert.deepEqual(m.cpus[5]!.siblings, [4, 5]);
});
