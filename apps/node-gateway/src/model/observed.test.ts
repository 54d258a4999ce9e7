// Another device plugin's resource as the kubelet shows it (observed.ts through buildSnapshot):
// capacity and allocatable from the Node status and PodResources, every device the kubelet names
// with its NUMA node and holder, the unhealthy count the kubelet does not itemise, and the
// resource kept at capacity 0 after its plugin goes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { podresources } from '@plugboard/proto';
import { BuildCache, buildSnapshot, type ResourceInput } from './build.js';
import { summarize } from './summary.js';
import { T0, modelInputs, numaTopology, registeredAtT0, runningPod } from './test-fixtures.js';

const T1 = '2026-01-01T00:00:05.000Z';
const OWN = 'plugboard.example/gpu';
const NV = 'nvidia.com/gpu';

const own: ResourceInput = {
  name: OWN,
  registration: registeredAtT0,
  devices: [{ id: 'g0', health: 'Healthy', reason: null, since: T0, numaNodes: [0], replicaOf: null }],
  reported: null,
};

const base = modelInputs({
  now: T0,
  resources: [own],
  sources: {
    podResources: { status: 'ok', lastSuccess: T0, reason: null },
    kubernetes: { status: 'ok', lastSuccess: T0, reason: null },
  },
});

const node = (capacity: string, allocatable: string): V1Node => ({
  metadata: { name: 'n1' },
  status: {
    capacity: { cpu: '8', memory: '16Gi', 'hugepages-2Mi': '0', [OWN]: '1', [NV]: capacity },
    allocatable: { cpu: '8', memory: '16Gi', 'hugepages-2Mi': '0', [OWN]: '1', [NV]: allocatable },
  },
});
const holder = (ids: string[]): podresources.PodResources => ({
  name: 'train',
  namespace: 'ml',
  cpuIds: [],
  memory: [],
  containers: [
    {
      name: 'main',
      devices: [{ resourceName: NV, deviceIds: ids, topology: numaTopology(1) }],
      cpuIds: [],
      memory: [],
      dynamicResources: [],
    },
  ],
});
const allocatable = (ids: [string, number][]): podresources.AllocatableResourcesResponse => ({
  devices: ids.map(([id, n]) => ({ resourceName: NV, deviceIds: [id], topology: numaTopology(n) })),
  cpuIds: [],
  memory: [],
});
const trainPod = (health: string): V1Pod =>
  runningPod('train', 'ml', {
    allocatedResourcesStatus: [{ name: NV, resources: [{ resourceID: 'nv-3', health }] }],
  });

test("another device plugin's resource: counts from the kubelet, every device it names, the unhealthy it does not", () => {
  // 8 devices; nv-0..nv-4 healthy (nv-3 held by a pod), nv-5..nv-7 unhealthy and free: the kubelet
  // lists only healthy devices in GetAllocatableResources, so 3 are unhealthy and nameless.
  const s = buildSnapshot({
    ...base,
    podResources: {
      pods: [holder(['nv-3'])],
      allocatable: allocatable([0, 1, 2, 3, 4].map((i) => [`nv-${i}`, i < 2 ? 0 : 1])),
    },
    kube: { node: node('8', '5'), pods: [trainPod('Healthy')] },
  });
  assert.deepEqual(Object.keys(s.resources), [OWN, NV], 'cpu, memory, hugepages are not extended resources');
  assert.equal(s.resources[OWN]!.servedBy, 'plugin');
  assert.equal(s.devices[`${OWN}/g0`]!.servedBy, 'plugin');
  const r = s.resources[NV]!;
  assert.equal(r.servedBy, 'device-plugin');
  assert.deepEqual(r.kubelet, {
    capacity: 8,
    allocatable: 5,
    allocated: 1,
    free: 4,
    healthy: 5,
    unhealthy: 3,
  });
  assert.deepEqual(r.apiServer, { capacity: 8, allocatable: 5, staleSince: null });
  assert.deepEqual(r.observed, {
    unhealthy: 3,
    unhealthyNamed: 0,
    note: '3 of 8 unhealthy — the kubelet does not say which unless a pod holds them',
  });
  assert.equal(r.registration.phase, 'registered');
  assert.deepEqual(
    r.deviceKeys,
    [0, 1, 2, 3, 4].map((i) => `${NV}/nv-${i}`),
  );
  const held = s.devices[`${NV}/nv-3`]!;
  assert.deepEqual(
    [held.servedBy, held.health, held.kubeletHealth, held.numaNodes, held.allocation, held.fault],
    ['device-plugin', 'Healthy', 'Healthy', [1], { namespace: 'ml', pod: 'train', container: 'main' }, null],
  );
  assert.deepEqual(s.devices[`${NV}/nv-0`]!.numaNodes, [0]);
  assert.ok(s.numa.nodes['1']!.deviceKeys.includes(`${NV}/nv-3`), 'the NUMA map holds observed devices');
  assert.deepEqual(s.pods['ml/train']!.containers[0]!.devices, { [NV]: [`${NV}/nv-3`] });
  assert.equal(summarize(s).resources[NV]!.servedBy, 'device-plugin');
});

