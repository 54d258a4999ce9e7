// Partitionable devices (KEP-4815) and shared devices (KEP-5075) in the DRA model, built from the
// objects kubelet-sim and a real 1.37 control plane hold (see packages/plugin's
// dra-partitions-capacity.real.test.ts): a counter set in a slice of its own, partitions consuming
// it in another slice of the pool; a device with allowMultipleAllocations and claims' shares. And
// that the stream's JSON Patch carries a change of them like any other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { applyPatchImmutable } from '@plugboard/api';
import type { Device, ResourceClaim, ResourceSlice } from '@plugboard/k8s-api';
import { buildDra, DraBuildCache, summarizeDra, type DraDriverInput } from './dra.js';
import { diffDocuments } from './diff.js';

const NODE = 'node-a';
const PART = 'part.example.com';
const SHARE = 'share.example.com';
const T0 = '2026-11-24T10:00:00Z';
const QUARTERS = ['quarter-0', 'quarter-1', 'quarter-2', 'quarter-3'];

const partition = (suffix: string, memory: string): Device => ({
  name: `gpu-0-${suffix}`,
  attributes: { id: { string: 'gpu-0' }, 'resource.kubernetes.io/numaNode': { int: 0 } },
  consumesCounters: [{ counterSet: 'gpu-0', counters: { memory: { value: memory } } }],
});

const partSlices: ResourceSlice[] = [
  {
    metadata: { name: 'part-counters', creationTimestamp: T0 },
    spec: {
      driver: PART,
      pool: { name: NODE, generation: 1, resourceSliceCount: 2 },
      nodeName: NODE,
      sharedCounters: [{ name: 'gpu-0', counters: { memory: { value: '40Gi' } } }],
    },
  },
  {
    metadata: { name: 'part-devices', creationTimestamp: T0 },
    spec: {
      driver: PART,
      pool: { name: NODE, generation: 1, resourceSliceCount: 2 },
      nodeName: NODE,
      devices: [
        partition('whole', '40Gi'),
        partition('half-0', '20Gi'),
        partition('half-1', '20Gi'),
        ...QUARTERS.map((q) => partition(q, '10Gi')),
      ],
    },
  },
];

const sharedSlice: ResourceSlice = {
  metadata: { name: 'share-devices', creationTimestamp: T0 },
  spec: {
    driver: SHARE,
    pool: { name: NODE, generation: 1, resourceSliceCount: 1 },
    nodeName: NODE,
    devices: [
      {
        name: 'gpu-0',
        allowMultipleAllocations: true,
        capacity: {
          memory: {
            value: '40Gi',
            requestPolicy: { default: '10Gi', validRange: { min: '10Gi', step: '10Gi' } },
          },
        },
      },
    ],
  },
};

const claim = (
  name: string,
  driver: string,
  device: string,
  share?: { shareID: string; consumedCapacity: Record<string, string> },
): ResourceClaim => ({
  metadata: { name, namespace: 'ns', uid: `uid-${name}` },
  spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: driver } }] } },
  status: {
    allocation: {
      devices: { results: [{ request: 'gpu', driver, pool: NODE, device, ...share }] },
    },
    reservedFor: [{ resource: 'pods', name, uid: `uid-pod-${name}` }],
  },
});

const pod = (name: string): V1Pod => ({
  metadata: { name, namespace: 'ns' },
  spec: {
    nodeName: NODE,
    containers: [{ name: 'c' }],
    resourceClaims: [{ name: 'gpu', resourceClaimName: name }],
  },
  status: { phase: 'Running' },
});

const SHARE_A = { shareID: '6f1c2a9e-0000-4000-8000-00000000000a', consumedCapacity: { memory: '20Gi' } };
const SHARE_B = { shareID: '6f1c2a9e-0000-4000-8000-00000000000b', consumedCapacity: { memory: '10Gi' } };

