// Consumable capacity in the allocator (the incubating allocator's behaviour, on by default in 1.37)
// and partitions over shared counters, table-driven; the rounding rules of consumable_capacity.go.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Quantity } from '@plugboard/apimachinery';
import type {
  CapacityRequestPolicy,
  Device,
  DeviceClass,
  DeviceRequest,
  ResourceClaim,
  ResourceSlice,
} from '../types.js';
import { Allocator, type AllocatorOptions } from './allocator.js';
import { calculateConsumedCapacity } from './consumable-capacity.js';

const DRIVER = 'gpu.example.com';
const NODE = { name: 'node-1', labels: {} };
const CLASSES = new Map<string, DeviceClass>([
  [
    'gpu',
    {
      metadata: { name: 'gpu' },
      spec: { selectors: [{ cel: { expression: `device.driver == "${DRIVER}"` } }] },
    },
  ],
]);
const key = (device: string): string => `${DRIVER}/node-1/${device}`;

const shared = (name: string, memory: string, requestPolicy?: CapacityRequestPolicy): Device => ({
  name,
  allowMultipleAllocations: true,
  capacity: { memory: { value: memory, ...(requestPolicy ? { requestPolicy } : {}) } },
});

const slice = (
  devices: Device[],
  extra: Partial<ResourceSlice['spec']> = {},
  name = 's1',
): ResourceSlice => ({
  metadata: { name },
  spec: {
    driver: DRIVER,
    pool: { name: 'node-1', generation: 1, resourceSliceCount: extra.sharedCounters ? 2 : 1 },
    nodeName: 'node-1',
    ...(devices.length > 0 ? { devices } : {}),
    ...extra,
  },
});

const request = (
  memory?: string,
  extra: Partial<NonNullable<DeviceRequest['exactly']>> = {},
): DeviceRequest => ({
  name: 'gpu',
  exactly: {
    deviceClassName: 'gpu',
    ...(memory !== undefined ? { capacity: { requests: { memory } } } : {}),
    ...extra,
  },
});

const claim = (name: string, ...requests: DeviceRequest[]): ResourceClaim => ({
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  spec: { devices: { requests } },
});

function allocate(
  slices: ResourceSlice[],
  claims: ResourceClaim[],
  state: Partial<
    Pick<AllocatorOptions, 'allocatedDevices' | 'allocatedSharedDevices' | 'aggregatedCapacity'>
  > = {},
) {
  return new Allocator({ allocatedDevices: new Set(), classes: CLASSES, slices, ...state }).allocate(
    NODE,
    claims,
  );
}

/** Per claim: `device consumed` per result ("gpu-0 20Gi", or "gpu-0" for an exclusive one). */
function summary(outcome: ReturnType<typeof allocate>): string[][] | string {
  if (outcome.kind !== 'allocated')
    return outcome.kind === 'unsatisfiable' ? 'unsatisfiable' : outcome.message;
  return outcome.results.map((r) =>
    (r.devices.results ?? []).map((d) =>
      [d.device, ...Object.values(d.consumedCapacity ?? {}), d.shareID === undefined ? '' : 'shared']
        .filter(Boolean)
        .join(' '),
    ),
  );
}

interface Case {
  name: string;
  slices: ResourceSlice[];
  claims: ResourceClaim[];
  state?: Parameters<typeof allocate>[2];
  want: string[][] | string;
}

const capacity = (entries: [string, string][]) =>
  new Map([[key('gpu-0'), new Map(entries.map(([n, v]) => [n, Quantity.parse(v)]))]]);

