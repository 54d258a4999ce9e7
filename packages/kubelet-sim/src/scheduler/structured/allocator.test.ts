// The stable allocator, table-driven: allocation modes, prioritized lists, matchAttribute, admin
// access, taints, counters, pools and node selection, and the errors it reports.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type {
  Device,
  DeviceAttribute,
  DeviceClass,
  DeviceConstraint,
  DeviceRequest,
  ExactDeviceRequest,
  ResourceClaim,
  ResourceSlice,
} from '../types.js';
import { Allocator, type AllocateOutcome } from './allocator.js';
import { applyDeviceTaintRules } from './device-taint-rules.js';

const DRIVER = 'gpu.example.com';
const NODE = { name: 'node-1', labels: { zone: 'a' } };
const NUMA = 'resource.kubernetes.io/numaNode';

const gpu = (
  name: string,
  attributes: Record<string, DeviceAttribute> = {},
  extra: Partial<Device> = {},
): Device => ({
  name,
  attributes,
  ...extra,
});

function slice(
  name: string,
  devices: Device[],
  opts: Partial<ResourceSlice['spec']> & { generation?: number; count?: number; poolName?: string } = {},
): ResourceSlice {
  const { generation = 1, count = 1, poolName = 'node-1', ...spec } = opts;
  return {
    metadata: { name },
    spec: {
      driver: DRIVER,
      pool: { name: poolName, generation, resourceSliceCount: count },
      ...(spec.allNodes || spec.nodeSelector || spec.perDeviceNodeSelection || spec.sharedCounters
        ? {}
        : { nodeName: 'node-1' }),
      devices,
      ...spec,
    },
  };
}

const cls = (
  name: string,
  selectors: string[] = [`device.driver == "${DRIVER}"`],
  extra: Partial<DeviceClass['spec']> = {},
): DeviceClass => ({
  metadata: { name },
  spec: { selectors: selectors.map((expression) => ({ cel: { expression } })), ...extra },
});

const exact = (name: string, extra: Partial<ExactDeviceRequest> = {}): DeviceRequest => ({
  name,
  exactly: { deviceClassName: 'gpu', ...extra },
});

const claim = (
  name: string,
  requests: DeviceRequest[],
  extra: { constraints?: DeviceConstraint[]; config?: ResourceClaim['spec']['devices']['config'] } = {},
): ResourceClaim => ({
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: { devices: { requests, ...extra } },
});

const CLASSES = [cls('gpu'), cls('nic', ['device.driver == "nic.example.com"'])];

interface Case {
  name: string;
  claims: ResourceClaim[];
  slices: ResourceSlice[];
  classes?: DeviceClass[];
  allocated?: string[];
  /** Per claim: `request=device` entries, or the outcome kind / an error substring. */
  want: string[][] | 'unsatisfiable' | { error: string } | { failedOnNode: string };
}

const fourGpus = slice('s1', [
  gpu('gpu-0', { model: { string: 'a' }, [NUMA]: { int: 0 } }),
  gpu('gpu-1', { model: { string: 'b' }, [NUMA]: { int: 1 } }),
  gpu('gpu-2', { model: { string: 'b' }, [NUMA]: { int: 1 } }),
  gpu('gpu-3', { model: { string: 'c' } }),
]);

