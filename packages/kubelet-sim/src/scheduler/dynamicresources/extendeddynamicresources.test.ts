// Extended resources backed by DRA in the DynamicResources plugin: which DeviceClass a name maps
// to, the special claim's requests and mappings (upstream's names), and what allocateClaims hands
// back for PreBind.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ContainerRequests } from '@plugboard/topology';
import type { DeviceClass, Pod, ResourceClaim, ResourceSlice } from '../types.js';
import { allocateClaims, RESOURCE_CLAIM_FINALIZER, type AllocateClaimsInput } from './dynamicresources.js';
import {
  createRequestsAndMappings,
  DeviceClassResolver,
  EXTENDED_RESOURCE_CLAIM_ANNOTATION,
  isDRAExtendedResourceName,
  SPECIAL_CLAIM_IN_MEM_NAME,
  type ExtendedResourcePod,
} from './extendeddynamicresources.js';

const DRIVER = 'gpu.example.com';
const GPU = 'example.com/gpu';
const PREEMPTION = 'preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.';

const gpuClass: DeviceClass = {
  metadata: { name: 'gpu', creationTimestamp: '2026-11-01T00:00:00Z' },
  spec: { selectors: [{ cel: { expression: `device.driver == "${DRIVER}"` } }], extendedResourceName: GPU },
};

const slices: ResourceSlice[] = [
  {
    metadata: { name: 'node-1-gpus' },
    spec: {
      driver: DRIVER,
      pool: { name: 'node-1', generation: 1, resourceSliceCount: 1 },
      nodeName: 'node-1',
      devices: [0, 1, 2].map((i) => ({ name: `gpu-${i}` })),
    },
  },
];

const container = (
  name: string,
  requests: Record<string, number>,
  kind: 'app' | 'init' | 'sidecar' = 'app',
): ContainerRequests => ({
  name,
  init: kind !== 'app',
  sidecar: kind === 'sidecar',
  requests: new Map(Object.entries(requests)),
  limits: new Map(Object.entries(requests)),
});

const extPod = (
  containers: ContainerRequests[],
  initContainers: ContainerRequests[] = [],
): ExtendedResourcePod => ({
  name: 'train',
  namespace: 'default',
  uid: 'pod-uid',
  initContainers,
  containers,
});

const podObject: Pod = { metadata: { name: 'train', namespace: 'default', uid: 'pod-uid' }, spec: {} };

const input = (ext: ExtendedResourcePod, over: Partial<AllocateClaimsInput> = {}): AllocateClaimsInput => ({
  pod: podObject,
  nodeName: 'node-1',
  claims: [],
  slices,
  classes: [gpuClass],
  allocated: [],
  extendedResources: { pod: ext, allocatable: new Map([['pods', 110]]) },
  ...over,
});

describe('DeviceClassResolver (the extended resource cache)', () => {
  test('explicit and implicit names; the newest class wins a shared name, then the smaller name', () => {
    const older: DeviceClass = {
      ...gpuClass,
      metadata: { name: 'a-old', creationTimestamp: '2026-01-01T00:00:00Z' },
    };
    const twin: DeviceClass = {
      ...gpuClass,
      metadata: { name: 'b', creationTimestamp: '2026-11-01T00:00:00Z' },
    };
    const resolver = new DeviceClassResolver([gpuClass, older, twin]);
    assert.equal(resolver.getDeviceClass(GPU)?.metadata.name, 'b');
    assert.equal(resolver.getDeviceClass('deviceclass.resource.kubernetes.io/a-old')?.metadata.name, 'a-old');
    assert.equal(resolver.getDeviceClass('example.com/other'), undefined);
  });

  test('isDRAExtendedResourceName', () => {
    assert.equal(isDRAExtendedResourceName(GPU), true);
    assert.equal(isDRAExtendedResourceName('deviceclass.resource.kubernetes.io/gpu'), true);
    assert.equal(isDRAExtendedResourceName('cpu'), false);
    assert.equal(isDRAExtendedResourceName('example.kubernetes.io/gpu'), false);
  });
});

