import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeIndex, encodeIndex, indexLength } from './resource-slices.js';
import { draDeviceName, sliceDevice, wholeSecondsUtc } from './slice-devices.js';
import type { PluginDevice } from '../types.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

describe('draDeviceName', () => {
  const cases: [id: string, name: string | RegExp][] = [
    ['gpu-0', 'gpu-0'],
    ['vf-12', 'vf-12'],
    ['0000:3b:00.0', /^0000-3b-00-0-[0-9a-f]{6}$/],
    ['ttyUSB0', /^ttyusb0-[0-9a-f]{6}$/],
    ['---', /^dev-[0-9a-f]{6}$/],
    ['x'.repeat(63), 'x'.repeat(63)],
    ['X'.repeat(63), /^x{55}-[0-9a-f]{6}$/],
  ];
  for (const [id, expected] of cases) {
    it(`${id} → ${String(expected)}`, () => {
      const name = draDeviceName(id);
      if (typeof expected === 'string') assert.equal(name, expected);
      else assert.match(name, expected);
      assert.match(name, DNS_LABEL);
      assert.ok(name.length <= 63);
      assert.equal(draDeviceName(id), name, 'stable');
    });
  }
  it('never gives two IDs that differ only in case the same name', () => {
    assert.notEqual(draDeviceName('ttyUSB0'), draDeviceName('ttyusb0'));
    assert.notEqual(draDeviceName('ttyUSB0'), draDeviceName('TTYUSB0'));
  });
});

describe('slice name index (encodeIndex/decodeIndex/getIndexLength)', () => {
  it('pads to five hex digits and widens for more slices', () => {
    assert.equal(indexLength(1), 5);
    assert.equal(indexLength(0x100000), 5);
    assert.equal(indexLength(0x100001), 6);
    assert.equal(encodeIndex(10, 5), '0000a');
    assert.equal(decodeIndex('0000a-gpu.example.com-node-x7k2p', 5), 10);
    assert.equal(decodeIndex('0000a-gpu.example.com-node-x7k2p', 6), -1);
    assert.equal(decodeIndex('gpu-node-x7k2p', 5), -1);
    assert.equal(decodeIndex('0000z-x', 5), -1);
  });
});

describe('sliceDevice', () => {
  const device: PluginDevice = {
    id: 'gpu-3',
    health: 'Unhealthy',
    reason: 'ECC errors',
    since: '2026-11-24T10:00:00.678Z',
    numaNodes: [1, 0],
    replicaOf: null,
    deviceNodes: [],
  };
  it('an unhealthy device gets the configured taint with the transition time in whole seconds', () => {
    const out = sliceDevice(device, {
      replicas: 1,
      taint: { effect: 'NoExecute', key: 'gpu.example.com/unhealthy' },
      faulted: () => true,
    });
    assert.deepEqual(out, {
      name: 'gpu-3',
      attributes: { id: { string: 'gpu-3' }, 'resource.kubernetes.io/numaNode': { int: 1 } },
      taints: [
        {
          key: 'gpu.example.com/unhealthy',
          value: 'fault',
          effect: 'NoExecute',
          timeAdded: '2026-11-24T10:00:00Z',
        },
      ],
    });
    assert.equal(wholeSecondsUtc('2026-11-24T10:00:00.999Z'), '2026-11-24T10:00:00Z');
  });
  it("a fault's own taint follows the driver-wide one, and stands alone without it", () => {
    const faultTaint = {
      key: 'gpu.example.com/fault',
      value: 'simulated',
      effect: 'NoExecute' as const,
      timeAdded: '2026-11-24T10:00:05Z',
    };
    const both = sliceDevice(device, {
      replicas: 1,
      taint: { effect: 'NoSchedule', key: 'gpu.example.com/unhealthy' },
      faulted: () => true,
      faultTaint: () => faultTaint,
    });
    assert.deepEqual(
      both.taints?.map((t) => t.key),
      ['gpu.example.com/unhealthy', 'gpu.example.com/fault'],
    );
    const alone = sliceDevice(device, {
      replicas: 1,
      taint: null,
      faulted: () => true,
      faultTaint: () => faultTaint,
    });
    assert.deepEqual(alone.taints, [faultTaint]);
  });
  it('no taint without the option, and `unhealthy` as the value when the source (not a fault) says so', () => {
    assert.equal(sliceDevice(device, { replicas: 1, taint: null, faulted: () => true }).taints, undefined);
    const taints = sliceDevice(device, {
      replicas: 1,
      taint: { effect: 'NoSchedule', key: 'k/unhealthy' },
      faulted: () => false,
    }).taints;
    assert.equal(taints?.[0]?.value, 'unhealthy');
  });
});
