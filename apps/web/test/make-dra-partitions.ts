// Partitioned and shared DRA devices as the gateway reports them, for component tests: a GPU of
// `part.plugboard.example` published as its counter set (40Gi memory) and seven partitions (whole,
// two halves, four quarters) with quarters 0 and 2 allocated to a pod each; a GPU of
// `share.plugboard.example` (allowMultipleAllocations, 40Gi, request policy 10Gi steps) shared by
// two claims of 20Gi and 10Gi. The same shapes as the gateway's model test (dra-partitions.test.ts).
import type {
  DraClaimState,
  DraDeviceState,
  DraDriverState,
  DraState,
  NodeSnapshot,
  PodState,
} from '@plugboard/api';
import { draDeviceState } from '@plugboard/api/testing';
import { draCounts } from './make-dra';

export const PART_DRIVER = 'part.plugboard.example';
export const SHARE_DRIVER = 'share.plugboard.example';
export const SHARE_IDS = ['3f0c7a52-9a51-4d5e-8a57-0d6f5b1c2a01', '3f0c7a52-9a51-4d5e-8a57-0d6f5b1c2a02'];
const T0 = '2026-01-01T00:00:00.000Z';
const NS = 'ml';

export const partKey = (node: NodeSnapshot, suffix: string): string =>
  `${PART_DRIVER}/${node.nodeName}/gpu-0-${suffix}`;
export const shareKey = (node: NodeSnapshot): string => `${SHARE_DRIVER}/${node.nodeName}/gpu-0`;

/**
 * Device `name` (of GPU gpu-0, on NUMA node 0) of a driver this gateway does not run: no source ID,
 * no kubelet health.
 */
function device(driver: string, pool: string, name: string, extra: Partial<DraDeviceState>): DraDeviceState {
  return draDeviceState({
    driver,
    pool,
    name,
    since: T0,
    sourceId: null,
    attributes: { id: { string: 'gpu-0' }, 'resource.kubernetes.io/numaNode': { int: 0 } },
    numaNodes: [0],
    kubeletHealth: null,
    ...extra,
  });
}

function driverState(name: string, pool: string, devices: DraDeviceState[]): DraDriverState {
  return {
    name,
    inProcess: false,
    registration: null,
    healthStreams: null,
    publication: null,
    pools: { [pool]: { name: pool, generation: 1, slices: [], deviceKeys: devices.map((d) => d.key) } },
    counts: draCounts(devices),
  };
}

export function withPartitionsAndShares(input: NodeSnapshot): NodeSnapshot {
  const pool = input.nodeName;
  const claims: Record<string, DraClaimState> = {};
  const pods: Record<string, PodState> = { ...input.pods };
  const claimFor = (
    name: string,
    driver: string,
    deviceName: string,
    share?: { shareID: string; consumedCapacity: Record<string, string> },
  ) => {
    const key = `${NS}/${name}`;
    claims[key] = {
      key,
      namespace: NS,
      name,
      uid: `uid-${name}`,
      owner: null,
      requests: [
        {
          name: 'gpu',
          deviceClassName: driver,
          allocationMode: 'ExactCount',
          count: 1,
          selectors: [],
          firstAvailable: [],
          adminAccess: false,
        },
      ],
      phase: 'prepared',
      devices: [
        {
          request: 'gpu',
          driver,
          pool,
          device: deviceName,
          deviceKey: `${driver}/${pool}/${deviceName}`,
          adminAccess: false,
          ...share,
        },
      ],
      reservedFor: [key],
      health: null,
      pendingReason: null,
      deleting: false,
    };
    pods[key] = {
      key,
      namespace: NS,
      name,
      phase: 'Running',
      reason: null,
      containers: [],
      affectedByUnhealthyDevice: false,
      numaAlignment: { verdict: 'no-preference', numaNodes: [], reason: 'no NUMA-bound resources' },
      claims: [{ name: 'gpu', claim: key, fromTemplate: false }],
    };
    return { claim: key, request: 'gpu', adminAccess: false, pods: [key], ...share };
  };

  const layout: [string, string][] = [
    ['whole', '40Gi'],
    ['half-0', '20Gi'],
    ['half-1', '20Gi'],
    ['quarter-0', '10Gi'],
    ['quarter-1', '10Gi'],
    ['quarter-2', '10Gi'],
    ['quarter-3', '10Gi'],
  ];
  const parts = layout.map(([suffix, memory]) =>
    device(PART_DRIVER, pool, `gpu-0-${suffix}`, {
      attributes: {
        id: { string: 'gpu-0' },
        partition: { string: suffix.replace(/-\d$/, '') },
        'resource.kubernetes.io/numaNode': { int: 0 },
      },
      consumesCounters: [{ counterSet: 'gpu-0', counters: { memory } }],
      allocations:
        suffix === 'quarter-0' || suffix === 'quarter-2'
          ? [claimFor(`part-${suffix}`, PART_DRIVER, `gpu-0-${suffix}`)]
          : [],
    }),
  );
  const part = driverState(PART_DRIVER, pool, parts);
  part.pools[pool] = {
    ...part.pools[pool]!,
    slices: [`${pool}-${PART_DRIVER}-counters`, `${pool}-${PART_DRIVER}-devices`],
    counterSets: {
      'gpu-0': {
        name: 'gpu-0',
        slice: `${pool}-${PART_DRIVER}-counters`,
        counters: { memory: { capacity: '40Gi', used: '20Gi', left: '20Gi' } },
        deviceKeys: parts.map((d) => d.key),
      },
    },
  };
  part.counts.free = 4; // the whole does not fit in the 20Gi left

  const shared = device(SHARE_DRIVER, pool, 'gpu-0', {
    capacity: { memory: '40Gi' },
    allowMultipleAllocations: true,
    capacityRequestPolicy: { memory: { default: '10Gi', validRange: { min: '10Gi', step: '10Gi' } } },
    sharedCapacity: { memory: { capacity: '40Gi', used: '30Gi', left: '10Gi' } },
    allocations: [
      claimFor('share-a', SHARE_DRIVER, 'gpu-0', {
        shareID: SHARE_IDS[0]!,
        consumedCapacity: { memory: '20Gi' },
      }),
      claimFor('share-b', SHARE_DRIVER, 'gpu-0', {
        shareID: SHARE_IDS[1]!,
        consumedCapacity: { memory: '10Gi' },
      }),
    ],
  });
  const dra: DraState = {
    drivers: {
      ...input.dra?.drivers,
      [PART_DRIVER]: part,
      [SHARE_DRIVER]: driverState(SHARE_DRIVER, pool, [shared]),
    },
    devices: {
      ...input.dra?.devices,
      ...Object.fromEntries([...parts, shared].map((d) => [d.key, d])),
    },
    claims: { ...input.dra?.claims, ...claims },
  };
  return { ...input, pods, dra };
}
