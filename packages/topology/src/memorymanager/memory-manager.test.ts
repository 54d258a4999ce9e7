// Memory Manager (Static policy) unit tests: Guaranteed pods only, hints by free memory, the
// group rules, widening a too-small affinity, hugepages.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryManager } from './memory-manager.js';
import { uniformMachine } from '../machine/machine-info.js';
import { bitsOf, maskOf } from '../topologymanager/bitmask.js';

test('Memory Manager: Guaranteed pods only, hints by free memory, groups and widening', () => {
  const mem = new MemoryManager(
    uniformMachine({
      cpus: 4,
      numaNodes: 2,
      memoryPerNumaBytes: 4 * 2 ** 30,
      hugepagesPerNumaBytes: { 'hugepages-2Mi': 2 ** 30 },
    }),
    'Static',
  );
  const G = 2 ** 30;
  assert.equal(mem.requestsOf('Burstable', new Map([['memory', G]])).size, 0);
  const req = mem.requestsOf(
    'Guaranteed',
    new Map([
      ['memory', 3 * G],
      ['hugepages-2Mi', 512 * 2 ** 20],
      ['cpu', 1000],
    ]),
  );
  assert.deepEqual([...req.keys()], ['memory', 'hugepages-2Mi']);
  const blocks = mem.allocate('a', 'c', req, maskOf([1]));
  assert.deepEqual(blocks, [
    { type: 'memory', bytes: 3 * G, numaNodes: [1] },
    { type: 'hugepages-2Mi', bytes: 512 * 2 ** 20, numaNodes: [1] },
  ]);
  // 2 GiB no longer fit on node 1 (1 GiB free): only node 0 is a single-node hint, and node 1
  // used alone cannot join a two-node group.
  const show = () =>
    mem
      .hints(new Map([['memory', 2 * G]]))
      .get('memory')!
      .map((h) => `${bitsOf(h.mask!).join('+')}${h.preferred ? '*' : ''}`);
  assert.deepEqual(show(), ['0*']);
  assert.throws(
    () => mem.allocate('b', 'c', new Map([['memory', 5 * G]]), null),
    /failed to get the default NUMA affinity, no NUMA nodes with enough memory is available/,
  );
  mem.release('a');
  // An affinity that cannot hold the request is widened to the narrowest one that can.
  assert.deepEqual(mem.allocate('c', 'c', new Map([['memory', 6 * G]]), maskOf([0])), [
    { type: 'memory', bytes: 6 * G, numaNodes: [0, 1] },
  ]);
  // Both nodes now form a group: neither can serve a single-node allocation any more.
  assert.deepEqual(show(), ['0+1'], 'only the group itself, not preferred (one node could hold 2 GiB)');
  assert.deepEqual(
    mem
      .hints(new Map([['memory', G]]))
      .get('memory')!
      .map((h) => [bitsOf(h.mask!), h.preferred]),
    [[[0, 1], false]],
  );
  assert.deepEqual(
    mem.perNuma().map((m) => [m.numaNode, m.type, m.free / G]),
    [
      [0, 'memory', 0],
      [0, 'hugepages-2Mi', 1],
      [1, 'memory', 2],
      [1, 'hugepages-2Mi', 1],
    ],
  );
});
