// buildDra and summarizeDra as pure functions: slices of a driver the gateway does not run (only
// the newest pool generation counts), a DeviceTaintRule, claim phases, health from the pods'
// allocatedResourcesStatus by CDI ID or driver/pool/device, a pending claim of a pod waiting for
// this node, and the honest counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import type { podresources } from '@plugboard/proto';
import {
  buildDra,
  DraBuildCache,
  podClaimRefs,
  summarizeDra,
  type DraDriverInput,
  type DraSourceDevice,
} from './dra.js';
import type { ResourceClaim, ResourceSlice } from '@plugboard/k8s-api';
import { claimHealthStatus } from '../../test/helpers.js';

const NODE = 'node-a';
const NIC = 'nic.example.com';
const GPU = 'gpu.example.com';
const T0 = '2026-11-24T10:00:00Z';

const slice = (name: string, generation: number, devices: string[], driver = NIC): ResourceSlice => ({
  metadata: { name, creationTimestamp: T0 },
  spec: {
    driver,
    pool: { name: NODE, generation, resourceSliceCount: 1 },
    nodeName: NODE,
    devices: devices.map((d, i) => ({
      name: d,
      attributes: { 'resource.kubernetes.io/numaNode': { int: i % 2 }, model: { string: 'X' } },
      capacity: { bandwidth: { value: '100G' } },
    })),
  },
});

const claim = (
  name: string,
  results: string[],
  extra: Partial<NonNullable<ResourceClaim['status']>> = {},
  requests: NonNullable<NonNullable<ResourceClaim['spec']>['devices']>['requests'] = [
    { name: 'nic', exactly: { deviceClassName: NIC } },
  ],
): ResourceClaim => ({
  metadata: { name, namespace: 'ns', uid: `uid-${name}` },
  spec: { devices: { requests } },
  status: {
    ...(results.length
      ? {
          allocation: {
            devices: {
              results: results.map((d) => ({ request: 'nic', driver: NIC, pool: NODE, device: d })),
            },
          },
        }
      : {}),
    ...extra,
  },
});

const pod = (
  name: string,
  claims: { name: string; claim: string }[],
  status: V1Pod['status'] = {},
): V1Pod => ({
  metadata: { name, namespace: 'ns' },
  spec: {
    nodeName: NODE,
    containers: [{ name: 'c' }],
    resourceClaims: claims.map((c) => ({ name: c.name, resourceClaimName: c.claim })),
  },
  status,
});