test('a held device the kubelet reports Unhealthy (allocatedResourcesStatus) is named; the plugin leaving then shows as the kubelet shows it', () => {
  const cache = new BuildCache();
  const pr = {
    pods: [holder(['nv-3'])],
    allocatable: allocatable([0, 1, 2].map((i) => [`nv-${i}`, 0])),
  };
  let s = buildSnapshot(
    { ...base, podResources: pr, kube: { node: node('4', '3'), pods: [trainPod('Unhealthy')] } },
    cache,
  );
  const held = s.devices[`${NV}/nv-3`]!;
  assert.equal(held.health, 'Unhealthy');
  assert.match(held.reason!, /allocatedResourcesStatus/);
  assert.equal(held.since, T0);
  assert.deepEqual(s.resources[NV]!.observed, { unhealthy: 1, unhealthyNamed: 1, note: null });
  assert.equal(s.pods['ml/train']!.affectedByUnhealthyDevice, true);

  // The plugin goes: the kubelet marks every device unhealthy at once (none allocatable), keeps the
  // capacity for its grace period, then sets it to 0 and keeps the resource in the Node status.
  const gone = { pods: [], allocatable: allocatable([]) };
  s = buildSnapshot(
    { ...base, now: T1, podResources: gone, kube: { node: node('4', '0'), pods: [] } },
    cache,
  );
  let r = s.resources[NV]!;
  assert.equal(r.servedBy, 'device-plugin', 'still the device plugin PodResources listed before');
  assert.deepEqual([r.kubelet.capacity, r.kubelet.allocatable, r.deviceKeys], [4, 0, []]);
  assert.match(r.observed!.note!, /^4 of 4 unhealthy .* 5-minute grace period/);
  assert.equal(Object.keys(s.devices).filter((k) => k.startsWith(NV)).length, 0, 'no device named');

  s = buildSnapshot(
    { ...base, now: T1, podResources: gone, kube: { node: node('0', '0'), pods: [] } },
    cache,
  );
  r = s.resources[NV]!;
  assert.deepEqual([r.kubelet.capacity, r.apiServer?.capacity, r.registration.phase], [0, 0, 'stopped']);
  assert.match(r.registration.error!, /grace period ended/);

  // A device coming back healthy is seen from this build on.
  s = buildSnapshot(
    {
      ...base,
      now: T1,
      podResources: { pods: [], allocatable: allocatable([['nv-0', 0]]) },
      kube: { node: node('1', '1'), pods: [] },
    },
    cache,
  );
  assert.equal(s.devices[`${NV}/nv-0`]!.since, T1);
});

test('an extended resource only the Node status names is marked node-status; without the Node the capacity is said to be unknown', () => {
  const s = buildSnapshot({
    ...base,
    podResources: { pods: [], allocatable: allocatable([]) },
    kube: {
      node: {
        metadata: { name: 'n1' },
        status: { capacity: { 'example.com/dongle': '2' }, allocatable: { 'example.com/dongle': '2' } },
      },
      pods: [],
    },
  });
  assert.equal(s.resources['example.com/dongle']!.servedBy, 'node-status');
  const noKube = buildSnapshot({
    ...base,
    podResources: { pods: [], allocatable: allocatable([['nv-0', 0]]) },
  });
  assert.equal(noKube.resources[NV]!.apiServer, null);
  assert.match(noKube.resources[NV]!.observed!.note!, /capacity unknown/);
  assert.equal(noKube.resources[NV]!.kubelet.capacity, 1);
});