const cases: Case[] = [
  { name: 'exactCount 1', claims: [claim('c', [exact('r')])], slices: [fourGpus], want: [['r=gpu-0']] },
  {
    name: 'exactCount 2',
    claims: [claim('c', [exact('r', { count: 2 })])],
    slices: [fourGpus],
    want: [['r=gpu-0', 'r=gpu-1']],
  },
  {
    name: 'exactCount beyond the devices',
    claims: [claim('c', [exact('r', { count: 5 })])],
    slices: [fourGpus],
    want: 'unsatisfiable',
  },
  {
    name: 'All takes every matching device',
    claims: [
      claim('c', [
        exact('r', {
          allocationMode: 'All',
          selectors: [{ cel: { expression: `device.attributes["${DRIVER}"].model == "b"` } }],
        }),
      ]),
    ],
    slices: [fourGpus],
    want: [['r=gpu-1', 'r=gpu-2']],
  },
  {
    name: 'All fails when one matching device is in use',
    claims: [claim('c', [exact('r', { allocationMode: 'All' })])],
    slices: [fourGpus],
    allocated: [`${DRIVER}/node-1/gpu-3`],
    want: 'unsatisfiable',
  },
  {
    name: 'All with no matching device',
    claims: [
      claim('c', [exact('r', { allocationMode: 'All', selectors: [{ cel: { expression: 'false' } }] })]),
    ],
    slices: [fourGpus],
    want: 'unsatisfiable',
  },
  {
    name: 'request selector',
    claims: [
      claim('c', [
        exact('r', { selectors: [{ cel: { expression: `device.attributes["${DRIVER}"].model == "c"` } }] }),
      ]),
    ],
    slices: [fourGpus],
    want: [['r=gpu-3']],
  },
  {
    name: 'class selector',
    claims: [claim('c', [exact('r', { deviceClassName: 'model-b' })])],
    slices: [fourGpus],
    classes: [
      cls('model-b', [`device.driver == "${DRIVER}"`, `device.attributes["${DRIVER}"].model == "b"`]),
    ],
    want: [['r=gpu-1']],
  },
  {
    name: 'devices in use are skipped',
    claims: [claim('c', [exact('r')])],
    slices: [fourGpus],
    allocated: [`${DRIVER}/node-1/gpu-0`, `${DRIVER}/node-1/gpu-1`],
    want: [['r=gpu-2']],
  },
  {
    name: 'two claims never share a device',
    claims: [claim('a', [exact('r')]), claim('b', [exact('r')])],
    slices: [fourGpus],
    want: [['r=gpu-0'], ['r=gpu-1']],
  },
  {
    name: 'firstAvailable picks the first satisfiable subrequest',
    claims: [
      claim('c', [
        {
          name: 'r',
          firstAvailable: [
            { name: 'big', deviceClassName: 'gpu', count: 8 },
            { name: 'small', deviceClassName: 'gpu', count: 2 },
          ],
        },
      ]),
    ],
    slices: [fourGpus],
    want: [['r/small=gpu-0', 'r/small=gpu-1']],
  },
  {
    name: 'firstAvailable prefers the first subrequest',
    claims: [
      claim('c', [
        {
          name: 'r',
          firstAvailable: [
            {
              name: 'b',
              deviceClassName: 'gpu',
              selectors: [{ cel: { expression: `device.attributes["${DRIVER}"].model == "b"` } }],
            },
            { name: 'any', deviceClassName: 'gpu' },
          ],
        },
      ]),
    ],
    slices: [fourGpus],
    want: [['r/b=gpu-1']],
  },
  {
    name: 'matchAttribute: same NUMA node backtracks past gpu-0',
    claims: [claim('c', [exact('r', { count: 2 })], { constraints: [{ matchAttribute: NUMA }] })],
    slices: [fourGpus],
    want: [['r=gpu-1', 'r=gpu-2']],
  },
  {
    name: 'matchAttribute across requests of two drivers',
    claims: [
      claim('c', [exact('gpu'), { name: 'nic', exactly: { deviceClassName: 'nic' } }], {
        constraints: [{ matchAttribute: NUMA, requests: ['gpu', 'nic'] }],
      }),
    ],
    slices: [
      fourGpus,
      {
        metadata: { name: 'nics' },
        spec: {
          driver: 'nic.example.com',
          pool: { name: 'node-1', generation: 1, resourceSliceCount: 1 },
          nodeName: 'node-1',
          devices: [gpu('nic-0', { [NUMA]: { int: 1 } })],
        },
      },
    ],
    want: [['gpu=gpu-1', 'nic=nic-0']],
  },
  {
    name: "matchAttribute finds a bare attribute in the driver's domain",
    claims: [
      claim('c', [exact('r', { count: 2 })], { constraints: [{ matchAttribute: `${DRIVER}/model` }] }),
    ],
    slices: [fourGpus],
    want: [['r=gpu-1', 'r=gpu-2']],
  },
  {
    name: 'matchAttribute: devices without the attribute never match',
    claims: [claim('c', [exact('r', { count: 4 })], { constraints: [{ matchAttribute: NUMA }] })],
    slices: [fourGpus],
    want: 'unsatisfiable',
  },
  {
    name: 'matchAttribute with All: a device that breaks the constraint is an error',
    claims: [
      claim('c', [exact('r', { allocationMode: 'All' })], { constraints: [{ matchAttribute: NUMA }] }),
    ],
    slices: [fourGpus],
    want: {
      error:
        'claim default/c, request r: cannot add device gpu.example.com/node-1/gpu-1 because a claim constraint would not be satisfied',
    },
  },
  {
    name: 'admin access shares an allocated device',
    claims: [claim('c', [exact('r', { adminAccess: true })])],
    slices: [slice('s1', [gpu('gpu-0')])],
    allocated: [`${DRIVER}/node-1/gpu-0`],
    want: [['r=gpu-0 admin']],
  },
  {
    name: 'NoSchedule taint keeps a device out',
    claims: [claim('c', [exact('r')])],
    slices: [
      slice('s1', [gpu('gpu-0', {}, { taints: [{ key: 'ecc', value: 'bad', effect: 'NoSchedule' }] })]),
    ],
    want: 'unsatisfiable',
  },
  {
    name: 'a matching toleration lets it in and is copied to the result',
    claims: [
      claim('c', [
        exact('r', { tolerations: [{ key: 'ecc', operator: 'Equal', value: 'bad', effect: 'NoSchedule' }] }),
      ]),
    ],
    slices: [
      slice('s1', [gpu('gpu-0', {}, { taints: [{ key: 'ecc', value: 'bad', effect: 'NoSchedule' }] })]),
    ],
    want: [['r=gpu-0 tolerations=1']],
  },
  {
    name: 'a toleration for another value does not',
    claims: [claim('c', [exact('r', { tolerations: [{ key: 'ecc', value: 'ok' }] })])],
    slices: [
      slice('s1', [gpu('gpu-0', {}, { taints: [{ key: 'ecc', value: 'bad', effect: 'NoExecute' }] })]),
    ],
    want: 'unsatisfiable',
  },
  {
    name: 'an Exists toleration without key tolerates everything',
    claims: [claim('c', [exact('r', { tolerations: [{ operator: 'Exists' }] })])],
    slices: [slice('s1', [gpu('gpu-0', {}, { taints: [{ key: 'ecc', effect: 'NoExecute' }] })])],
    want: [['r=gpu-0 tolerations=1']],
  },
  {
    name: 'effect None does not keep a device out',
    claims: [claim('c', [exact('r')])],
    slices: [slice('s1', [gpu('gpu-0', {}, { taints: [{ key: 'info', effect: 'None' }] })])],
    want: [['r=gpu-0']],
  },
  {
    name: 'shared counters: partitions that fit together',
    claims: [claim('c', [exact('r', { count: 2 })])],
    slices: [
      slice('counters', [], {
        sharedCounters: [{ name: 'gpu-0-mem', counters: { memory: { value: '40Gi' } } }],
        count: 2,
      }),
      slice(
        's1',
        ['whole', 'half-a', 'half-b'].map((n) =>
          gpu(
            n,
            {},
            {
              consumesCounters: [
                { counterSet: 'gpu-0-mem', counters: { memory: { value: n === 'whole' ? '40Gi' : '20Gi' } } },
              ],
            },
          ),
        ),
        { count: 2 },
      ),
    ],
    want: [['r=half-a', 'r=half-b']],
  },
  {
    name: 'shared counters: allocated partitions use up the counter',
    claims: [claim('c', [exact('r')])],
    slices: [
      slice('counters', [], {
        sharedCounters: [{ name: 'gpu-0-mem', counters: { memory: { value: '40Gi' } } }],
        count: 2,
      }),
      slice(
        's1',
        ['whole', 'half-a', 'half-b'].map((n) =>
          gpu(
            n,
            {},
            {
              consumesCounters: [
                { counterSet: 'gpu-0-mem', counters: { memory: { value: n === 'whole' ? '40Gi' : '20Gi' } } },
              ],
            },
          ),
        ),
        { count: 2 },
      ),
    ],
    allocated: [`${DRIVER}/node-1/half-a`],
    want: [['r=half-b']],
  },
  {
    name: 'only the newest generation of a pool counts',
    claims: [claim('c', [exact('r', { count: 2 })])],
    slices: [
      slice('old', [gpu('gpu-old-0'), gpu('gpu-old-1')], { generation: 1 }),
      slice('new', [gpu('gpu-new')], { generation: 2 }),
    ],
    want: 'unsatisfiable',
  },
  {
    name: 'the newest generation is used',
    claims: [claim('c', [exact('r')])],
    slices: [
      slice('new', [gpu('gpu-new')], { generation: 2 }),
      slice('old', [gpu('gpu-old')], { generation: 1 }),
    ],
    want: [['r=gpu-new']],
  },
  {
    name: 'an incomplete pool is not allocated from',
    claims: [claim('c', [exact('r')])],
    slices: [slice('s1', [gpu('gpu-0')], { count: 2 })],
    want: 'unsatisfiable',
  },
  {
    name: 'a pool completed by slices of other nodes is used',
    claims: [claim('c', [exact('r')])],
    slices: [
      slice('s1', [gpu('gpu-0')], { count: 2 }),
      slice('s2', [gpu('gpu-9')], { count: 2, nodeName: 'node-2' }),
    ],
    want: [['r=gpu-0']],
  },
  {
    name: 'All on an incomplete pool is an error',
    claims: [claim('c', [exact('r', { allocationMode: 'All' })])],
    slices: [slice('s1', [gpu('gpu-0')], { count: 2 })],
    want: {
      error:
        'claim default/c, request r: asks for all devices, but resource pool gpu.example.com/node-1 is currently being updated',
    },
  },
  {
    name: 'duplicate device names make the pool invalid',
    claims: [claim('c', [exact('r')])],
    slices: [slice('s1', [gpu('gpu-0')], { count: 2 }), slice('s2', [gpu('gpu-0')], { count: 2 })],
    want: { failedOnNode: 'invalid resource pools were encountered' },
  },
  {
    name: "another node's slice is ignored",
    claims: [claim('c', [exact('r')])],
    slices: [slice('s1', [gpu('gpu-0')], { nodeName: 'node-2' })],
    want: 'unsatisfiable',
  },
  {
    name: 'a node selector slice that matches the node labels',
    claims: [claim('c', [exact('r')])],
    slices: [
      slice('s1', [gpu('gpu-0')], {
        nodeSelector: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }],
        },
      }),
    ],
    want: [['r=gpu-0']],
  },
  {
    name: 'devices with binding conditions are not selectable by the stable allocator',
    claims: [claim('c', [exact('r')])],
    slices: [slice('s1', [gpu('gpu-0', {}, { bindingConditions: ['attached'] })])],
    want: 'unsatisfiable',
  },
  {
    name: 'a CEL runtime error aborts allocation',
    claims: [
      claim('c', [
        exact('r', { selectors: [{ cel: { expression: `device.attributes["${DRIVER}"].missing == 1` } }] }),
      ]),
    ],
    slices: [fourGpus],
    want: {
      error:
        'claim default/c: selector #0 on device gpu.example.com/node-1/gpu-0: CEL runtime error: no such key: missing. consider using CEL optional chaining',
    },
  },
  {
    name: 'a class compile error aborts allocation',
    claims: [claim('c', [exact('r', { deviceClassName: 'broken' })])],
    slices: [fourGpus],
    classes: [cls('broken', ['device.driver ==='])],
    want: { error: 'class broken: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:' },
  },
  {
    name: 'distinctAttribute is not supported by the stable allocator',
    claims: [claim('c', [exact('r')], { constraints: [{ distinctAttribute: NUMA }] })],
    slices: [fourGpus],
    want: { error: 'claim default/c, constraint #0: empty constraint (unsupported constraint type?)' },
  },
  {
    name: 'more than 32 devices per claim',
    claims: [claim('c', [exact('r', { count: 33 })])],
    slices: [fourGpus],
    want: { error: 'claim default/c: number of requested devices 33 exceeds the claim limit of 32' },
  },
];