const cases: Case[] = [
  {
    name: 'two 20Gi claims share a 40Gi device',
    slices: [slice([shared('gpu-0', '40Gi')])],
    claims: [claim('a', request('20Gi')), claim('b', request('20Gi'))],
    want: [['gpu-0 20Gi shared'], ['gpu-0 20Gi shared']],
  },
  {
    name: 'a third 20Gi claim does not fit beside two allocated ones',
    slices: [slice([shared('gpu-0', '40Gi')])],
    claims: [claim('c', request('20Gi'))],
    state: {
      allocatedSharedDevices: new Set([key('gpu-0')]),
      aggregatedCapacity: capacity([['memory', '40Gi']]),
    },
    want: 'unsatisfiable',
  },
  {
    name: 'capacity exhausted within one run: the third claim goes to the next device',
    slices: [slice([shared('gpu-0', '40Gi'), shared('gpu-1', '40Gi')])],
    claims: [claim('a', request('20Gi')), claim('b', request('20Gi')), claim('c', request('20Gi'))],
    want: [['gpu-0 20Gi shared'], ['gpu-0 20Gi shared'], ['gpu-1 20Gi shared']],
  },
  {
    name: 'validRange rounds up to min + k·step',
    slices: [slice([shared('gpu-0', '40Gi', { validRange: { min: '10Gi', step: '10Gi' } })])],
    claims: [claim('a', request('15Gi')), claim('b', request('1Gi'))],
    want: [['gpu-0 20Gi shared'], ['gpu-0 10Gi shared']],
  },
  {
    name: 'validRange max refuses a larger request',
    slices: [slice([shared('gpu-0', '40Gi', { validRange: { min: '1Gi', max: '16Gi' } })])],
    claims: [claim('a', request('20Gi'))],
    want: 'unsatisfiable',
  },
  {
    name: 'validValues round up to the next value',
    slices: [slice([shared('gpu-0', '40Gi', { validValues: ['8Gi', '16Gi', '40Gi'] })])],
    claims: [claim('a', request('5Gi')), claim('b', request('9Gi'))],
    want: [['gpu-0 8Gi shared'], ['gpu-0 16Gi shared']],
  },
  {
    name: 'no request takes the default',
    slices: [slice([shared('gpu-0', '40Gi', { default: '4Gi', validRange: { min: '4Gi', step: '4Gi' } })])],
    claims: [claim('a', request())],
    want: [['gpu-0 4Gi shared']],
  },
  {
    name: 'no request and no policy takes the whole capacity',
    slices: [slice([shared('gpu-0', '40Gi')])],
    claims: [claim('a', request()), claim('b', request('1Gi'))],
    want: 'unsatisfiable',
  },
  {
    name: 'a capacity the device does not have skips it',
    slices: [
      slice([shared('gpu-0', '40Gi'), { ...shared('gpu-1', '40Gi'), capacity: { cores: { value: '8' } } }]),
    ],
    claims: [
      claim('a', {
        name: 'gpu',
        exactly: { deviceClassName: 'gpu', capacity: { requests: { cores: '2' } } },
      }),
    ],
    want: [['gpu-1 2 shared']],
  },
  {
    name: 'a device without allowMultipleAllocations is allocated whole, without a share',
    slices: [slice([{ name: 'gpu-0', capacity: { memory: { value: '40Gi' } } }])],
    claims: [claim('a', request('20Gi')), claim('b', request('20Gi'))],
    want: 'unsatisfiable',
  },
  {
    name: 'a device without allowMultipleAllocations: one claim, no consumedCapacity',
    slices: [slice([{ name: 'gpu-0', capacity: { memory: { value: '40Gi' } } }])],
    claims: [claim('a', request('20Gi'))],
    want: [['gpu-0']],
  },
  {
    name: 'a request above the capacity does not fit',
    slices: [slice([shared('gpu-0', '40Gi')])],
    claims: [claim('a', request('41Gi'))],
    want: 'unsatisfiable',
  },
  {
    name: 'All: a shared device whose capacity is taken fails the request',
    slices: [slice([shared('gpu-0', '40Gi'), shared('gpu-1', '40Gi')])],
    claims: [claim('a', request('20Gi', { allocationMode: 'All' }))],
    state: {
      allocatedSharedDevices: new Set([key('gpu-0')]),
      aggregatedCapacity: capacity([['memory', '30Gi']]),
    },
    want: 'unsatisfiable',
  },
  {
    name: 'All: devices too small from the start are left out',
    slices: [slice([shared('gpu-0', '10Gi'), shared('gpu-1', '40Gi')])],
    claims: [claim('a', request('20Gi', { allocationMode: 'All' }))],
    want: [['gpu-1 20Gi shared']],
  },
  {
    name: 'an unrepresentable request aborts the attempt',
    slices: [slice([shared('gpu-0', '40Gi', { validRange: { min: '1', step: '1' } })])],
    claims: [claim('a', request('10E'))],
    want: 'claim default/a, request gpu: checking capacity for device gpu.example.com/node-1/gpu-0: capacity "memory": capacity request cannot be represented in the device\'s range arithmetic: request 10E is not a representable milli value',
  },
];