const build = (claims: ResourceClaim[], cache: DraBuildCache | null = null) =>
  buildDra(
    {
      nodeName: NODE,
      drivers: [],
      kube: { slices: [...partSlices, sharedSlice], claims, taintRules: [], notServed: {} },
      pods: claims.map((c) => pod(c.metadata.name!)),
      waitingPods: [],
      podResources: null,
      faults: [],
    },
    cache,
  );

test('a counter set from its own slice, the partitions consuming it, used and left from the allocated ones', () => {
  const dra = build([claim('qa', PART, 'gpu-0-quarter-0'), claim('qb', PART, 'gpu-0-quarter-2')]);
  const pool = dra.drivers[PART]!.pools[NODE]!;
  assert.deepEqual(pool.slices, ['part-counters', 'part-devices']);
  assert.deepEqual(pool.counterSets, {
    'gpu-0': {
      name: 'gpu-0',
      slice: 'part-counters',
      counters: { memory: { capacity: '40Gi', used: '20Gi', left: '20Gi' } },
      deviceKeys: ['whole', 'half-0', 'half-1', ...QUARTERS].map((s) => `${PART}/${NODE}/gpu-0-${s}`),
    },
  });
  const q0 = dra.devices[`${PART}/${NODE}/gpu-0-quarter-0`]!;
  assert.deepEqual(q0.consumesCounters, [{ counterSet: 'gpu-0', counters: { memory: '10Gi' } }]);
  assert.deepEqual(
    q0.allocations.map((a) => [a.claim, a.pods]),
    [['ns/qa', ['ns/qa']]],
  );
  assert.equal(q0.allowMultipleAllocations, undefined, 'a partition is not shared');
  assert.equal(q0.sharedCapacity, undefined);
  // Free counts only what the scheduler could still give with 20Gi left: the two free quarters and
  // both halves (counters are all the API knows of a layout), not the whole (40Gi).
  assert.deepEqual(dra.drivers[PART]!.counts, {
    published: 7,
    usable: 7,
    allocated: 2,
    free: 4,
    unhealthy: 0,
    tainted: 0,
  });
  assert.deepEqual(summarizeDra(dra).drivers[PART], dra.drivers[PART]!.counts);
});

test('a pool with no counter sets has no counterSets field; a device without partitions no consumesCounters', () => {
  const dra = build([]);
  assert.equal('counterSets' in dra.drivers[SHARE]!.pools[NODE]!, false);
  assert.equal('consumesCounters' in dra.devices[`${SHARE}/${NODE}/gpu-0`]!, false);
  assert.deepEqual(dra.drivers[PART]!.pools[NODE]!.counterSets?.['gpu-0']?.counters, {
    memory: { capacity: '40Gi', used: '0', left: '40Gi' },
  });
  assert.equal(dra.drivers[PART]!.counts.free, 7);
});

test('a shared device: each claim’s share ID and consumed capacity, capacity used and left, the request policy', () => {
  const dra = build([claim('sa', SHARE, 'gpu-0', SHARE_A), claim('sb', SHARE, 'gpu-0', SHARE_B)]);
  const d = dra.devices[`${SHARE}/${NODE}/gpu-0`]!;
  assert.equal(d.allowMultipleAllocations, true);
  assert.deepEqual(d.capacity, { memory: '40Gi' });
  assert.deepEqual(d.capacityRequestPolicy, {
    memory: { default: '10Gi', validRange: { min: '10Gi', step: '10Gi' } },
  });
  assert.deepEqual(
    d.allocations.map((a) => [a.claim, a.shareID, a.consumedCapacity, a.pods]),
    [
      ['ns/sa', SHARE_A.shareID, { memory: '20Gi' }, ['ns/sa']],
      ['ns/sb', SHARE_B.shareID, { memory: '10Gi' }, ['ns/sb']],
    ],
  );
  assert.deepEqual(d.sharedCapacity, { memory: { capacity: '40Gi', used: '30Gi', left: '10Gi' } });
  assert.deepEqual(
    dra.claims['ns/sa']!.devices.map((x) => [x.device, x.shareID, x.consumedCapacity]),
    [['gpu-0', SHARE_A.shareID, { memory: '20Gi' }]],
  );
  assert.equal(dra.drivers[SHARE]!.counts.allocated, 1, 'one device, however many shares');
});

