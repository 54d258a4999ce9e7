import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SimulatedSource } from './simulated.js';

describe('SimulatedSource', () => {
  const table: [count: number, numa: number[], expected: number[][]][] = [
    [8, [0, 1], [[0], [0], [0], [0], [1], [1], [1], [1]]],
    [3, [0, 1], [[0], [0], [1]]],
    [4, [0, 1, 2, 3], [[0], [1], [2], [3]]],
    [2, [], [[], []]],
  ];
  for (const [count, numa, expected] of table) {
    it(`spreads ${count} devices evenly over NUMA [${numa.join(', ')}]`, () => {
      const source = new SimulatedSource({ count, numaNodes: numa, idPrefix: 'gpu' });
      assert.deepEqual(
        source.list().map((d) => d.numaNodes),
        expected,
      );
      assert.deepEqual(
        source.list().map((d) => d.id),
        Array.from({ length: count }, (_, i) => `gpu-${i}`),
      );
    });
  }

  it('marks unhealthy with a reason, heals, notifies only on change', () => {
    const source = new SimulatedSource({ count: 2, idPrefix: 'd' });
    let changes = 0;
    source.subscribe(() => changes++);
    source.markUnhealthy('d-1', 'overheated');
    source.markUnhealthy('d-1', 'overheated');
    assert.deepEqual(
      [source.list()[1]!.health, source.list()[1]!.reason, changes],
      ['Unhealthy', 'overheated', 1],
    );
    source.heal('d-1');
    assert.deepEqual([source.list()[1]!.health, source.list()[1]!.reason, changes], ['Healthy', null, 2]);
    assert.throws(() => source.heal('d-9'), { code: 'not-found' });
  });

  it('flaps and ends healthy', async () => {
    const source = new SimulatedSource({ count: 1, idPrefix: 'd' });
    const seen: string[] = [];
    source.subscribe(() => seen.push(source.list()[0]!.health));
    await source.flap('d-0', { times: 2, intervalMs: 5, reason: 'link flap' });
    assert.deepEqual(seen, ['Unhealthy', 'Healthy', 'Unhealthy', 'Healthy']);
    await source.stop();
  });

  it('device node pattern', () => {
    const source = new SimulatedSource({ count: 2, idPrefix: 'fpga', deviceNodePattern: '/dev/fpga{index}' });
    assert.deepEqual(
      source.list().map((d) => d.deviceNodes),
      [['/dev/fpga0'], ['/dev/fpga1']],
    );
  });
});
