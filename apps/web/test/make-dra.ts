// Adds the DRA part of the contract to a makeSnapshot() node for tests and benchmarks: one driver's
// devices over NUMA nodes, claims allocated one device each and reserved for (and prepared for) a
// pod of their own, and optionally pending claims whose pods wait for the scheduler.
// Deterministic, like makeSnapshot, so assertions can be exact.
import type {
  DraClaimState,
  DraDeviceCounts,
  DraDeviceState,
  DraState,
  DraSummary,
  NodeSnapshot,
  PodState,
} from '@plugboard/api';
import { containerState, draDeviceState } from '@plugboard/api/testing';

export interface DraShape {
  driver?: string;
  /** Pool name; the node name when absent (a node-local driver's pool). */
  pool?: string;
  deviceClass?: string;
  devices: number;
  numaNodes: number;
  /** Claims allocated one device each (devices 0, 1, …), reserved for and prepared for a pod each. */
  claims: number;
  /** Claims no device was found for; their pods are Pending. */
  pendingClaims?: number;
  idPrefix?: string;
}

export const DRA_DRIVER = 'gpu.plugboard.example';
export const DRA_CLASS = 'gpu.plugboard.example';
const T0 = '2026-01-01T00:00:00.000Z';

export function draDeviceKey(shape: DraShape, node: NodeSnapshot, i: number): string {
  return `${shape.driver ?? DRA_DRIVER}/${shape.pool ?? node.nodeName}/${shape.idPrefix ?? 'gpu'}-${i}`;
}

/** A node with `shape`'s DRA driver, devices, claims and claim pods (the input is not changed). */
export function withDra(input: NodeSnapshot, shape: DraShape): NodeSnapshot {
  const driver = shape.driver ?? DRA_DRIVER;
  const pool = shape.pool ?? input.nodeName;
  const cls = shape.deviceClass ?? DRA_CLASS;
  const prefix = shape.idPrefix ?? 'gpu';
  const devices: Record<string, DraDeviceState> = {};
  const keys: string[] = [];
  for (let i = 0; i < shape.devices; i++) {
    const name = `${prefix}-${i}`;
    const key = `${driver}/${pool}/${name}`;
    const numa = Math.floor((i * shape.numaNodes) / shape.devices);
    devices[key] = draDeviceState({
      driver,
      pool,
      name,
      since: T0,
      attributes: {
        model: { string: 'PB-100' },
        'resource.kubernetes.io/numaNode': { int: numa },
        driverVersion: { version: '1.0.0' },
      },
      capacity: { memory: '80Gi' },
      numaNodes: [numa],
    });
    keys.push(key);
  }
  const claims: Record<string, DraClaimState> = {};
  const pods: Record<string, PodState> = { ...input.pods };
  const addClaim = (i: number, pending: boolean) => {
    const namespace = 'dra';
    const podName = pending ? `waiting-${i}` : `worker-${i}`;
    const podKey = `${namespace}/${podName}`;
    const claimName = `${podName}-gpu`;
    const claimKey = `${namespace}/${claimName}`;
    const deviceKey = pending ? null : keys[i]!;
    const device = deviceKey ? devices[deviceKey]! : null;
    if (device) {
      devices[deviceKey!] = {
        ...device,
        allocations: [{ claim: claimKey, request: 'gpu', adminAccess: false, pods: [podKey] }],
      };
    }
    claims[claimKey] = {
      key: claimKey,
      namespace,
      name: claimName,
      uid: `uid-${claimName}`,
      owner: { pod: podKey, podClaimName: 'gpu' },
      requests: [
        {
          name: 'gpu',
          deviceClassName: cls,
          allocationMode: 'ExactCount',
          count: 1,
          selectors: pending ? ['device.attributes["gpu.plugboard.example"].model == "PB-200"'] : [],
          firstAvailable: [],
          adminAccess: false,
        },
      ],
      phase: pending ? 'pending' : 'prepared',
      devices: device
        ? [{ request: 'gpu', driver, pool, device: device.name, deviceKey: device.key, adminAccess: false }]
        : [],
      reservedFor: pending ? [] : [podKey],
      health: pending ? null : 'Healthy',
      pendingReason: pending
        ? '0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.'
        : null,
      deleting: false,
    };
    pods[podKey] = {
      key: podKey,
      namespace,
      name: podName,
      phase: pending ? 'Pending' : 'Running',
      reason: null,
      containers: [
        containerState({
          dynamicResources: device
            ? [
                {
                  claimName,
                  claimNamespace: namespace,
                  devices: [
                    {
                      driver,
                      pool,
                      device: device.name,
                      cdiDevices: [`k8s.${driver}/gpu=uid-${claimName}-${device.name}`],
                    },
                  ],
                },
              ]
            : [],
          state: pending ? 'waiting' : 'running',
          allocatedResourcesStatus: device
            ? [{ resource: `claim:${claimName}/gpu`, devices: [{ id: device.key, health: 'Healthy' }] }]
            : [],
        }),
      ],
      affectedByUnhealthyDevice: false,
      numaAlignment: device
        ? { verdict: 'aligned', numaNodes: device.numaNodes, reason: 'all devices on one NUMA node' }
        : { verdict: 'no-preference', numaNodes: [], reason: 'no NUMA-bound resources' },
      claims: [{ name: 'gpu', claim: claimKey, fromTemplate: true }],
    };
  };
  for (let i = 0; i < Math.min(shape.claims, shape.devices); i++) addClaim(i, false);
  for (let i = 0; i < (shape.pendingClaims ?? 0); i++) addClaim(i, true);
  const dra: DraState = {
    drivers: {
      [driver]: {
        name: driver,
        inProcess: true,
        registration: { phase: 'registered', registeredAt: T0, error: null },
        healthStreams: 1,
        publication: { generation: 1, slices: 1, lastPublishedAt: T0, error: null },
        pools: {
          [pool]: {
            name: pool,
            generation: 1,
            slices: [`${input.nodeName}-${driver}-abcde`],
            deviceKeys: keys,
          },
        },
        counts: { published: 0, usable: 0, allocated: 0, free: 0, unhealthy: 0, tainted: 0 },
      },
    },
    devices,
    claims,
  };
  dra.drivers[driver]!.counts = draCounts(Object.values(devices));
  return { ...input, pods, dra: mergeDra(input.dra, dra) };
}