describe('createRequestsAndMappings (upstream request names)', () => {
  const resolver = new DeviceClassResolver([gpuClass]);

  test('container-<index>-request-<index of the resource among the container’s sorted requests>', () => {
    const pod = extPod([
      container('main', { cpu: 1000, [GPU]: 2, memory: 1 }),
      container('side', { [GPU]: 1 }),
    ]);
    const { requests, mappings } = createRequestsAndMappings(pod, new Map([[GPU, 3]]), resolver);
    // main's sorted requests: cpu, example.com/gpu, memory → index 1.
    assert.deepEqual(requests, [
      {
        name: 'container-0-request-1',
        exactly: { deviceClassName: 'gpu', allocationMode: 'ExactCount', count: 2 },
      },
      {
        name: 'container-1-request-0',
        exactly: { deviceClassName: 'gpu', allocationMode: 'ExactCount', count: 1 },
      },
    ]);
    assert.deepEqual(mappings, [
      { containerName: 'main', resourceName: GPU, requestName: 'container-0-request-1' },
      { containerName: 'side', resourceName: GPU, requestName: 'container-1-request-0' },
    ]);
  });

  test('init containers reuse the requests of long-lived containers after them; only the largest extra request stays', () => {
    const pod = extPod(
      [container('main', { [GPU]: 1 })],
      [container('setup', { [GPU]: 1 }, 'init'), container('warm', { [GPU]: 3 }, 'init')],
    );
    const { requests, mappings } = createRequestsAndMappings(pod, new Map([[GPU, 3]]), resolver);
    assert.deepEqual(
      requests.map((r) => [r.name, r.exactly?.count]),
      [
        ['container-1-request-0', 2],
        ['container-2-request-0', 1],
      ],
    );
    assert.deepEqual(mappings, [
      { containerName: 'main', resourceName: GPU, requestName: 'container-2-request-0' },
      { containerName: 'setup', resourceName: GPU, requestName: 'container-2-request-0' },
      { containerName: 'warm', resourceName: GPU, requestName: 'container-2-request-0' },
      { containerName: 'warm', resourceName: GPU, requestName: 'container-1-request-0' },
    ]);
  });
});

