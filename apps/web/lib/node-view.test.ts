import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeSnapshot } from '@plugboard/api';
import { makeSnapshot } from '../test/make-snapshot';
import { blastRadius, deviceHistory, explainAllocatable, groupByNuma, podFootprint } from './node-view';
import { formatIdRanges } from './format';

const R = 'plugboard.example/gpu';

function failDevice(node: NodeSnapshot, key: string, faultId?: string): NodeSnapshot {
  const d = node.devices[key]!;
  const next = {
    ...node,
    devices: {
      ...node.devices,
      [key]: {
        ...d,
        health: 'Unhealthy' as const,
        kubeletHealth: 'Unhealthy' as const,
        reason: 'xid 79',
        fault: faultId ? ('active' as const) : null,
        faulted: !!faultId,
      },
    },
  };
  if (faultId) {
    next.faults = {
      [faultId]: {
        id: faultId,
        resource: d.resource,
        deviceId: d.replicaOf ?? d.id,
        reason: 'test',
        createdAt: 'x',
        expiresAt: null,
        scenarioId: null,
        simulated: true,
        state: 'active',
        stateReason: null,
      },
    };
  }
  return next;
}

describe('groupByNuma', () => {
  it('puts every device under its NUMA node, in resource order, with CPU IDs', () => {
    const node = makeSnapshot({ devices: 8, numaNodes: 2, pods: 3 });
    const groups = groupByNuma(node);
    assert.deepEqual(
      groups.map((g) => g.key),
      ['0', '1'],
    );
    assert.deepEqual(
      groups[0]!.resources[0]!.tiles.map((t) => t.id),
      ['dev-0', 'dev-1', 'dev-2', 'dev-3'],
    );
    assert.deepEqual(
      groups[1]!.resources[0]!.tiles.map((t) => t.id),
      ['dev-4', 'dev-5', 'dev-6', 'dev-7'],
    );
    assert.equal(groups[1]!.cpuIds[0], 32);
    assert.equal(
      groups.reduce((n, g) => n + g.deviceCount, 0),
      8,
    );
  });

  it('collapses sharing replicas into one tile per physical device', () => {
    const node = makeSnapshot({ devices: 16, numaNodes: 1, pods: 0, replicas: 4 });
    const [g] = groupByNuma(node);
    assert.equal(g!.resources[0]!.tiles.length, 4);
    assert.deepEqual(
      g!.resources[0]!.tiles[0]!.deviceKeys,
      [0, 1, 2, 3].map((r) => `${R}/dev-0::${r}`),
    );
    assert.equal(g!.deviceCount, 16);
  });

  it('never drops a device: one without NUMA affinity or missing from the topology still appears', () => {
    const node = makeSnapshot({ devices: 4, numaNodes: 1, pods: 0 });
    node.devices[`${R}/dev-3`] = { ...node.devices[`${R}/dev-3`]!, numaNodes: [] };
    node.devices[`${R}/dev-2`] = { ...node.devices[`${R}/dev-2`]!, numaNodes: [7] };
    const groups = groupByNuma(node);
    assert.deepEqual(
      groups.map((g) => g.key),
      ['0', '7', 'none'],
    );
    assert.equal(groups.find((g) => g.key === 'none')!.label, 'No NUMA affinity');
    assert.equal(
      groups.reduce((n, g) => n + g.deviceCount, 0),
      4,
    );
  });

  it('counts unhealthy devices per NUMA node', () => {
    const node = failDevice(makeSnapshot({ devices: 4, numaNodes: 2, pods: 0 }), `${R}/dev-3`);
    const groups = groupByNuma(node);
    assert.deepEqual(
      groups.map((g) => g.unhealthyCount),
      [0, 1],
    );
  });
});

describe('blastRadius', () => {
  it('lists the pods holding the given devices, once each', () => {
    const node = makeSnapshot({ devices: 8, numaNodes: 2, pods: 4, devicesPerPod: 2 });
    const hit = blastRadius(node, [`${R}/dev-0`, `${R}/dev-1`, `${R}/dev-2`]);
    assert.deepEqual(
      hit.map((p) => p.key),
      ['batch/pod-1', 'ml/pod-0'],
    );
    assert.deepEqual(
      blastRadius(node, [`${R}/dev-7`]).map((p) => p.key),
      ['batch/pod-3'],
    );
  });

  it('a fault on a shared device hits every pod on any of its replicas', () => {
    const node = makeSnapshot({ devices: 8, numaNodes: 1, pods: 3, replicas: 4 });
    // pods 0..2 hold dev-0::0, ::1, ::2
    assert.deepEqual(
      blastRadius(node, [`${R}/dev-0::3`])
        .map((p) => p.key)
        .sort(),
      ['batch/pod-1', 'ml/pod-0', 'ml/pod-2'],
    );
  });

  it('is empty for free devices and unknown keys', () => {
    const node = makeSnapshot({ devices: 4, numaNodes: 1, pods: 1 });
    assert.deepEqual(blastRadius(node, [`${R}/dev-3`, 'nope/x']), []);
  });
});

describe('explainAllocatable and deviceHistory', () => {
  it('explains each unhealthy device with its fault and holders', () => {
    const node = failDevice(makeSnapshot({ devices: 4, numaNodes: 1, pods: 2 }), `${R}/dev-1`, 'f1');
    const why = explainAllocatable(node, node.resources[R]!);
    assert.equal(why.length, 1);
    assert.equal(why[0]!.device.id, 'dev-1');
    assert.equal(why[0]!.fault?.id, 'f1');
    assert.deepEqual(why[0]!.heldBy, ['batch/pod-1']);
  });

  it('filters the event ring to one device, newest first', () => {
    const node = makeSnapshot({ devices: 4, numaNodes: 1, pods: 0 });
    const ev = (seq: number, ids: string[], resource: string | null = R) => ({
      seq,
      at: 'x',
      kind: 'health' as const,
      resource,
      deviceIds: ids,
      pod: null,
      message: `e${seq}`,
    });
    node.events = [
      ev(1, ['dev-1']),
      ev(2, ['dev-2']),
      ev(3, ['dev-1', 'dev-2']),
      ev(4, ['dev-1'], 'other/res'),
      ev(5, ['dev-1'], null),
    ];
    assert.deepEqual(
      deviceHistory(node, `${R}/dev-1`).map((e) => e.seq),
      [5, 3, 1],
    );
  });
});

describe('formatIdRanges', () => {
  it('compresses CPU lists', () => {
    assert.equal(formatIdRanges([3, 0, 1, 2, 8, 9, 11]), '0-3, 8-9, 11');
    assert.equal(formatIdRanges([]), 'none');
  });
});

describe('podFootprint', () => {
  it('maps a pod to the tiles of the physical devices it holds', () => {
    const node = makeSnapshot({ devices: 8, numaNodes: 1, pods: 3, replicas: 4 });
    assert.deepEqual([...podFootprint(node, 'batch/pod-1')], [`${R}/dev-0`]);
    assert.deepEqual(
      [...podFootprint(makeSnapshot({ devices: 8, numaNodes: 2, pods: 2, devicesPerPod: 3 }), 'batch/pod-1')],
      [`${R}/dev-3`, `${R}/dev-4`, `${R}/dev-5`],
    );
    assert.equal(podFootprint(node, 'nope/x').size, 0);
  });
});