test('a shared partition charges its counters once, however many claims share it', () => {
  const sharedParts: ResourceSlice = {
    ...partSlices[1]!,
    spec: {
      ...partSlices[1]!.spec,
      devices: partSlices[1]!.spec.devices!.map((d) => ({ ...d, allowMultipleAllocations: true })),
    },
  };
  const dra = buildDra({
    nodeName: NODE,
    drivers: [],
    kube: {
      slices: [partSlices[0]!, sharedParts],
      claims: [
        claim('a', PART, 'gpu-0-half-0', { shareID: 'share-a', consumedCapacity: {} }),
        claim('b', PART, 'gpu-0-half-0', { shareID: 'share-b', consumedCapacity: {} }),
      ],
      taintRules: [],
      notServed: {},
    },
    pods: [],
    waitingPods: [],
    podResources: null,
    faults: [],
  });
  assert.deepEqual(dra.drivers[PART]!.pools[NODE]!.counterSets?.['gpu-0']?.counters, {
    memory: { capacity: '40Gi', used: '20Gi', left: '20Gi' },
  });
});

test('an in-process partitioned driver: each partition is its source device (health, source ID)', () => {
  const gpu = { id: 'gpu-0', health: 'Unhealthy' as const, reason: 'xid 79', since: T0, numaNodes: [0] };
  const driver: DraDriverInput = {
    name: PART,
    poolName: NODE,
    devices: [gpu],
    sliceDevices: partSlices[1]!.spec.devices!,
    reported: [gpu],
    registration: { phase: 'registered', registeredAt: T0, error: null },
    healthStreams: 1,
    publication: {
      generation: 1,
      slices: ['part-counters', 'part-devices'],
      lastPublishedAt: T0,
      error: null,
    },
  };
  const dra = buildDra({
    nodeName: NODE,
    drivers: [driver],
    kube: { slices: partSlices, claims: [], taintRules: [], notServed: {} },
    pods: [],
    waitingPods: [],
    podResources: null,
    faults: [],
  });
  const parts = Object.values(dra.devices);
  assert.equal(parts.length, 7);
  for (const p of parts) {
    assert.deepEqual(
      [p.sourceId, p.health, p.kubeletHealth, p.reason],
      ['gpu-0', 'Unhealthy', 'Unhealthy', 'xid 79'],
    );
  }
});

test('the stream’s JSON Patch carries a new share and the counters it uses; the cache rebuilds only what changed', () => {
  const cache = new DraBuildCache();
  const before = build([claim('qa', PART, 'gpu-0-quarter-0'), claim('sa', SHARE, 'gpu-0', SHARE_A)], cache);
  cache.adopt(before);
  const after = build(
    [
      claim('qa', PART, 'gpu-0-quarter-0'),
      claim('qb', PART, 'gpu-0-half-1'),
      claim('sa', SHARE, 'gpu-0', SHARE_A),
      claim('sb', SHARE, 'gpu-0', SHARE_B),
    ],
    cache,
  );
  assert.equal(
    after.devices[`${PART}/${NODE}/gpu-0-quarter-0`],
    before.devices[`${PART}/${NODE}/gpu-0-quarter-0`],
    'an unchanged partition is the same object',
  );
  const ops = diffDocuments(before, after);
  assert.ok(
    ops.some((o) => o.path === `/drivers/${PART}/pools/${NODE}/counterSets/gpu-0/counters/memory/used`),
    JSON.stringify(ops),
  );
  assert.deepEqual(applyPatchImmutable(before, ops), after);
  const shared = after.devices[`${SHARE}/${NODE}/gpu-0`]!;
  assert.deepEqual(shared.sharedCapacity?.['memory'], { capacity: '40Gi', used: '30Gi', left: '10Gi' });
  assert.deepEqual(after.drivers[PART]!.pools[NODE]!.counterSets?.['gpu-0']?.counters['memory'], {
    capacity: '40Gi',
    used: '30Gi',
    left: '10Gi',
  });
});