function mergeDra(a: DraState | undefined, b: DraState): DraState {
  if (!a) return b;
  return {
    drivers: { ...a.drivers, ...b.drivers },
    devices: { ...a.devices, ...b.devices },
    claims: { ...a.claims, ...b.claims },
  };
}

/** The counts as the contract defines them (dra.ts DraDeviceCounts). */
export function draCounts(devices: readonly DraDeviceState[]): DraDeviceCounts {
  let published = 0;
  let usable = 0;
  let allocated = 0;
  let free = 0;
  let unhealthy = 0;
  let tainted = 0;
  for (const d of devices) {
    if (!d.published) continue;
    published += 1;
    const isTainted = d.taints.some((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute');
    const healthy = (d.kubeletHealth ?? d.health) === 'Healthy';
    if (isTainted) tainted += 1;
    if (d.health === 'Unhealthy') unhealthy += 1;
    if (healthy && !isTainted) usable += 1;
    if (d.allocations.length > 0) allocated += 1;
    else if (healthy && !isTainted) free += 1;
  }
  return { published, usable, allocated, free, unhealthy, tainted };
}

/** The summary's DRA part for a node built by withDra. */
export function draSummary(node: NodeSnapshot): DraSummary {
  const dra = node.dra;
  if (!dra) return { drivers: {}, deviceClasses: {}, pendingClaims: [] };
  const deviceClasses: DraSummary['deviceClasses'] = {};
  const pendingClaims: string[] = [];
  for (const c of Object.values(dra.claims)) {
    for (const r of c.requests) {
      if (!r.deviceClassName) continue;
      const entry = (deviceClasses[r.deviceClassName] ??= { allocated: 0, pendingClaims: 0 });
      if (c.phase === 'pending') entry.pendingClaims += 1;
      else entry.allocated += c.devices.filter((d) => d.request === r.name).length;
    }
    if (c.phase === 'pending') pendingClaims.push(c.key);
  }
  return {
    drivers: Object.fromEntries(Object.values(dra.drivers).map((d) => [d.name, d.counts])),
    deviceClasses,
    pendingClaims: pendingClaims.sort(),
  };
}
