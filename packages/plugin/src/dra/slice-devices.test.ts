import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeIndex, encodeIndex, indexLength } from './resource-slices.js';
import {
  deviceCounterSet,
  draDeviceName,
  evenPartitions,
  partitionSliceDevices,
  sliceDevice,
  wholeSecondsUtc,
} from './slice-devices.js';
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

describe('partitions (KEP-4815)', () => {
  const gpu: PluginDevice = {
    id: 'gpu-0',
    health: 'Healthy',
    reason: null,
    since: '2026-01-01T00:00:00.000Z',
    numaNodes: [1],
    deviceNodes: [],
  } as unknown as PluginDevice;

  it('evenPartitions: a whole, halves and quarters of every counter, with a partition attribute', () => {
    const parts = evenPartitions({ memory: '40Gi', cores: '8' }, [1, 2, 4])(gpu);
    assert.deepEqual(
      parts.map((p) => [p.suffix, p.consumes, p.attributes?.['partition']]),
      [
        ['whole', { memory: '40Gi', cores: '8' }, { string: 'whole' }],
        ['half-0', { memory: '20Gi', cores: '4' }, { string: 'half' }],
        ['half-1', { memory: '20Gi', cores: '4' }, { string: 'half' }],
        ['quarter-0', { memory: '10Gi', cores: '2' }, { string: 'quarter' }],
        ['quarter-1', { memory: '10Gi', cores: '2' }, { string: 'quarter' }],
        ['quarter-2', { memory: '10Gi', cores: '2' }, { string: 'quarter' }],
        ['quarter-3', { memory: '10Gi', cores: '2' }, { string: 'quarter' }],
      ],
    );
    assert.throws(() => evenPartitions({ memory: '1Gi' }, [0]), /positive integer/);
  });

  it('a partition is the device’s entry under its own name, consuming the device’s counter set', () => {
    const options = {
      counters: () => ({ memory: '40Gi' }),
      partitions: evenPartitions({ memory: '40Gi' }, [2]),
    };
    const base = sliceDevice(gpu, { replicas: 1, taint: null, faulted: () => false });
    const parts = partitionSliceDevices(base, gpu, options);
    assert.deepEqual(parts[1], {
      name: 'gpu-0-half-1',
      attributes: {
        id: { string: 'gpu-0' },
        'resource.kubernetes.io/numaNode': { int: 1 },
        partition: { string: 'half' },
      },
      consumesCounters: [{ counterSet: 'gpu-0', counters: { memory: { value: '20Gi' } } }],
    });
    assert.deepEqual(deviceCounterSet(gpu, options), {
      name: 'gpu-0',
      counters: { memory: { value: '40Gi' } },
    });
  });

  it('a shared device: allowMultipleAllocations and a capacity with its request policy', () => {
    const device = sliceDevice(gpu, {
      replicas: 1,
      taint: null,
      faulted: () => false,
      allowMultipleAllocations: true,
      capacity: () => ({
        memory: { value: '40Gi', requestPolicy: { default: '10Gi', validValues: ['10Gi', '20Gi'] } },
      }),
    });
    assert.equal(device.allowMultipleAllocations, true);
    assert.deepEqual(device.capacity, {
      memory: { value: '40Gi', requestPolicy: { default: '10Gi', validValues: ['10Gi', '20Gi'] } },
    });
  });
});