const counters = (name: string, memory: string): ResourceSlice =>
  slice([], { sharedCounters: [{ name, counters: { memory: { value: memory } } }] }, 'counters');
const partition = (name: string, memory: string, extra: Partial<Device> = {}): Device => ({
  name,
  consumesCounters: [{ counterSet: 'gpu-0', counters: { memory: { value: memory } } }],
  ...extra,
});
const quarters = slice(
  [
    partition('gpu-0-whole', '40Gi'),
    partition('gpu-0-half-0', '20Gi'),
    partition('gpu-0-quarter-0', '10Gi'),
    partition('gpu-0-quarter-1', '10Gi'),
  ],
  { pool: { name: 'node-1', generation: 1, resourceSliceCount: 2 } },
);
const wholeOnly = (name: string): DeviceRequest =>
  request(undefined, {
    selectors: [{ cel: { expression: `device.attributes["${DRIVER}"].kind == "${name}"` } }],
  });
const kind = (d: Device, k: string): Device => ({ ...d, attributes: { kind: { string: k } } });
const partitions = slice(
  [
    kind(partition('gpu-0-whole', '40Gi'), 'whole'),
    kind(partition('gpu-0-quarter-0', '10Gi'), 'quarter'),
    kind(partition('gpu-0-quarter-1', '10Gi'), 'quarter'),
  ],
  { pool: { name: 'node-1', generation: 1, resourceSliceCount: 2 } },
);

cases.push(
  {
    name: 'partitions: two quarters fit together (the whole is skipped once one is taken)',
    slices: [counters('gpu-0', '40Gi'), partitions],
    claims: [claim('a', wholeOnly('quarter')), claim('b', wholeOnly('quarter'))],
    want: [['gpu-0-quarter-0'], ['gpu-0-quarter-1']],
  },
  {
    name: 'partitions: the whole does not fit while quarters are allocated',
    slices: [counters('gpu-0', '40Gi'), partitions],
    claims: [claim('c', wholeOnly('whole'))],
    state: { allocatedDevices: new Set([key('gpu-0-quarter-0'), key('gpu-0-quarter-1')]) },
    want: 'unsatisfiable',
  },
  {
    name: 'partitions: the whole fits once they are released',
    slices: [counters('gpu-0', '40Gi'), partitions],
    claims: [claim('c', wholeOnly('whole'))],
    want: [['gpu-0-whole']],
  },
  {
    name: 'partitions: backtracking leaves the whole for a half and a quarter',
    slices: [counters('gpu-0', '40Gi'), quarters],
    claims: [claim('a', request()), claim('b', request())],
    want: [['gpu-0-half-0'], ['gpu-0-quarter-0']],
  },
  {
    name: 'a shared device charges its counters once, with its first share',
    slices: [
      counters('gpu-0', '40Gi'),
      slice(
        [
          partition('gpu-0-shared', '40Gi', {
            allowMultipleAllocations: true,
            capacity: { memory: { value: '40Gi' } },
          }),
        ],
        {
          pool: { name: 'node-1', generation: 1, resourceSliceCount: 2 },
        },
      ),
    ],
    claims: [claim('a', request('10Gi')), claim('b', request('10Gi'))],
    want: [['gpu-0-shared 10Gi shared'], ['gpu-0-shared 10Gi shared']],
  },
  {
    name: 'an allocated share counts as holding the counters',
    slices: [
      counters('gpu-0', '40Gi'),
      slice(
        [
          kind(
            partition('gpu-0-shared', '40Gi', {
              allowMultipleAllocations: true,
              capacity: { memory: { value: '40Gi' } },
            }),
            'shared',
          ),
          kind(partition('gpu-0-whole', '40Gi'), 'whole'),
        ],
        { pool: { name: 'node-1', generation: 1, resourceSliceCount: 2 } },
      ),
    ],
    claims: [claim('a', wholeOnly('whole'))],
    state: { allocatedSharedDevices: new Set([key('gpu-0-shared')]) },
    want: 'unsatisfiable',
  },
);

