import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { preferredAllocation } from './preferred.js';

// 8 GPUs: gpu-0..3 on NUMA 0, gpu-4..7 on NUMA 1; nic-0/1 without NUMA; s-N::k replicas on NUMA 0/1.
const topology: Record<string, number[]> = {};
for (let i = 0; i < 8; i++) topology[`gpu-${i}`] = [i < 4 ? 0 : 1];
for (let i = 0; i < 4; i++) topology[`g2-${i}`] = [i]; // one device per node on 4 nodes
for (const p of ['s-0', 's-1']) for (let k = 0; k < 3; k++) topology[`${p}::${k}`] = [p === 's-0' ? 0 : 1];
const numaNodesOf = (id: string): number[] => topology[id] ?? [];
const all = Array.from({ length: 8 }, (_, i) => `gpu-${i}`);

interface Row {
  name: string;
  available: string[];
  mustInclude?: string[];
  size: number;
  chosen: string[];
  reason: RegExp;
}

const table: Row[] = [
  {
    name: 'fits on one node: the node with most free devices',
    available: ['gpu-0', 'gpu-4', 'gpu-5', 'gpu-6'],
    size: 2,
    chosen: ['gpu-4', 'gpu-5'],
    reason: /single NUMA node 1/,
  },
  {
    name: 'tie on free devices: lower node ID',
    available: all,
    size: 3,
    chosen: ['gpu-0', 'gpu-1', 'gpu-2'],
    reason: /single NUMA node 0 \(4 free\)/,
  },
  {
    name: 'natural ID order (gpu-2 before gpu-10 style)',
    available: ['gpu-3', 'gpu-1', 'gpu-2'],
    size: 2,
    chosen: ['gpu-1', 'gpu-2'],
    reason: /single NUMA node 0/,
  },
  {
    name: 'must-include pins the node',
    available: all,
    mustInclude: ['gpu-6'],
    size: 2,
    chosen: ['gpu-6', 'gpu-4'],
    reason: /single NUMA node 1.*must-include/,
  },
  {
    name: 'must-include alone fills the request',
    available: all,
    mustInclude: ['gpu-1', 'gpu-6'],
    size: 2,
    chosen: ['gpu-1', 'gpu-6'],
    reason: /must-include devices fill/,
  },
  {
    name: 'must-include on two nodes: stays on those nodes',
    available: all,
    mustInclude: ['gpu-0', 'gpu-7'],
    size: 3,
    chosen: ['gpu-0', 'gpu-7', 'gpu-1'],
    reason: /2 NUMA nodes \[0, 1\]/,
  },
  {
    name: 'no single node big enough: fewest nodes, most free first',
    available: ['gpu-0', 'gpu-4', 'gpu-5', 'gpu-6'],
    size: 4,
    chosen: ['gpu-4', 'gpu-5', 'gpu-6', 'gpu-0'],
    reason: /2 NUMA nodes \[0, 1\]: no single node has 4 free/,
  },
  {
    name: 'fewest nodes across 4 single-device nodes',
    available: ['g2-3', 'g2-1', 'g2-0', 'g2-2'],
    size: 2,
    chosen: ['g2-0', 'g2-1'],
    reason: /2 NUMA nodes \[0, 1\]/,
  },
  {
    name: 'devices without NUMA information',
    available: ['nic-1', 'nic-0', 'nic-2'],
    size: 2,
    chosen: ['nic-0', 'nic-1'],
    reason: /no NUMA information/,
  },
  {
    name: 'NUMA devices before devices without NUMA information',
    available: ['nic-0', 'gpu-0'],
    size: 2,
    chosen: ['gpu-0', 'nic-0'],
    reason: /single NUMA node 0 plus devices without NUMA/,
  },
  {
    name: 'replicas: NUMA locality before spreading over physical devices',
    available: ['s-0::0', 's-0::1', 's-0::2', 's-1::0'],
    size: 2,
    chosen: ['s-0::0', 's-0::1'],
    reason: /single NUMA node 0/,
  },
  {
    name: 'replicas: lowest replica index first',
    available: ['s-0::1', 's-0::0', 's-1::0', 's-1::1', 's-1::2'],
    size: 2,
    chosen: ['s-1::0', 's-1::1'],
    reason: /single NUMA node 1/,
  },
  {
    name: 'exact size from a larger pool',
    available: all,
    size: 8,
    chosen: ['gpu-0', 'gpu-1', 'gpu-2', 'gpu-3', 'gpu-4', 'gpu-5', 'gpu-6', 'gpu-7'],
    reason: /2 NUMA nodes/,
  },
  {
    name: 'duplicated available IDs count once',
    available: ['gpu-0', 'gpu-0', 'gpu-1'],
    size: 2,
    chosen: ['gpu-0', 'gpu-1'],
    reason: /single NUMA node 0/,
  },
];

describe('preferredAllocation', () => {
  for (const row of table) {
    it(row.name, () => {
      const result = preferredAllocation({
        available: row.available,
        mustInclude: row.mustInclude ?? [],
        size: row.size,
        numaNodesOf,
      });
      assert.deepEqual(result.chosen, row.chosen);
      assert.match(result.reason, row.reason);
      assert.equal(new Set(result.chosen).size, row.size);
      for (const id of row.mustInclude ?? []) assert.ok(result.chosen.includes(id));
    });
  }

  it('is deterministic: the order of the available IDs does not matter', () => {
    const shuffled = ['gpu-6', 'gpu-2', 'gpu-7', 'gpu-0', 'gpu-5', 'gpu-1', 'gpu-4', 'gpu-3'];
    const a = preferredAllocation({ available: all, mustInclude: [], size: 5, numaNodesOf });
    const b = preferredAllocation({ available: shuffled, mustInclude: [], size: 5, numaNodesOf });
    assert.deepEqual(a, b);
  });

  const errors: {
    name: string;
    available: string[];
    mustInclude: string[];
    size: number;
    message: RegExp;
  }[] = [
    {
      name: 'size larger than available',
      available: ['gpu-0'],
      mustInclude: [],
      size: 2,
      message: /cannot choose 2 devices: 1 available/,
    },
    {
      name: 'more must-include than size',
      available: all,
      mustInclude: ['gpu-0', 'gpu-1'],
      size: 1,
      message: /must-include has 2 devices \(gpu-0, gpu-1\)/,
    },
    { name: 'zero size', available: all, mustInclude: [], size: 0, message: /positive integer/ },
  ];
  for (const row of errors) {
    it(`rejects ${row.name}`, () => {
      assert.throws(
        () => preferredAllocation({ ...row, numaNodesOf }),
        (err: Error & { code?: string }) => {
          assert.equal(err.code, 'invalid-argument');
          assert.match(err.message, row.message);
          return true;
        },
      );
    });
  }
});