describe('allocateClaims with extended resources', () => {
  test('the special claim: owner, annotation, generateName, requests, allocation, reservation, finalizer', () => {
    const result = allocateClaims(input(extPod([container('main', { [GPU]: 2 })])));
    assert.ok(result.ok, JSON.stringify(result));
    if (!result.ok) return;
    assert.deepEqual(result.claims, []);
    const ext = result.extendedResourceClaim;
    assert.ok(ext);
    const { metadata, spec, status } = ext.claim;
    assert.equal(metadata.name, SPECIAL_CLAIM_IN_MEM_NAME);
    assert.equal(metadata.generateName, 'train-extended-resources-');
    assert.deepEqual(metadata.annotations, { [EXTENDED_RESOURCE_CLAIM_ANNOTATION]: 'true' });
    assert.deepEqual(metadata.ownerReferences, [
      { apiVersion: 'v1', kind: 'Pod', name: 'train', uid: 'pod-uid', controller: true },
    ]);
    assert.deepEqual(metadata.finalizers, [RESOURCE_CLAIM_FINALIZER]);
    assert.deepEqual(spec, {
      devices: {
        requests: [
          {
            name: 'container-0-request-0',
            exactly: { deviceClassName: 'gpu', allocationMode: 'ExactCount', count: 2 },
          },
        ],
      },
    });
    assert.deepEqual(
      (status?.allocation?.devices.results ?? []).map(
        (r) => `${r.request} ${r.driver}/${r.pool}/${r.device}`,
      ),
      [
        'container-0-request-0 gpu.example.com/node-1/gpu-0',
        'container-0-request-0 gpu.example.com/node-1/gpu-1',
      ],
    );
    assert.deepEqual(status?.reservedFor, [{ resource: 'pods', name: 'train', uid: 'pod-uid' }]);
    assert.deepEqual(ext.mappings, [
      { containerName: 'main', resourceName: GPU, requestName: 'container-0-request-0' },
    ]);
  });

  test('the implicit name deviceclass.resource.kubernetes.io/<class> maps too', () => {
    const result = allocateClaims(
      input(extPod([container('main', { 'deviceclass.resource.kubernetes.io/gpu': 1 })])),
    );
    assert.ok(result.ok);
    if (!result.ok) return;
    assert.equal(
      result.extendedResourceClaim?.claim.spec.devices.requests?.[0]?.exactly?.deviceClassName,
      'gpu',
    );
  });

  test('user claims and the special claim are allocated together, without sharing a device', () => {
    const user: ResourceClaim = {
      metadata: { name: 'train-gpu', namespace: 'default', uid: 'uid-user' },
      spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu', count: 2 } }] } },
    };
    const result = allocateClaims(
      input(extPod([container('main', { [GPU]: 1 })]), {
        pod: { ...podObject, spec: { resourceClaims: [{ name: 'gpu', resourceClaimName: 'train-gpu' }] } },
        claims: [user],
      }),
    );
    assert.ok(result.ok);
    if (!result.ok) return;
    const devices = [
      ...(result.claims[0]?.status?.allocation?.devices.results ?? []),
      ...(result.extendedResourceClaim?.claim.status?.allocation?.devices.results ?? []),
    ].map((r) => r.device);
    assert.deepEqual(devices, ['gpu-0', 'gpu-1', 'gpu-2']);
  });

  test('a node whose device plugin serves the name: no special claim', () => {
    const result = allocateClaims(
      input(extPod([container('main', { [GPU]: 1 })]), {
        extendedResources: {
          pod: extPod([container('main', { [GPU]: 1 })]),
          allocatable: new Map([[GPU, 4]]),
        },
      }),
    );
    assert.deepEqual(result, { ok: true, allocations: new Map(), claims: [] });
  });

  test('no class maps the name: nothing for this plugin', () => {
    const result = allocateClaims(input(extPod([container('main', { 'example.com/fpga': 1 })])));
    assert.deepEqual(result, { ok: true, allocations: new Map(), claims: [] });
  });

  test('too few devices: Unschedulable, cannot allocate all claims', () => {
    const result = allocateClaims(input(extPod([container('main', { [GPU]: 4 })])));
    assert.deepEqual(result, {
      ok: false,
      reason: 'Unschedulable',
      message: `0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, ${PREEMPTION}`,
      reasons: ['cannot allocate all claims'],
    });
  });

  test('a special claim left by an earlier cycle: Unschedulable, and PostFilter deletes it', () => {
    const stale: ResourceClaim = {
      metadata: {
        name: 'train-extended-resources-x7k2p',
        namespace: 'default',
        uid: 'uid-stale',
        annotations: { [EXTENDED_RESOURCE_CLAIM_ANNOTATION]: 'true' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'train', uid: 'pod-uid', controller: true }],
      },
      spec: {
        devices: { requests: [{ name: 'container-0-request-0', exactly: { deviceClassName: 'gpu' } }] },
      },
    };
    const result = allocateClaims(input(extPod([container('main', { [GPU]: 1 })]), { claims: [stale] }));
    assert.deepEqual(result, {
      ok: false,
      reason: 'Unschedulable',
      message: `0/1 nodes are available: 1 cannot schedule extended resource claim. deletion of ResourceClaim completed, ${PREEMPTION}`,
      reasons: ['cannot schedule extended resource claim'],
      deleteClaims: ['uid-stale'],
    });
  });
});