test('devices of a driver seen only in slices, a DeviceTaintRule, claims in every phase, health by CDI ID', () => {
  const ready = pod('ready', [{ name: 'net', claim: 'prepared' }], {
    containerStatuses: [
      claimHealthStatus('c', 'net', [
        { resourceID: 'k8s.nic.example.com/nic=uid-prepared-vf-1', health: 'Unhealthy' },
      ]),
    ],
  });
  const waiting: V1Pod = {
    metadata: { name: 'waiting', namespace: 'ns' },
    spec: {
      containers: [{ name: 'c' }],
      resourceClaims: [{ name: 'net', resourceClaimName: 'nothing-fits' }],
    },
    status: {
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: '0/1 nodes are available',
        },
      ],
    },
  };
  const prPods: podresources.PodResources[] = [
    {
      name: 'ready',
      namespace: 'ns',
      containers: [
        {
          name: 'c',
          devices: [],
          cpuIds: [],
          memory: [],
          dynamicResources: [
            {
              claimName: 'prepared',
              claimNamespace: 'ns',
              claimResources: [
                {
                  driverName: NIC,
                  poolName: NODE,
                  deviceName: 'vf-1',
                  cdiDevices: [{ name: 'k8s.nic.example.com/nic=uid-prepared-vf-1' }],
                },
              ],
            },
          ],
        },
      ],
    } as unknown as podresources.PodResources,
  ];
  const dra = buildDra({
    nodeName: NODE,
    drivers: [],
    kube: {
      slices: [slice('old', 1, ['vf-9']), slice('b', 2, ['vf-2', 'vf-3']), slice('a', 2, ['vf-0', 'vf-1'])],
      claims: [
        claim('prepared', ['vf-1'], { reservedFor: [{ resource: 'pods', name: 'ready', uid: 'uid-ready' }] }),
        claim('reserved', ['vf-2'], {
          reservedFor: [{ resource: 'pods', name: 'starting', uid: 'uid-starting' }],
        }),
        claim('allocated', ['vf-3']),
        claim('nothing-fits', []),
        claim('elsewhere', []),
      ],
      taintRules: [
        {
          metadata: { name: 'maintenance' },
          spec: {
            deviceSelector: { driver: NIC, device: 'vf-0' },
            taint: { key: 'maint', effect: 'NoSchedule' },
          },
        },
      ],
      notServed: {},
    },
    pods: [ready],
    waitingPods: [waiting],
    podResources: prPods,
    faults: [],
  });
  const driver = dra.drivers[NIC]!;
  assert.deepEqual(
    { inProcess: driver.inProcess, registration: driver.registration, publication: driver.publication },
    { inProcess: false, registration: null, publication: null },
  );
  assert.deepEqual(driver.pools[NODE], {
    name: NODE,
    generation: 2,
    slices: ['a', 'b'],
    deviceKeys: ['vf-0', 'vf-1', 'vf-2', 'vf-3'].map((d) => `${NIC}/${NODE}/${d}`),
  });
  const vf0 = dra.devices[`${NIC}/${NODE}/vf-0`]!;
  assert.deepEqual(vf0.taints, [
    {
      key: 'maint',
      value: null,
      effect: 'NoSchedule',
      timeAdded: null,
      source: 'DeviceTaintRule maintenance',
    },
  ]);
  assert.deepEqual(
    [vf0.numaNodes, vf0.sourceId, vf0.health, vf0.kubeletHealth],
    [[0], null, 'Unknown', null],
  );
  assert.deepEqual(vf0.capacity, { bandwidth: '100G' });
  assert.equal(vf0.since, T0);
  assert.equal(dra.devices[`${NIC}/${NODE}/vf-1`]!.health, 'Unhealthy', 'from allocatedResourcesStatus');
  assert.equal(dra.devices[`${NIC}/${NODE}/vf-9`], undefined, 'an older generation does not count');
  assert.deepEqual(Object.fromEntries(Object.values(dra.claims).map((c) => [c.name, c.phase])), {
    prepared: 'prepared',
    reserved: 'reserved',
    allocated: 'allocated',
    'nothing-fits': 'pending',
  });
  assert.equal(dra.claims['ns/prepared']!.health, 'Unhealthy');
  assert.equal(dra.claims['ns/reserved']!.health, null);
  assert.equal(dra.claims['ns/nothing-fits']!.pendingReason, '0/1 nodes are available');
  assert.deepEqual(dra.devices[`${NIC}/${NODE}/vf-2`]!.allocations, [
    { claim: 'ns/reserved', request: 'nic', adminAccess: false, pods: ['ns/starting'] },
  ]);
  // usable: published, not Unhealthy, untainted (vf-0 tainted, vf-1 unhealthy); free: usable, unallocated.
  assert.deepEqual(driver.counts, {
    published: 4,
    usable: 2,
    allocated: 3,
    free: 0,
    unhealthy: 1,
    tainted: 1,
  });
  const summary = summarizeDra(dra);
  assert.deepEqual(summary.pendingClaims, ['ns/nothing-fits']);
  assert.deepEqual(summary.deviceClasses[NIC], { allocated: 3, pendingClaims: 1 });
  assert.deepEqual(summary.drivers[NIC], driver.counts);
});

test('an in-process driver: unpublished devices, the health the kubelet was sent, a fault pending until sent', () => {
  const devices: DraSourceDevice[] = ['gpu-0', 'gpu-1'].map((id, i) => ({
    id,
    health: i === 1 ? 'Unhealthy' : 'Healthy',
    reason: i === 1 ? 'fault' : null,
    since: T0,
    numaNodes: [i],
  }));
  const input = (reported: DraDriverInput['reported']): DraDriverInput => ({
    name: GPU,
    poolName: NODE,
    devices,
    sliceDevices: devices.map((d) => ({ name: d.id, attributes: { id: { string: d.id } } })),
    reported,
    registration: { phase: 'registered', registeredAt: T0, error: null },
    healthStreams: reported ? 1 : 0,
    publication: { generation: 1, slices: ['s'], lastPublishedAt: T0, error: null },
  });
  const fault = {
    id: 'f',
    resource: GPU,
    deviceId: 'gpu-1',
    reason: 'fault',
    createdAt: T0,
    expiresAt: null,
    scenarioId: null,
    simulated: true as const,
  };
  const build = (reported: DraDriverInput['reported']) =>
    buildDra({
      nodeName: NODE,
      drivers: [input(reported)],
      kube: { slices: [slice('s', 1, ['gpu-0'], GPU)], claims: [], taintRules: [], notServed: {} },
      pods: [],
      waitingPods: [],
      podResources: null,
      faults: [fault],
    });
  const before = build([{ ...devices[0]! }, { ...devices[1]!, health: 'Healthy' }]);
  const gpu1 = before.devices[`${GPU}/${NODE}/gpu-1`]!;
  assert.deepEqual(
    [gpu1.published, gpu1.sourceId, gpu1.health, gpu1.kubeletHealth, gpu1.fault],
    [false, 'gpu-1', 'Unhealthy', 'Healthy', 'pending'],
  );
  assert.equal(before.drivers[GPU]!.counts.published, 1);
  const sent = build(devices);
  assert.equal(sent.devices[`${GPU}/${NODE}/gpu-1`]!.fault, 'active');
  assert.equal(build(null).devices[`${GPU}/${NODE}/gpu-0`]!.kubeletHealth, null, 'no stream open');
});

