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

test('a Memory Manager restored from the blocks PodResources reports gives the same hints and groups', () => {
  const machine = () =>
    uniformMachine({
      cpus: 8,
      numaNodes: 4,
      memoryPerNumaBytes: 4 * 2 ** 30,
      hugepagesPerNumaBytes: { 'hugepages-2Mi': 2 ** 30 },
    });
  const G = 2 ** 30;
  const original = new MemoryManager(machine(), 'Static');
  original.allocate('a', 'main', new Map([['memory', 3 * G]]), maskOf([0]));
  // 6 GiB needs two nodes: a group {1,2}, taken 4 + 2 from its nodes.
  original.allocate(
    'b',
    'main',
    new Map([
      ['memory', 6 * G],
      ['hugepages-2Mi', 512 * 2 ** 20],
    ]),
    maskOf([1, 2]),
  );
  const rebuilt = new MemoryManager(machine(), 'Static');
  for (const pod of ['a', 'b']) rebuilt.restore(`ns/${pod}`, 'main', original.blocksOf(pod, 'main'));
  assert.deepEqual(rebuilt.perNuma(), original.perNuma());
  for (const bytes of [G, 2 * G, 5 * G]) {
    const req = new Map([['memory' as const, bytes]]);
    assert.deepEqual(rebuilt.hints(req), original.hints(req), `${bytes / G} GiB`);
  }
  // Group rules hold: node 1 only as part of {1,2}, never alone.
  const hints = rebuilt
    .hints(new Map([['memory', G]]))
    .get('memory')!
    .map((h) => bitsOf(h.mask!));
  assert.ok(!hints.some((nodes) => nodes.length === 1 && nodes[0] === 1));
});
