// Properties of the preferred-allocation policy over random topologies (fast-check).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { preferredAllocation } from './preferred.js';

// A node: up to 4 NUMA nodes with up to 8 devices each, some without NUMA information.
const topologyArb = fc
  .array(fc.integer({ min: -1, max: 3 }), { minLength: 1, maxLength: 24 })
  .map((nodes) => new Map(nodes.map((n, i) => [`dev-${i}`, n < 0 ? [] : [n]])));

const caseArb = topologyArb.chain((topology) => {
  const ids = [...topology.keys()];
  return fc
    .record({
      available: fc.shuffledSubarray(ids, { minLength: 1 }),
      mustCount: fc.nat({ max: 3 }),
      extra: fc.nat({ max: 8 }),
    })
    .map(({ available, mustCount, extra }) => {
      const mustInclude = available.slice(0, Math.min(mustCount, available.length));
      const size = Math.min(available.length, mustInclude.length + 1 + extra);
      return { topology, available, mustInclude, size };
    });
});

describe('preferredAllocation properties', () => {
  it('exactly size distinct IDs from available, must-include kept, deterministic, single node when one fits', () => {
    fc.assert(
      fc.property(caseArb, ({ topology, available, mustInclude, size }) => {
        const numaNodesOf = (id: string): number[] => topology.get(id) ?? [];
        const result = preferredAllocation({ available, mustInclude, size, numaNodesOf });
        assert.equal(result.chosen.length, size);
        assert.equal(new Set(result.chosen).size, size);
        for (const id of result.chosen) assert.ok(available.includes(id));
        for (const id of mustInclude) assert.ok(result.chosen.includes(id));

        const again = preferredAllocation({
          available: [...available].reverse(),
          mustInclude,
          size,
          numaNodesOf,
        });
        assert.deepEqual(again, result);

        // If one NUMA node can hold the whole request (including must-include devices), it is used.
        const nodeOf = (id: string): number | undefined => numaNodesOf(id)[0];
        const mustNodes = new Set(mustInclude.map(nodeOf));
        const fits = [0, 1, 2, 3].some(
          (n) =>
            [...mustNodes].every((m) => m === n) && available.filter((id) => nodeOf(id) === n).length >= size,
        );
        if (fits) assert.equal(new Set(result.chosen.map(nodeOf)).size, 1, result.reason);
      }),
      { numRuns: 300 },
    );
  });
});