function summarize(outcome: AllocateOutcome): Case['want'] {
  switch (outcome.kind) {
    case 'unsatisfiable':
      return 'unsatisfiable';
    case 'error':
      return { error: outcome.message };
    case 'failedOnNode':
      return { failedOnNode: outcome.message };
    case 'allocated':
      return outcome.results.map((r) =>
        (r.devices.results ?? []).map(
          (d) =>
            `${d.request}=${d.device}${d.adminAccess ? ' admin' : ''}${d.tolerations ? ` tolerations=${d.tolerations.length}` : ''}`,
        ),
      );
  }
}

describe('stable allocator', () => {
  for (const c of cases) {
    test(c.name, () => {
      const allocator = new Allocator({
        allocatedDevices: new Set(c.allocated ?? []),
        classes: new Map((c.classes ?? CLASSES).concat(CLASSES).map((k) => [k.metadata.name, k])),
        slices: c.slices,
      });
      const got = summarize(allocator.allocate(NODE, c.claims));
      if (typeof c.want === 'object' && !Array.isArray(c.want) && 'error' in c.want) {
        assert.ok(typeof got === 'object' && !Array.isArray(got) && 'error' in got, JSON.stringify(got));
        assert.ok(got.error.startsWith(c.want.error), got.error);
        return;
      }
      assert.deepEqual(got, c.want);
    });
  }
});