describe('consumable capacity and partitions in the allocator', () => {
  for (const c of cases) {
    test(c.name, () => {
      assert.deepEqual(summary(allocate(c.slices, c.claims, c.state)), c.want);
    });
  }

  test('each share gets its own shareID (a UUID), and only shares get one', () => {
    const outcome = allocate(
      [slice([shared('gpu-0', '40Gi'), { name: 'gpu-1' }])],
      [
        claim('a', request('20Gi')),
        claim('b', request('20Gi')),
        claim('c', {
          name: 'gpu',
          exactly: {
            deviceClassName: 'gpu',
            selectors: [{ cel: { expression: 'device.allowMultipleAllocations == false' } }],
          },
        }),
      ],
    );
    assert.equal(outcome.kind, 'allocated');
    const results = outcome.kind === 'allocated' ? outcome.results.map((r) => r.devices.results?.[0]) : [];
    const [a, b, c] = results;
    assert.match(a?.shareID ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.notEqual(a?.shareID, b?.shareID);
    assert.deepEqual(a?.consumedCapacity, { memory: '20Gi' });
    assert.equal(c?.device, 'gpu-1');
    assert.equal(c?.shareID, undefined);
    assert.equal(c?.consumedCapacity, undefined);
  });
});

describe('calculateConsumedCapacity (consumable_capacity.go)', () => {
  const table: [
    string,
    string | undefined,
    { value: string; requestPolicy?: CapacityRequestPolicy },
    string,
  ][] = [
    ['no policy: the request', '3Gi', { value: '40Gi' }, '3Gi'],
    ['no request, no policy: the capacity', undefined, { value: '40Gi' }, '40Gi'],
    ['no request: the default', undefined, { value: '40Gi', requestPolicy: { default: '1Gi' } }, '1Gi'],
    ['below min: min', '1Gi', { value: '40Gi', requestPolicy: { validRange: { min: '2Gi' } } }, '2Gi'],
    ['no step: the request', '3Gi', { value: '40Gi', requestPolicy: { validRange: { min: '2Gi' } } }, '3Gi'],
    ['step from min', '5', { value: '40', requestPolicy: { validRange: { min: '2', step: '4' } } }, '6'],
    ['exactly on a step', '6', { value: '40', requestPolicy: { validRange: { min: '2', step: '4' } } }, '6'],
    [
      'fractional step',
      '0.3',
      { value: '4', requestPolicy: { validRange: { min: '0.25', step: '0.25' } } },
      '500m',
    ],
    [
      'validValues: the next one',
      '9Gi',
      { value: '40Gi', requestPolicy: { validValues: ['8Gi', '16Gi'] } },
      '16Gi',
    ],
    [
      'validValues: none larger keeps the request',
      '20Gi',
      { value: '40Gi', requestPolicy: { validValues: ['8Gi', '16Gi'] } },
      '20Gi',
    ],
  ];
  for (const [name, requested, cap, want] of table) {
    test(name, () => {
      const got = calculateConsumedCapacity(
        requested === undefined ? undefined : Quantity.parse(requested),
        cap,
      );
      assert.equal(got.canonicalString(), want);
    });
  }
});
