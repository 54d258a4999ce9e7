// CPU Manager (static policy) unit tests: exclusive vs shared CPUs, SMT siblings kept together,
// reserved CPUs never handed out, allocation inside a NUMA affinity, hints.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CpuManager } from './cpu-manager.js';
import { uniformMachine } from '../machine/machine-info.js';
import { bitsOf, maskOf } from '../topologymanager/bitmask.js';

// 2 NUMA nodes × 8 CPUs, 2 threads per core: node 0 = cores {0,1} {2,3} {4,5} {6,7}, node 1 = {8,9} … {14,15}.
const shape = () => uniformMachine({ cpus: 16, numaNodes: 2, memoryPerNumaBytes: 8 * 2 ** 30 });

test('only whole CPUs of Guaranteed pods are exclusive; the rest stay in the shared pool', () => {
  const cases: [string, number, 'static' | 'none', number][] = [
    ['Guaranteed', 2000, 'static', 2],
    ['Guaranteed', 1500, 'static', 0],
    ['Guaranteed', 0, 'static', 0],
    ['Burstable', 2000, 'static', 0],
    ['BestEffort', 0, 'static', 0],
    ['Guaranteed', 2000, 'none', 0],
  ];
  for (const [qos, milli, policy, want] of cases) {
    assert.equal(
      new CpuManager(shape(), policy).guaranteedCpus(qos, milli),
      want,
      `${qos} ${milli}m ${policy}`,
    );
  }
  const cpu = new CpuManager(shape(), 'static');
  const pinned = cpu.allocate('p1', 'main', 4, null, false);
  assert.equal(pinned.length, 4);
  assert.deepEqual(
    cpu.sharedPool().filter((c) => pinned.includes(c)),
    [],
    'exclusive CPUs leave the shared pool',
  );
  assert.equal(cpu.sharedPool().length, 12);
  cpu.release('p1');
  assert.equal(cpu.sharedPool().length, 16, 'released CPUs return to the shared pool');
});

test('SMT: an even request takes whole cores; an odd one finishes on a partly used core', () => {
  const cpu = new CpuManager(shape(), 'static');
  assert.deepEqual(cpu.allocate('a', 'c', 2, null, false), [0, 1], 'both threads of core 0');
  assert.deepEqual(
    cpu.allocate('b', 'c', 3, null, false),
    [2, 3, 4],
    'core 1 whole, then one thread of core 2',
  );
  assert.deepEqual(
    cpu.allocate('c', 'c', 1, null, false),
    [5],
    'the sibling left alone on core 2 goes first',
  );
  assert.deepEqual(cpu.allocate('d', 'c', 2, null, false), [6, 7], 'then a whole free core');
});

test('a request as large as a NUMA node takes the whole node', () => {
  const cpu = new CpuManager(shape(), 'static');
  cpu.allocate('a', 'c', 2, maskOf([0]), false);
  assert.deepEqual(cpu.allocate('b', 'c', 8, null, false), [8, 9, 10, 11, 12, 13, 14, 15], 'the free node 1');
});

test('allocation honours the NUMA affinity, then takes the rest elsewhere', () => {
  const cpu = new CpuManager(shape(), 'static');
  assert.deepEqual(cpu.allocate('a', 'c', 4, maskOf([1]), false), [8, 9, 10, 11]);
  cpu.allocate('b', 'c', 6, maskOf([0]), false);
  const spread = cpu.allocate('c', 'c', 4, maskOf([0]), false);
  assert.deepEqual(spread.slice(0, 2), [6, 7], 'the two CPUs left on node 0 first');
  assert.equal(spread.filter((c) => c >= 8).length, 2, 'the rest from node 1');
});

test('reserved CPUs are never exclusive, are not allocatable, and count in hints only as capacity', () => {
  const cpu = new CpuManager(shape(), 'static', [0, 1]);
  assert.deepEqual(cpu.allocatableCpus(), [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
  assert.deepEqual(cpu.allocate('a', 'c', 2, maskOf([0]), false), [2, 3]);
  assert.ok(cpu.sharedPool().includes(0), 'reserved CPUs stay in the shared pool');
  // Node 0 has 4 CPUs left for exclusive use (4-7): 6 fit only across both nodes, but 8 CPUs
  // per node means a single node is the preferred width.
  const hints = cpu.hints('b', 6)!.map((h) => `${bitsOf(h.mask!).join('+')}${h.preferred ? '*' : ''}`);
  assert.deepEqual(hints, ['1*', '0+1']);
  assert.throws(
    () => cpu.allocate('z', 'c', 13, null, false),
    /not enough cpus available to satisfy request: requested=13, available=12/,
  );
  assert.throws(() => new CpuManager(shape(), 'static', [99]), /reservedCpus: CPU 99 does not exist/);
  assert.deepEqual(new CpuManager(shape(), 'none', [0]).allocatableCpus(), [], 'none reports no CPUs');
});

test("init containers' CPUs are reused by the app containers after them", () => {
  const cpu = new CpuManager(shape(), 'static');
  const init = cpu.allocate('p', 'init', 2, null, true);
  const app = cpu.allocate('p', 'app', 2, null, false);
  assert.deepEqual(app, init, 'the same CPUs move to the app container');
  assert.deepEqual(cpu.cpusOf('p', 'init'), []);
  assert.equal(cpu.sharedPool().length, 14);
});

test('a CPU Manager restored from the exclusive CPUs PodResources reports chooses as the original', () => {
  const original = new CpuManager(shape(), 'static', [0, 1]);
  original.allocate('a', 'main', 3, maskOf([0]), false);
  original.allocate('b', 'main', 4, maskOf([1]), false);
  original.allocate('c', 'main', 2, null, false);
  const rebuilt = new CpuManager(shape(), 'static', [0, 1]);
  for (const pod of ['a', 'b', 'c']) rebuilt.restore(`ns/${pod}`, 'main', original.cpusOf(pod, 'main'));
  assert.deepEqual(rebuilt.availableCpus(), original.availableCpus());
  for (const n of [1, 2, 4, 6])
    assert.deepEqual(rebuilt.hints('new', n), original.hints('new', n), `${n} CPUs`);
  assert.deepEqual(
    rebuilt.allocate('new', 'main', 3, maskOf([1]), false),
    original.allocate('new', 'main', 3, maskOf([1]), false),
  );
  rebuilt.restore('ns/empty', 'main', []);
  assert.deepEqual(rebuilt.cpusOf('ns/empty', 'main'), [], 'nothing held, nothing restored');
});
