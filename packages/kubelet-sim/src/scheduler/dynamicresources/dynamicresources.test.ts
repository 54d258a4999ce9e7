// The DynamicResources plugin for one pod on one node: what gets written into the claims, and the
// Pending messages the scheduler would show.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { DeviceClass, DeviceRequest, Pod, ResourceClaim, ResourceSlice } from '../types.js';
import { allocateClaims, RESOURCE_CLAIM_FINALIZER, type AllocateClaimsInput } from './dynamicresources.js';

const DRIVER = 'gpu.example.com';
const PREEMPTION = 'preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.';

const gpuClass: DeviceClass = {
  metadata: { name: 'gpu' },
  spec: { selectors: [{ cel: { expression: `device.driver == "${DRIVER}"` } }] },
};

const slices: ResourceSlice[] = [
  {
    metadata: { name: 'node-1-gpus' },
    spec: {
      driver: DRIVER,
      pool: { name: 'node-1', generation: 1, resourceSliceCount: 1 },
      nodeName: 'node-1',
      devices: [0, 1].map((i) => ({ name: `gpu-${i}`, attributes: { index: { int: i } } })),
    },
  },
];

const pod: Pod = {
  metadata: { name: 'train', namespace: 'default', uid: 'pod-uid' },
  spec: { resourceClaims: [{ name: 'gpu', resourceClaimName: 'train-gpu' }] },
};

const claim = (
  name: string,
  requests: DeviceRequest[],
  extra: Partial<ResourceClaim> = {},
): ResourceClaim => ({
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: { devices: { requests } },
  ...extra,
});

const oneGpu = claim('train-gpu', [{ name: 'gpu', exactly: { deviceClassName: 'gpu' } }]);

const input = (over: Partial<AllocateClaimsInput> = {}): AllocateClaimsInput => ({
  pod,
  nodeName: 'node-1',
  nodeLabels: {},
  claims: [oneGpu],
  slices,
  classes: [gpuClass],
  allocated: [],
  taintRules: [],
  ...over,
});

describe('allocateClaims: success', () => {
  test('writes status.allocation, reservedFor and the finalizer', () => {
    const result = allocateClaims(input());
    assert.equal(result.ok, true);
    if (!result.ok) return;
    const allocation = {
      devices: { results: [{ request: 'gpu', driver: DRIVER, pool: 'node-1', device: 'gpu-0' }] },
      nodeSelector: {
        nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-1'] }] }],
      },
    };
    assert.deepEqual(result.allocations.get('uid-train-gpu'), allocation);
    assert.deepEqual(result.claims[0]?.status, {
      allocation,
      reservedFor: [{ resource: 'pods', name: 'train', uid: 'pod-uid' }],
    });
    assert.deepEqual(result.claims[0]?.metadata.finalizers, [RESOURCE_CLAIM_FINALIZER]);
    assert.equal(oneGpu.status, undefined, 'the input claim is not modified');
  });

  test('an allocated claim shared with another pod keeps its allocation and gains a consumer', () => {
    const shared = allocateClaims(input());
    assert.ok(shared.ok);
    if (!shared.ok) return;
    const other: Pod = { ...pod, metadata: { name: 'eval', namespace: 'default', uid: 'eval-uid' } };
    const again = allocateClaims(input({ pod: other, claims: shared.claims, allocated: shared.claims }));
    assert.ok(again.ok);
    if (!again.ok) return;
    assert.deepEqual(again.allocations.get('uid-train-gpu'), shared.allocations.get('uid-train-gpu'));
    assert.deepEqual(
      again.claims[0]?.status?.reservedFor?.map((r) => r.name),
      ['train', 'eval'],
    );
  });

  test("devices of other pods' claims are in use, adminAccess results are not", () => {
    const taken = allocateClaims(
      input({
        claims: [claim('other', [{ name: 'gpu', exactly: { deviceClassName: 'gpu' } }])],
        pod: undefined,
      }),
    );
    assert.ok(taken.ok);
    if (!taken.ok) return;
    const next = allocateClaims(input({ allocated: taken.claims }));
    assert.ok(next.ok && next.allocations.get('uid-train-gpu')?.devices.results?.[0]?.device === 'gpu-1');

    const admin = structuredClone(taken.claims);
    admin[0]!.status!.allocation!.devices.results![0]!.adminAccess = true;
    const shared = allocateClaims(input({ allocated: admin }));
    assert.ok(shared.ok && shared.allocations.get('uid-train-gpu')?.devices.results?.[0]?.device === 'gpu-0');
  });

  test('a DeviceTaintRule with NoSchedule steers allocation away, a toleration lets it back', () => {
    const rule = {
      metadata: { name: 'gpu-0-maintenance' },
      spec: {
        deviceSelector: { device: 'gpu-0' },
        taint: { key: 'maintenance', effect: 'NoSchedule' as const },
      },
    };
    const tainted = allocateClaims(input({ taintRules: [rule] }));
    assert.ok(
      tainted.ok && tainted.allocations.get('uid-train-gpu')?.devices.results?.[0]?.device === 'gpu-1',
    );

    const tolerant = claim('train-gpu', [
      {
        name: 'gpu',
        exactly: {
          deviceClassName: 'gpu',
          selectors: [{ cel: { expression: `device.attributes["${DRIVER}"].index == 0` } }],
          tolerations: [{ key: 'maintenance', operator: 'Exists', effect: 'NoSchedule' }],
        },
      },
    ]);
    const tolerated = allocateClaims(input({ claims: [tolerant], taintRules: [rule] }));
    assert.ok(tolerated.ok);
    if (tolerated.ok) {
      assert.deepEqual(tolerated.allocations.get('uid-train-gpu')?.devices.results?.[0], {
        request: 'gpu',
        driver: DRIVER,
        pool: 'node-1',
        device: 'gpu-0',
        tolerations: [{ key: 'maintenance', operator: 'Exists', effect: 'NoSchedule' }],
      });
    }
  });

  test('a pod without claims needs nothing', () => {
    const result = allocateClaims(input({ pod: { ...pod, spec: {} } }));
    assert.deepEqual(result, { ok: true, allocations: new Map(), claims: [] });
  });
});

