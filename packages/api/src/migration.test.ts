// clusterMigration: the nodes' extendedResources joined per name — nodes by API, pods with their
// special claims, what is left to move, and what nobody observed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterMigration } from './migration.ts';
import { extendedResourceFixtures } from './testing.ts';

const GPU = 'example.com/gpu';
const CLASS = 'gpu.example.com';

// The GPU's views and pods: a pod holds gpu-0 of the device plugin, or gpu-0 of the driver's pool.
const { view, pod } = extendedResourceFixtures(GPU, { plugin: `${GPU}/gpu-0`, dra: `${CLASS}/pool/gpu-0` });

test('clusterMigration: per name the nodes each API serves, the pods each way and what is left to move', () => {
  const m = clusterMigration([
    {
      node: 'gpu-b',
      extendedResources: {
        [GPU]: view({
          servedBy: 'device-plugin',
          nodeStatus: { capacity: 2, allocatable: 2 },
          deviceClasses: null,
          pods: [pod('ml/b', 'device-plugin')],
        }),
      },
    },
    {
      node: 'dra',
      extendedResources: {
        [GPU]: view({
          servedBy: 'dra',
          deviceClasses: [CLASS],
          deviceClass: CLASS,
          drivers: [CLASS],
          pods: [pod('ml/moved', 'dra', 'ml/moved-extended-resources-x'), pod('ml/new', 'unknown')],
        }),
        [`deviceclass.resource.kubernetes.io/${CLASS}`]: view({
          name: `deviceclass.resource.kubernetes.io/${CLASS}`,
          servedBy: 'dra',
          deviceClasses: [CLASS],
          deviceClass: CLASS,
        }),
      },
    },
    {
      node: 'gpu-a',
      extendedResources: {
        [GPU]: view({
          servedBy: 'device-plugin',
          nodeStatus: { capacity: 8, allocatable: 8 },
          pods: [pod('ml/a1', 'device-plugin'), pod('ml/a2', 'device-plugin')],
        }),
        'example.com/nic': view({ name: 'example.com/nic', servedBy: 'device-plugin' }),
      },
    },
    { node: 'old', extendedResources: undefined },
    { node: 'empty', extendedResources: {} },
  ]);
  assert.deepEqual(m.notObserved, ['old']);
  assert.deepEqual(
    m.resources.map((r) => [r.name, r.implicit, r.mapped]),
    [
      ['example.com/gpu', false, true],
      ['example.com/nic', false, false],
      [`deviceclass.resource.kubernetes.io/${CLASS}`, true, true],
    ],
  );
  const gpu = m.resources[0]!;
  assert.deepEqual(gpu.servedBy, { 'device-plugin': ['gpu-a', 'gpu-b'], dra: ['dra'], none: [] });
  assert.deepEqual(
    gpu.nodes.map((n) => n.node),
    ['dra', 'gpu-a', 'gpu-b'],
  );
  assert.deepEqual(gpu.nodes[0], {
    node: 'dra',
    servedBy: 'dra',
    nodeStatus: null,
    deviceClasses: [CLASS],
    deviceClass: CLASS,
    drivers: [CLASS],
  });
  assert.deepEqual(gpu.deviceClassesUnknown, ['gpu-b']);
  assert.deepEqual(
    gpu.pods.map((p) => [p.node, p.pod, p.via, p.claim]),
    [
      ['dra', 'ml/moved', 'dra', 'ml/moved-extended-resources-x'],
      ['dra', 'ml/new', 'unknown', null],
      ['gpu-a', 'ml/a1', 'device-plugin', null],
      ['gpu-a', 'ml/a2', 'device-plugin', null],
      ['gpu-b', 'ml/b', 'device-plugin', null],
    ],
  );
  assert.deepEqual(gpu.leftToMovePods, ['ml/a1', 'ml/a2', 'ml/b']);
  assert.deepEqual(gpu.leftToMoveNodes, ['gpu-a', 'gpu-b']);
  assert.deepEqual(
    gpu.notHolding.map((p) => p.pod),
    ['ml/new'],
  );
});

test('clusterMigration: no node observed, nothing to join', () => {
  assert.deepEqual(clusterMigration([{ node: 'a', extendedResources: undefined }]), {
    resources: [],
    notObserved: ['a'],
  });
});
