// devicesToAllocate, table-driven: reusable devices first, then inside the affinity (the plugin's
// preference among them when there are more than needed), then the plugin's preference elsewhere,
// unaligned and no-affinity last; the kubelet's error texts when it cannot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { maskOf } from '../topologymanager/bitmask.js';
import { devicesByNuma, devicesToAllocate, type ResourceDeviceState } from './devices-to-allocate.js';
import type { DeviceView } from './types.js';

// g0,g1 on NUMA 0; g2,g3 on NUMA 1; x without topology.
const devices = new Map<string, DeviceView>(
  (
    [
      ['g0', [0]],
      ['g1', [0]],
      ['g2', [1]],
      ['g3', [1]],
      ['x', []],
    ] as const
  ).map(([id, numa]) => [id, { id, health: 'Healthy', numaNodes: [...numa] }]),
);
const state = (over: Partial<ResourceDeviceState> = {}): ResourceDeviceState => ({
  existing: undefined,
  devices,
  healthy: new Set(devices.keys()),
  inUse: new Set(),
  preferred: () => Promise.resolve(null),
  ...over,
});
const req = (required: number, affinity: number[] | null, reusable: string[] = []) => ({
  podUid: 'p',
  container: 'c',
  resource: 'r',
  required,
  reusable: new Set(reusable),
  affinity: affinity && maskOf(affinity),
});

test('devicesToAllocate: what is picked, and whether the plugin was asked', async () => {
  const asked: [string[], string[], number][] = [];
  const plugin: ResourceDeviceState['preferred'] = (available, mustInclude, size) => {
    asked.push([available, mustInclude, size]);
    return Promise.resolve([...available].reverse().slice(0, size));
  };
  const cases: [string, ReturnType<typeof req>, Partial<ResourceDeviceState>, string[], string[] | null][] = [
    ['reusable first', req(1, [1], ['g0']), {}, ['g0'], null],
    [
      'inside the affinity, exactly enough: the plugin is not asked',
      req(2, [1]),
      { preferred: plugin },
      ['g2', 'g3'],
      null,
    ],
    [
      'inside the affinity, more than needed: the plugin chooses',
      req(1, [1]),
      { preferred: plugin },
      ['g3'],
      ['g3'],
    ],
    ['no affinity: the plugin chooses among all', req(1, null), { preferred: plugin }, ['x'], ['x']],
    ['no preference offered: first fit', req(3, [0]), {}, ['g0', 'g1', 'g2'], null],
    ['in use elsewhere', req(2, [0]), { inUse: new Set(['g0']) }, ['g1', 'g2'], null],
  ];
  for (const [name, r, over, picked, preferred] of cases) {
    assert.deepEqual(await devicesToAllocate(r, state(over)), { picked, preferred }, name);
  }
  assert.deepEqual(asked[0], [['g2', 'g3'], [], 1], 'asked with the aligned candidates');
  assert.equal(await devicesToAllocate(req(2, null), state({ existing: 2 })), null, 'already held');
  assert.deepEqual(
    devicesByNuma(['g0', 'g2', 'x'], devices),
    new Map([
      [0, ['g0']],
      [1, ['g2']],
      [-1, ['x']],
    ]),
  );
});

test("devicesToAllocate: the kubelet's error texts", async () => {
  const cases: [Partial<ResourceDeviceState>, number, RegExp][] = [
    [{ healthy: undefined }, 1, /^cannot allocate unregistered device r$/],
    [{ healthy: new Set() }, 1, /^no healthy devices present; cannot allocate unhealthy devices r$/],
    [{}, 6, /^requested number of devices unavailable for r\. Requested: 6, Available: 5$/],
    [{ existing: 1 }, 2, /changed request for resource "r" from 1 to 2$/],
  ];
  for (const [over, required, message] of cases)
    await assert.rejects(devicesToAllocate(req(required, null), state(over)), { message });
});