describe('allocateClaims: Pending messages', () => {
  const cases: { name: string; over: Partial<AllocateClaimsInput>; reason: string; message: string }[] = [
    {
      name: 'no device left',
      over: {
        claims: [claim('train-gpu', [{ name: 'gpu', exactly: { deviceClassName: 'gpu', count: 3 } }])],
      },
      reason: 'Unschedulable',
      message: `0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, ${PREEMPTION}`,
    },
    {
      name: 'every device tainted',
      over: {
        taintRules: [
          {
            metadata: { name: 'all' },
            spec: { deviceSelector: { driver: DRIVER }, taint: { key: 'x', effect: 'NoExecute' } },
          },
        ],
      },
      reason: 'Unschedulable',
      message: `0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, ${PREEMPTION}`,
    },
    {
      name: 'device class missing',
      over: { classes: [] },
      reason: 'Unschedulable',
      message: `0/1 nodes are available: request gpu: device class gpu does not exist. no new claims to deallocate, ${PREEMPTION}`,
    },
    {
      name: 'claim missing',
      over: { claims: [] },
      reason: 'Unschedulable',
      message: `0/1 nodes are available: resourceclaim.resource.k8s.io "train-gpu" not found. no new claims to deallocate, ${PREEMPTION}`,
    },
    {
      name: 'template claim not created yet',
      over: {
        pod: { ...pod, spec: { resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }] } },
      },
      reason: 'Unschedulable',
      message: `0/1 nodes are available: pod "default/train": ResourceClaim not created yet. no new claims to deallocate, ${PREEMPTION}`,
    },
    {
      name: 'generated claim owned by another pod',
      over: {
        pod: {
          ...pod,
          spec: { resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }] },
          status: { resourceClaimStatuses: [{ name: 'gpu', resourceClaimName: 'train-gpu' }] },
        },
      },
      reason: 'Unschedulable',
      message: `0/1 nodes are available: ResourceClaim default/train-gpu was not created for Pod default/train (Pod is not owner). no new claims to deallocate, ${PREEMPTION}`,
    },
    {
      name: 'claim allocated for another node',
      over: {
        claims: [
          {
            ...oneGpu,
            status: {
              allocation: {
                devices: { results: [{ request: 'gpu', driver: DRIVER, pool: 'node-2', device: 'gpu-0' }] },
                nodeSelector: {
                  nodeSelectorTerms: [
                    { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-2'] }] },
                  ],
                },
              },
              reservedFor: [{ resource: 'pods', name: 'other', uid: 'other-uid' }],
            },
          },
        ],
      },
      reason: 'Unschedulable',
      message: `0/1 nodes are available: 1 resourceclaim not available on the node. still not schedulable, ${PREEMPTION}`,
    },
    {
      name: 'a capacity request no device has (consumable capacity)',
      over: {
        claims: [
          claim('train-gpu', [
            { name: 'gpu', exactly: { deviceClassName: 'gpu', capacity: { requests: { memory: '10Gi' } } } },
          ]),
        ],
      },
      reason: 'Unschedulable',
      message: `0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, ${PREEMPTION}`,
    },
    {
      name: 'CEL runtime error',
      over: {
        claims: [
          claim('train-gpu', [
            {
              name: 'gpu',
              exactly: {
                deviceClassName: 'gpu',
                selectors: [{ cel: { expression: `device.attributes["${DRIVER}"].model == "a100"` } }],
              },
            },
          ]),
        ],
      },
      reason: 'SchedulerError',
      message:
        'running "DynamicResources" filter plugin: claim default/train-gpu: selector #0 on device gpu.example.com/node-1/gpu-0: CEL runtime error: no such key: model. consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for optional fields',
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const result = allocateClaims(input(c.over));
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.equal(result.reason, c.reason);
      assert.equal(result.message, c.message);
    });
  }

  test('a claim allocated elsewhere and used by nobody else is deallocated by PostFilter', () => {
    const elsewhere: ResourceClaim = {
      ...oneGpu,
      status: {
        allocation: {
          devices: { results: [{ request: 'gpu', driver: DRIVER, pool: 'node-2', device: 'gpu-0' }] },
          nodeSelector: {
            nodeSelectorTerms: [
              { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-2'] }] },
            ],
          },
        },
      },
    };
    const result = allocateClaims(input({ claims: [elsewhere] }));
    assert.deepEqual(result, {
      ok: false,
      reason: 'Unschedulable',
      message: `0/1 nodes are available: 1 resourceclaim not available on the node. deallocation of ResourceClaim completed, ${PREEMPTION}`,
      reasons: ['resourceclaim not available on the node'],
      deallocate: ['uid-train-gpu'],
    });
  });

  test('never throws on malformed input', () => {
    const broken = claim('train-gpu', [{ name: 'gpu' }]);
    const result = allocateClaims(input({ claims: [broken] }));
    assert.ok(
      !result.ok &&
        result.message.includes('resource claim default/train-gpu, request gpu: unknown request type'),
    );
  });
});