describe('allocation results', () => {
  const allocate = (claims: ResourceClaim[], slices: ResourceSlice[], classes = CLASSES): AllocateOutcome =>
    new Allocator({
      allocatedDevices: new Set(),
      classes: new Map(classes.map((k) => [k.metadata.name, k])),
      slices,
    }).allocate(NODE, claims);

  test('a node-local slice pins the allocation to the node', () => {
    const outcome = allocate([claim('c', [exact('r')])], [slice('s1', [gpu('gpu-0')])]);
    assert.equal(outcome.kind, 'allocated');
    if (outcome.kind === 'allocated') {
      assert.deepEqual(outcome.results[0]?.nodeSelector, {
        nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-1'] }] }],
      });
    }
  });

  test('an allNodes slice leaves the allocation usable everywhere; a node selector is copied', () => {
    const everywhere = allocate(
      [claim('c', [exact('r')])],
      [slice('s1', [gpu('gpu-0')], { allNodes: true })],
    );
    assert.ok(everywhere.kind === 'allocated' && everywhere.results[0]?.nodeSelector === undefined);
    const selector = {
      nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In' as const, values: ['a'] }] }],
    };
    const zoned = allocate(
      [claim('c', [exact('r')])],
      [slice('s1', [gpu('gpu-0')], { nodeSelector: selector })],
    );
    assert.ok(zoned.kind === 'allocated');
    if (zoned.kind === 'allocated') assert.deepEqual(zoned.results[0]?.nodeSelector, selector);
  });

  test('class and claim configs: FromClass once per class, "all requests" becomes empty', () => {
    const opaque = (p: string) => ({ opaque: { driver: DRIVER, parameters: { p } } });
    const outcome = allocate(
      [
        claim('c', [exact('a'), exact('b')], {
          config: [{ requests: ['a'], ...opaque('claim-a') }, { ...opaque('claim-all') }],
        }),
      ],
      [fourGpus],
      [cls('gpu', [`device.driver == "${DRIVER}"`], { config: [opaque('class')] })],
    );
    assert.equal(outcome.kind, 'allocated');
    if (outcome.kind === 'allocated') {
      assert.deepEqual(outcome.results[0]?.devices.config, [
        { source: 'FromClass', ...opaque('class') },
        { source: 'FromClaim', requests: ['a'], ...opaque('claim-a') },
        { source: 'FromClaim', ...opaque('claim-all') },
      ]);
    }
  });

  test('DeviceTaintRules taint the devices their selector names', () => {
    const slices = applyDeviceTaintRules(
      [fourGpus],
      [
        {
          metadata: { name: 'maintenance' },
          spec: {
            deviceSelector: { driver: DRIVER, pool: 'node-1', device: 'gpu-0' },
            taint: { key: 'maint', effect: 'NoSchedule' },
          },
        },
        {
          metadata: { name: 'other-driver' },
          spec: { deviceSelector: { driver: 'x' }, taint: { key: 'x', effect: 'NoSchedule' } },
        },
      ],
    );
    assert.deepEqual(slices[0]?.spec.devices?.[0]?.taints, [{ key: 'maint', effect: 'NoSchedule' }]);
    assert.equal(slices[0]?.spec.devices?.[1]?.taints, undefined);
    assert.equal(fourGpus.spec.devices?.[0]?.taints, undefined, 'the input slice is not modified');
    const outcome = allocate([claim('c', [exact('r')])], slices);
    assert.ok(outcome.kind === 'allocated' && outcome.results[0]?.devices.results?.[0]?.device === 'gpu-1');
  });
});