test('podClaimRefs: direct claims and template claims, resolved or not yet', () => {
  assert.deepEqual(
    podClaimRefs({
      metadata: { name: 'p', namespace: 'ns' },
      spec: {
        containers: [],
        resourceClaims: [
          { name: 'a', resourceClaimName: 'shared' },
          { name: 'b', resourceClaimTemplateName: 't' },
          { name: 'c', resourceClaimTemplateName: 't' },
        ],
      },
      status: { resourceClaimStatuses: [{ name: 'b', resourceClaimName: 'p-b-x1y2z' }] },
    }),
    [
      { name: 'a', claim: 'ns/shared', fromTemplate: false },
      { name: 'b', claim: 'ns/p-b-x1y2z', fromTemplate: true },
      { name: 'c', claim: null, fromTemplate: true },
    ],
  );
});

test('DraBuildCache: a change to one device rebuilds that device; the rest, and the claims, are the same objects', () => {
  const ids = Array.from({ length: 16 }, (_, i) => `gpu-${i}`);
  const device = (id: string, i: number, health: 'Healthy' | 'Unhealthy' = 'Healthy'): DraSourceDevice => ({
    id,
    health,
    reason: health === 'Unhealthy' ? 'fault' : null,
    since: T0,
    numaNodes: [i % 2],
  });
  const healthy = ids.map((id, i) => device(id, i));
  const sliceDevices = ids.map((id) => ({ name: id, attributes: { id: { string: id } } }));
  const gpuClaim: ResourceClaim = {
    metadata: { name: 'c', namespace: 'ns', uid: 'uid-c' },
    spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: GPU } }] } },
    status: {
      allocation: { devices: { results: [{ request: 'gpu', driver: GPU, pool: NODE, device: 'gpu-3' }] } },
      reservedFor: [{ resource: 'pods', name: 'p', uid: 'uid-p' }],
    },
  };
  const kube = { slices: [slice('s', 1, ids, GPU)], claims: [gpuClaim], taintRules: [], notServed: {} };
  const inputs = (devices: DraSourceDevice[], faults: Parameters<typeof buildDra>[0]['faults'] = []) => ({
    nodeName: NODE,
    drivers: [
      {
        name: GPU,
        poolName: NODE,
        devices,
        sliceDevices,
        reported: devices,
        registration: { phase: 'registered' as const, registeredAt: T0, error: null },
        healthStreams: 1,
        publication: { generation: 1, slices: ['s'], lastPublishedAt: T0, error: null },
      },
    ],
    kube,
    pods: [],
    waitingPods: [],
    podResources: null,
    faults,
  });
  const cache = new DraBuildCache();
  const first = buildDra(inputs(healthy), cache);
  const again = buildDra(inputs(healthy), cache);
  for (const id of ids) {
    const key = `${GPU}/${NODE}/${id}`;
    assert.equal(again.devices[key], first.devices[key], `${id}: same inputs, same object`);
  }
  assert.equal(again.claims['ns/c'], first.claims['ns/c']);

  // gpu-5 faulted: its source device is a new object, every other one is the same.
  const fault = {
    id: 'f',
    resource: GPU,
    deviceId: 'gpu-5',
    reason: 'fault',
    createdAt: T0,
    expiresAt: null,
    scenarioId: null,
    simulated: true as const,
  };
  const faulted = healthy.map((d, i) => (d.id === 'gpu-5' ? device(d.id, i, 'Unhealthy') : d));
  const after = buildDra(inputs(faulted, [fault]), cache);
  const rebuilt = ids.filter(
    (id) => after.devices[`${GPU}/${NODE}/${id}`] !== again.devices[`${GPU}/${NODE}/${id}`],
  );
  assert.deepEqual(rebuilt, ['gpu-5']);
  assert.deepEqual(
    [after.devices[`${GPU}/${NODE}/gpu-5`]!.health, after.devices[`${GPU}/${NODE}/gpu-5`]!.fault],
    ['Unhealthy', 'active'],
  );
  assert.equal(after.claims['ns/c'], again.claims['ns/c'], 'the claim did not change');
  assert.deepEqual(
    after,
    buildDra(inputs(faulted, [fault])),
    'what the cache gives is what a fresh build gives',
  );

  // A DeviceTaintRule selecting gpu-3 rebuilds gpu-3 only.
  const rule = {
    metadata: { name: 'r', creationTimestamp: T0 },
    spec: { deviceSelector: { device: 'gpu-3' }, taint: { key: 'k', effect: 'NoSchedule' as const } },
  };
  const ruled = buildDra({ ...inputs(faulted, [fault]), kube: { ...kube, taintRules: [rule] } }, cache);
  const changed = ids.filter(
    (id) => ruled.devices[`${GPU}/${NODE}/${id}`] !== after.devices[`${GPU}/${NODE}/${id}`],
  );
  assert.deepEqual(changed, ['gpu-3']);
  assert.deepEqual(
    ruled.devices[`${GPU}/${NODE}/gpu-3`]!.taints.map((t) => t.key),
    ['k'],
  );
});
