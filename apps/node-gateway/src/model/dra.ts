// The DRA part of the node model (`snapshot.dra`, `pods[].claims`, `summary.dra`): a pure join of the
// DRA drivers this gateway runs (devices, fault overlay, what the kubelet was sent on
// NodeWatchResources, registration, slice publication), this node's ResourceSlices, the
// ResourceClaims of its pods and devices, DeviceTaintRules, PodResources `dynamic_resources` (what
// the kubelet prepared) and the pods' `allocatedResourcesStatus` (the health the kubelet reports).
// Partitionable devices (KEP-4815) and shared devices (KEP-5075) as observed: a pool's counter sets
// from its counter-only slices with what its allocated partitions use, a shared device's capacity
// with what its claims' allocation results consume, each allocation's shareID and consumedCapacity,
// and each allocated device's entry in its claim's status.devices (what its driver reported).
// No I/O and no clock: equal inputs give equal output.
import type { V1Pod } from '@kubernetes/client-node';
import type { podresources } from '@plugboard/proto';
import { Quantity } from '@plugboard/apimachinery';
import type {
  DraAttributeValue,
  DraCapacityRequestPolicy,
  DraCounterConsumption,
  DraCounterSetState,
  DraCounterUsage,
  DraClaimPhase,
  DraClaimRequest,
  DraClaimState,
  DraDeviceAllocation,
  DraDeviceCounts,
  DraDeviceState,
  DraDriverState,
  DraHealth,
  DraPoolState,
  DraRegistrationPhase,
  DraState,
  DraSummary,
  DraTaintEffect,
  DraTaintView,
  FaultRecord,
  PodClaimRef,
} from '@plugboard/api';
import type { Device, DeviceTaint, ResourceClaim, ResourceSlice } from '@plugboard/k8s-api';
import {
  EXTENDED_RESOURCE_CLAIM_ANNOTATION,
  POD_CLAIM_NAME_ANNOTATION,
  type DraKubeInput,
} from './dra-objects.js';
import { sameItems } from '../same-items.js';
import { claimDeviceStatus } from './device-status.js';

/** The standard NUMA node attribute (KEP-6072) the drivers publish. */
export const NUMA_NODE_ATTRIBUTE = 'resource.kubernetes.io/numaNode';

/** A device of an in-process driver's source (structurally @plugboard/plugin's PluginDevice). */
export interface DraSourceDevice {
  id: string;
  health: 'Healthy' | 'Unhealthy';
  reason: string | null;
  since: string;
  numaNodes: readonly number[];
}

/** A DRA driver this gateway runs (sources/dra-drivers.ts pushes one per change). */
export interface DraDriverInput {
  name: string;
  poolName: string;
  /** The source's devices with the fault overlay (DraDriver.devices()). */
  devices: readonly DraSourceDevice[];
  /** The ResourceSlice entries the driver publishes for them, same order (DraDriver.sliceDevices()). */
  sliceDevices: readonly Device[];
  /** What the kubelet was last sent on NodeWatchResources; null while no stream is open. */
  reported: readonly DraSourceDevice[] | null;
  registration: { phase: DraRegistrationPhase; registeredAt: string | null; error: string | null };
  healthStreams: number;
  publication: {
    generation: number;
    slices: readonly string[];
    lastPublishedAt: string | null;
    error: string | null;
  };
}

export interface DraModelInputs {
  nodeName: string;
  drivers: readonly DraDriverInput[];
  kube: DraKubeInput | null;
  /** Pods bound to this node. */
  pods: readonly V1Pod[];
  /** Unscheduled pods waiting for this node (their claims may be pending). */
  waitingPods: readonly V1Pod[];
  /** PodResources `List`: which claims the kubelet prepared. */
  podResources: readonly podresources.PodResources[] | null;
  faults: readonly FaultRecord[];
}

export const draDeviceKey = (driver: string, pool: string, device: string): string =>
  `${driver}/${pool}/${device}`;
const podKeyOf = (p: V1Pod): string => `${p.metadata?.namespace ?? 'default'}/${p.metadata?.name ?? ''}`;

/** `spec.resourceClaims` of a pod with the claim each resolved to (status.resourceClaimStatuses). */
export function podClaimRefs(pod: V1Pod): PodClaimRef[] {
  const namespace = pod.metadata?.namespace ?? 'default';
  const statuses = new Map(
    (pod.status?.resourceClaimStatuses ?? []).map((s) => [s.name, s.resourceClaimName ?? null] as const),
  );
  return (pod.spec?.resourceClaims ?? []).map((c) => {
    const fromTemplate = !c.resourceClaimName && !!c.resourceClaimTemplateName;
    const claimName = c.resourceClaimName ?? statuses.get(c.name) ?? null;
    return { name: c.name, claim: claimName ? `${namespace}/${claimName}` : null, fromTemplate };
  });
}

const TAINTING = new Set<DraTaintEffect>(['NoSchedule', 'NoExecute']);
const HEALTH_RANK: Record<DraHealth, number> = { Healthy: 0, Unknown: 1, Unhealthy: 2 };
const worst = (a: DraHealth | null, b: DraHealth): DraHealth =>
  a === null || HEALTH_RANK[b] > HEALTH_RANK[a] ? b : a;
const asHealth = (h: string | undefined): DraHealth => (h === 'Healthy' || h === 'Unhealthy' ? h : 'Unknown');

function attributesOf(d: Device): Record<string, DraAttributeValue> {
  const out: Record<string, DraAttributeValue> = {};
  for (const [name, v] of Object.entries(d.attributes ?? {})) {
    if (v.int !== undefined) out[name] = { int: Number(v.int) };
    else if (v.bool !== undefined) out[name] = { bool: v.bool };
    else if (v.string !== undefined) out[name] = { string: v.string };
    else if (v.version !== undefined) out[name] = { version: v.version };
  }
  return out;
}

function capacityOf(d: Device): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, c] of Object.entries(d.capacity ?? {})) out[name] = String(c.value);
  return out;
}

/** A quantity as published, or null when it does not parse (then it is shown, not summed). */
function quantity(v: string | number): Quantity | null {
  try {
    return Quantity.fromJSON(v);
  } catch {
    return null;
  }
}

function consumesCountersOf(d: Device): DraCounterConsumption[] {
  return (d.consumesCounters ?? []).map((c) => ({
    counterSet: c.counterSet,
    counters: Object.fromEntries(Object.entries(c.counters ?? {}).map(([n, v]) => [n, String(v.value)])),
  }));
}

function requestPoliciesOf(d: Device): Record<string, DraCapacityRequestPolicy> {
  const out: Record<string, DraCapacityRequestPolicy> = {};
  for (const [name, c] of Object.entries(d.capacity ?? {})) {
    const p = c.requestPolicy;
    if (!p) continue;
    out[name] = {
      ...(p.default !== undefined ? { default: p.default } : {}),
      ...(p.validRange ? { validRange: { ...p.validRange } } : {}),
      ...(p.validValues ? { validValues: [...p.validValues] } : {}),
    };
  }
  return out;
}

/**
 * Capacity, used and left per name: `used` sums the amounts (those that parse; an unparsable
 * capacity leaves used and left as the sum and "unknown").
 */
function usage(
  capacity: Record<string, string>,
  amounts: readonly Record<string, string>[],
): Record<string, DraCounterUsage> {
  const out: Record<string, DraCounterUsage> = {};
  for (const [name, cap] of Object.entries(capacity)) {
    let used = Quantity.fromInt(0n);
    for (const a of amounts) {
      const v = a[name] === undefined ? null : quantity(a[name]);
      if (v) used = used.add(v);
    }
    const total = quantity(cap);
    out[name] = {
      capacity: cap,
      used: used.canonicalString(),
      left: total ? total.sub(used).canonicalString() : 'unknown',
    };
  }
  return out;
}

const taintView = (t: DeviceTaint, source: string): DraTaintView => ({
  key: t.key,
  value: t.value ?? null,
  effect: t.effect,
  timeAdded: t.timeAdded ?? null,
  source,
});

/** The newest generation's slices of each of this node's pools, by `driver/pool`. */
function currentPools(
  slices: readonly ResourceSlice[],
  nodeName: string,
): Map<string, { driver: string; pool: string; generation: number; slices: ResourceSlice[] }> {
  const pools = new Map<
    string,
    { driver: string; pool: string; generation: number; slices: ResourceSlice[] }
  >();
  for (const s of slices) {
    if (s.spec.nodeName !== nodeName) continue;
    const key = `${s.spec.driver}/${s.spec.pool.name}`;
    const p = pools.get(key);
    if (!p || s.spec.pool.generation > p.generation) {
      pools.set(key, {
        driver: s.spec.driver,
        pool: s.spec.pool.name,
        generation: s.spec.pool.generation,
        slices: [s],
      });
    } else if (s.spec.pool.generation === p.generation) p.slices.push(s);
  }
  // Served objects are named (metadata.name is optional only in what a client creates).
  for (const p of pools.values())
    p.slices.sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  return pools;
}

/** Who uses a claim: the pods (bound here or waiting for this node) naming it. */
interface ClaimUser {
  pod: V1Pod;
  podKey: string;
  podClaimName: string;
}

function claimUsers(pods: readonly V1Pod[]): Map<string, ClaimUser[]> {
  const out = new Map<string, ClaimUser[]>();
  for (const pod of pods) {
    for (const ref of podClaimRefs(pod)) {
      if (!ref.claim) continue;
      const list = out.get(ref.claim) ?? [];
      list.push({ pod, podKey: podKeyOf(pod), podClaimName: ref.name });
      out.set(ref.claim, list);
    }
  }
  return out;
}

/** Claims the kubelet prepared: PodResources lists them with devices for a container. */
function preparedClaims(pods: readonly podresources.PodResources[] | null): Set<string> {
  const out = new Set<string>();
  for (const p of pods ?? [])
    for (const c of p.containers)
      for (const dr of c.dynamicResources ?? [])
        if (dr.claimResources.length > 0) out.add(`${dr.claimNamespace}/${dr.claimName}`);
  return out;
}

/** PodResources' CDI device names → device key (allocatedResourcesStatus names a device by its first CDI ID). */
function cdiIndex(pods: readonly podresources.PodResources[] | null): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of pods ?? [])
    for (const c of p.containers)
      for (const dr of c.dynamicResources ?? [])
        for (const cr of dr.claimResources) {
          const first = cr.cdiDevices.at(-1)?.name;
          // The kubelet appends a driver's CDI IDs device by device: a device's own ID is its last.
          if (first) out.set(first, draDeviceKey(cr.driverName, cr.poolName, cr.deviceName));
        }
  return out;
}

/**
 * Health of each claim and device as the pods' `allocatedResourcesStatus` reports it: entries named
 * `claim:<pod claim>` or `claim:<pod claim>/<request>`, a device per `resourceID` (its first CDI
 * device ID, else `<driver>/<pool>/<device>`).
 */
function reportedHealth(
  users: Map<string, ClaimUser[]>,
  cdi: Map<string, string>,
): { claims: Map<string, DraHealth>; devices: Map<string, DraHealth> } {
  const claims = new Map<string, DraHealth>();
  const devices = new Map<string, DraHealth>();
  for (const [claimKey, list] of users) {
    for (const { pod, podClaimName } of list) {
      for (const cs of pod.status?.containerStatuses ?? []) {
        for (const entry of cs.allocatedResourcesStatus ?? []) {
          const name = entry.name;
          if (name !== `claim:${podClaimName}` && !name.startsWith(`claim:${podClaimName}/`)) continue;
          for (const r of entry.resources ?? []) {
            const health = asHealth(r.health);
            claims.set(claimKey, worst(claims.get(claimKey) ?? null, health));
            const device = cdi.get(r.resourceID) ?? r.resourceID;
            devices.set(device, worst(devices.get(device) ?? null, health));
          }
        }
      }
    }
  }
  return { claims, devices };
}

function requestsOf(claim: ResourceClaim): DraClaimRequest[] {
  return (claim.spec?.devices?.requests ?? []).map((r) => {
    const selectors = (s?: { cel?: { expression: string } }[]): string[] =>
      (s ?? []).flatMap((x) => (x.cel ? [x.cel.expression] : []));
    const ex = r.exactly;
    return {
      name: r.name,
      deviceClassName: ex?.deviceClassName ?? null,
      allocationMode: ex?.allocationMode ?? 'ExactCount',
      count: ex ? (ex.allocationMode === 'All' ? 0 : (ex.count ?? 1)) : 0,
      selectors: selectors(ex?.selectors),
      firstAvailable: (r.firstAvailable ?? []).map((s) => ({
        name: s.name,
        deviceClassName: s.deviceClassName,
        allocationMode: s.allocationMode ?? 'ExactCount',
        count: s.allocationMode === 'All' ? 0 : (s.count ?? 1),
        selectors: selectors(s.selectors),
      })),
      adminAccess: ex?.adminAccess === true,
    };
  });
}

function ownerOf(claim: ResourceClaim): DraClaimState['owner'] {
  const podClaimName = claim.metadata.annotations?.[POD_CLAIM_NAME_ANNOTATION];
  const owner = claim.metadata.ownerReferences?.find((o) => o.kind === 'Pod' && o.controller);
  return podClaimName && owner ? { pod: `${claim.metadata.namespace}/${owner.name}`, podClaimName } : null;
}

/** The scheduler's message for a pod that does not fit (PodScheduled False). */
function schedulingMessage(pods: readonly ClaimUser[]): string | null {
  for (const { pod } of pods) {
    const c = pod.status?.conditions?.find((x) => x.type === 'PodScheduled' && x.status === 'False');
    if (c) return c.message ?? c.reason ?? null;
  }
  return null;
}

const emptyCounts = (): DraDeviceCounts => ({
  published: 0,
  usable: 0,
  allocated: 0,
  free: 0,
  unhealthy: 0,
  tainted: 0,
});

/**
 * `fits`: a partition's counters are still left in its counter sets (the scheduler allocates a
 * partition only then), so a free partition whose device is taken by its siblings is not counted free.
 */
function count(counts: DraDeviceCounts, d: DraDeviceState, fits = true): void {
  const tainted = d.taints.some((t) => TAINTING.has(t.effect));
  const usable = d.published && (d.kubeletHealth ?? d.health) !== 'Unhealthy' && !tainted;
  if (d.published) counts.published++;
  if (usable) counts.usable++;
  if (d.allocations.length > 0) counts.allocated++;
  if (usable && d.allocations.length === 0 && fits) counts.free++;
  if (d.health === 'Unhealthy') counts.unhealthy++;
  if (tainted) counts.tainted++;
}

/**
 * The pool's counter sets from its counter-only slices (`spec.sharedCounters`; since 1.35 a slice
 * holds counter sets or devices), each with the devices consuming it and what the allocated ones use:
 * a partition counts once, however many claims share it.
 */
function withCounterSets(
  pool: DraPoolState,
  slices: readonly ResourceSlice[],
  devices: Record<string, DraDeviceState>,
): DraPoolState {
  const sets: Record<string, DraCounterSetState> = {};
  for (const s of slices) {
    for (const cs of s.spec.sharedCounters ?? []) {
      if (sets[cs.name]) continue;
      const capacity = Object.fromEntries(
        Object.entries(cs.counters ?? {}).map(([n, v]) => [n, String(v.value)]),
      );
      const consumers = pool.deviceKeys.filter((k) =>
        devices[k]?.consumesCounters?.some((c) => c.counterSet === cs.name),
      );
      const used = consumers.flatMap((k) => {
        const d = devices[k]!;
        if (d.allocations.length === 0) return [];
        return d.consumesCounters!.filter((c) => c.counterSet === cs.name).map((c) => c.counters);
      });
      sets[cs.name] = {
        name: cs.name,
        slice: s.metadata.name ?? '',
        counters: usage(capacity, used),
        deviceKeys: consumers,
      };
    }
  }
  return Object.keys(sets).length > 0 ? { ...pool, counterSets: sets } : pool;
}

/** Whether what the device consumes is still left in its pool's counter sets. */
function fitsCounters(d: DraDeviceState, sets: Record<string, DraCounterSetState> | undefined): boolean {
  for (const c of d.consumesCounters ?? []) {
    const set = sets?.[c.counterSet];
    // A counter set the pool does not declare: the scheduler cannot allocate the device.
    if (!set) return false;
    for (const [name, amount] of Object.entries(c.counters)) {
      const left = set.counters[name] ? quantity(set.counters[name].left) : null;
      const want = quantity(amount);
      if (!left || !want || left.cmp(want) < 0) return false;
    }
  }
  return true;
}

/** Devices of the in-process drivers, by device key: the source device and its slice entry. */
interface InProcessDevice {
  driver: DraDriverInput;
  device: DraSourceDevice;
  slice: Device;
  reported: DraHealth | null;
}

function inProcessDevices(drivers: readonly DraDriverInput[]): Map<string, InProcessDevice> {
  const out = new Map<string, InProcessDevice>();
  for (const driver of drivers) {
    const told = driver.reported && new Map(driver.reported.map((d) => [d.id, d.health]));
    const put = (device: DraSourceDevice, slice: Device): void => {
      out.set(draDeviceKey(driver.name, driver.poolName, slice.name), {
        driver,
        device,
        slice,
        reported: told ? (told.get(device.id) ?? null) : null,
      });
    };
    if (driver.sliceDevices.length === driver.devices.length) {
      driver.devices.forEach((device, i) => put(device, driver.sliceDevices[i]!));
      continue;
    }
    // A partitioned device is several slice entries (its partitions), each carrying the source
    // device's ID as its `id` attribute; a partition's health and faults are its device's.
    const byId = new Map(driver.devices.map((d) => [d.id, d]));
    for (const slice of driver.sliceDevices) {
      const id = slice.attributes?.['id']?.string;
      const device = id === undefined ? undefined : byId.get(id);
      if (device) put(device, slice);
    }
  }
  return out;
}

/**
 * The device and claim states of the last build, reused while their inputs are the same objects
 * and values, so that the next diff skips them by reference (as BuildCache does for the device
 * plugins' devices): a fault on one of 1,024 devices rebuilds one device, not the pool.
 */
export class DraBuildCache {
  devices = new Map<string, { sig: readonly unknown[]; state: DraDeviceState }>();
  claims = new Map<string, { sig: readonly unknown[]; state: DraClaimState }>();

  /** After the diff: remember the objects the snapshot holds (equal in content to what was built). */
  adopt(dra: DraState): void {
    for (const [key, hit] of this.devices) {
      const kept = dra.devices[key];
      if (kept) hit.state = kept;
    }
    for (const [key, hit] of this.claims) {
      const kept = dra.claims[key];
      if (kept) hit.state = kept;
    }
  }
}

/** `compute()` unless the cache holds a state built from the same signature. */
function reuse<T>(
  cache: Map<string, { sig: readonly unknown[]; state: T }> | null,
  next: Map<string, { sig: readonly unknown[]; state: T }>,
  key: string,
  sig: readonly unknown[],
  compute: () => T,
): T {
  const hit = cache?.get(key);
  const state = hit && sameItems(hit.sig, sig) ? hit.state : compute();
  next.set(key, { sig, state });
  return state;
}

/** A device to show: a slice entry of this node, or an in-process driver's not yet published. */
interface DeviceEntry {
  key: string;
  driver: string;
  pool: string;
  entry: Device;
  published: boolean;
  since: string;
}

export function buildDra(inputs: DraModelInputs, cache: DraBuildCache | null = null): DraState {
  const kube = inputs.kube;
  const pools = currentPools(kube?.slices ?? [], inputs.nodeName);
  const local = inProcessDevices(inputs.drivers);
  const users = claimUsers([...inputs.pods, ...inputs.waitingPods]);
  const cdi = cdiIndex(inputs.podResources);
  const reported = reportedHealth(users, cdi);
  const prepared = preparedClaims(inputs.podResources);
  const faulted = new Map<string, FaultRecord>();
  for (const f of inputs.faults) if (!f.failure) faulted.set(`${f.resource}\n${f.deviceId}`, f);

  // Devices: what the slices publish, then what an in-process driver has but has not published.
  const entries = new Map<string, DeviceEntry>();
  const poolKeys = new Map<string, string[]>();
  const add = (e: Omit<DeviceEntry, 'key'>): void => {
    const key = draDeviceKey(e.driver, e.pool, e.entry.name);
    if (entries.has(key)) return;
    entries.set(key, { key, ...e });
    const pk = `${e.driver}/${e.pool}`;
    const keys = poolKeys.get(pk) ?? [];
    keys.push(key);
    poolKeys.set(pk, keys);
  };
  for (const p of pools.values()) {
    for (const s of p.slices) {
      const since = s.metadata.creationTimestamp ?? new Date(0).toISOString();
      for (const entry of s.spec.devices ?? [])
        add({ driver: p.driver, pool: p.pool, entry, published: true, since });
    }
  }
  for (const [key, d] of local) {
    if (!entries.has(key)) {
      add({
        driver: d.driver.name,
        pool: d.driver.poolName,
        entry: d.slice,
        published: false,
        since: d.device.since,
      });
    }
  }

  // Claims: those of this node's pods (bound or waiting for it) and those allocated on its devices.
  const claims: Record<string, DraClaimState> = {};
  const nextClaims = new Map<string, { sig: readonly unknown[]; state: DraClaimState }>();
  const allocations = new Map<string, DraDeviceAllocation[]>();
  for (const claim of kube?.claims ?? []) {
    const key = `${claim.metadata.namespace}/${claim.metadata.name}`;
    const results = claim.status?.allocation?.devices?.results ?? [];
    const onNode = results.some((r) => entries.has(draDeviceKey(r.driver, r.pool, r.device)));
    const claimPods = users.get(key) ?? [];
    if (!onNode && claimPods.length === 0) continue;
    const allocated = claim.status?.allocation !== undefined;
    const isPrepared = prepared.has(key);
    const health = reported.claims.get(key) ?? null;
    const pendingReason = allocated ? null : schedulingMessage(claimPods);
    const state = reuse(
      cache?.claims ?? null,
      nextClaims,
      key,
      [claim, isPrepared, health, pendingReason],
      () => {
        const reservedFor = (claim.status?.reservedFor ?? [])
          .filter((r) => r.resource === 'pods')
          .map((r) => `${claim.metadata.namespace}/${r.name}`);
        const phase: DraClaimPhase = !allocated
          ? 'pending'
          : isPrepared
            ? 'prepared'
            : reservedFor.length > 0
              ? 'reserved'
              : 'allocated';
        return {
          key,
          namespace: claim.metadata.namespace ?? '',
          name: claim.metadata.name ?? '',
          uid: claim.metadata.uid ?? '',
          owner: ownerOf(claim),
          requests: requestsOf(claim),
          phase,
          devices: results.map((r) => {
            const status = claimDeviceStatus(claim, r);
            return {
              request: r.request,
              driver: r.driver,
              pool: r.pool,
              device: r.device,
              deviceKey: draDeviceKey(r.driver, r.pool, r.device),
              adminAccess: r.adminAccess === true,
              ...(r.shareID !== undefined ? { shareID: r.shareID } : {}),
              ...(r.consumedCapacity ? { consumedCapacity: { ...r.consumedCapacity } } : {}),
              ...(status ? { status } : {}),
            };
          }),
          reservedFor,
          health,
          pendingReason,
          deleting: claim.metadata.deletionTimestamp !== undefined,
          ...(claim.metadata.annotations?.[EXTENDED_RESOURCE_CLAIM_ANNOTATION] === 'true'
            ? { extendedResources: true as const }
            : {}),
        };
      },
    );
    claims[key] = state;
    for (const d of state.devices) {
      if (!entries.has(d.deviceKey)) continue;
      const list = allocations.get(d.deviceKey) ?? [];
      list.push({
        claim: key,
        request: d.request,
        adminAccess: d.adminAccess,
        pods: state.reservedFor,
        ...(d.shareID !== undefined ? { shareID: d.shareID } : {}),
        ...(d.consumedCapacity ? { consumedCapacity: d.consumedCapacity } : {}),
        ...(d.status ? { status: d.status } : {}),
      });
      allocations.set(d.deviceKey, list);
    }
  }

  const devices: Record<string, DraDeviceState> = {};
  const nextDevices = new Map<string, { sig: readonly unknown[]; state: DraDeviceState }>();
  for (const e of entries.values()) {
    const { key, driver, pool, entry, published } = e;
    const mine = local.get(key);
    const fault = mine ? faulted.get(`${driver}\n${mine.device.id}`) : undefined;
    const rules = (kube?.taintRules ?? []).filter((rule) => {
      const sel = rule.spec.deviceSelector ?? {};
      return (
        (sel.driver === undefined || sel.driver === driver) &&
        (sel.pool === undefined || sel.pool === pool) &&
        (sel.device === undefined || sel.device === entry.name)
      );
    });
    const held = allocations.get(key) ?? [];
    const sig = [
      entry,
      published,
      e.since,
      mine?.device,
      mine?.reported,
      fault,
      mine ? null : reported.devices.get(key),
      held
        .map(
          (a) =>
            `${a.claim}|${a.request}|${a.adminAccess}|${a.pods.join(',')}|${a.shareID ?? ''}|${JSON.stringify(a.consumedCapacity ?? null)}|${JSON.stringify(a.status ?? null)}`,
        )
        .join(';'),
      ...rules,
    ];
    devices[key] = reuse(cache?.devices ?? null, nextDevices, key, sig, () => {
      const numaInt = entry.attributes?.[NUMA_NODE_ATTRIBUTE]?.int;
      const numaAttr = numaInt === undefined ? undefined : Number(numaInt);
      const taints: DraTaintView[] = (entry.taints ?? []).map((t) =>
        taintView(t, published ? 'ResourceSlice' : 'ResourceSlice (not published yet)'),
      );
      for (const rule of rules)
        taints.push(taintView(rule.spec.taint, `DeviceTaintRule ${rule.metadata.name}`));
      const capacity = capacityOf(entry);
      const consumes = consumesCountersOf(entry);
      const policies = requestPoliciesOf(entry);
      const shared = entry.allowMultipleAllocations === true;
      return {
        key,
        driver,
        pool,
        name: entry.name,
        sourceId: mine ? mine.device.id : null,
        attributes: attributesOf(entry),
        capacity,
        numaNodes: mine ? [...mine.device.numaNodes] : numaAttr !== undefined ? [numaAttr] : [],
        published,
        health: mine ? mine.device.health : (reported.devices.get(key) ?? 'Unknown'),
        reason: mine ? mine.device.reason : null,
        since: mine ? mine.device.since : e.since,
        kubeletHealth: mine ? mine.reported : null,
        taints,
        fault: fault ? (mine?.reported === 'Unhealthy' ? 'active' : 'pending') : null,
        allocations: held,
        ...(consumes.length > 0 ? { consumesCounters: consumes } : {}),
        ...(shared ? { allowMultipleAllocations: true as const } : {}),
        ...(Object.keys(policies).length > 0 ? { capacityRequestPolicy: policies } : {}),
        ...(shared
          ? {
              sharedCapacity: usage(
                capacity,
                held.flatMap((a) => (a.consumedCapacity ? [a.consumedCapacity] : [])),
              ),
            }
          : {}),
      };
    });
  }
  if (cache) {
    cache.devices = nextDevices;
    cache.claims = nextClaims;
  }

  // Drivers: the in-process ones and every driver with slices on this node.
  const drivers: Record<string, DraDriverState> = {};
  const driverOf = (name: string): DraDriverState =>
    (drivers[name] ??= {
      name,
      inProcess: false,
      registration: null,
      healthStreams: null,
      publication: null,
      pools: {},
      counts: emptyCounts(),
    });
  for (const d of inputs.drivers) {
    const state = driverOf(d.name);
    state.inProcess = true;
    state.registration = { ...d.registration };
    state.healthStreams = d.healthStreams;
    state.publication = {
      generation: d.publication.generation,
      slices: d.publication.slices.length,
      lastPublishedAt: d.publication.lastPublishedAt,
      error: d.publication.error,
    };
  }
  for (const [pk, keys] of poolKeys) {
    const first = devices[keys[0]!]!;
    const pool = pools.get(pk);
    driverOf(first.driver).pools[first.pool] = withCounterSets(
      {
        name: first.pool,
        generation: pool?.generation ?? 0,
        slices: pool ? pool.slices.map((s) => s.metadata.name ?? '') : [],
        deviceKeys: keys,
      },
      pool?.slices ?? [],
      devices,
    );
  }
  for (const p of pools.values()) {
    // A published pool without devices still shows (an empty slice, or counter sets alone).
    driverOf(p.driver).pools[p.pool] ??= withCounterSets(
      {
        name: p.pool,
        generation: p.generation,
        slices: p.slices.map((s) => s.metadata.name ?? ''),
        deviceKeys: [],
      },
      p.slices,
      devices,
    );
  }
  for (const d of Object.values(devices)) {
    const driver = driverOf(d.driver);
    count(driver.counts, d, fitsCounters(d, driver.pools[d.pool]?.counterSets));
  }
  return { drivers, devices, claims };
}

/** Device keys PodResources lists as prepared for a pod's containers (`dynamic_resources`). */
function preparedDeviceKeys(pr: podresources.PodResources | undefined): string[] {
  const out: string[] = [];
  for (const c of pr?.containers ?? [])
    for (const dr of c.dynamicResources ?? [])
      for (const cr of dr.claimResources) out.push(draDeviceKey(cr.driverName, cr.poolName, cr.deviceName));
  return out;
}

/**
 * The DRA side of one pod: its claims (as `dra.claims` has them) and the devices it holds — those
 * allocated to its claims, and those PodResources lists as prepared for it — in a stable order.
 */
export function podDra(
  pod: V1Pod | undefined,
  pr: podresources.PodResources | undefined,
  dra: DraState,
): { claims: (DraClaimState | undefined)[]; deviceKeys: string[] } {
  const claims = pod ? podClaimRefs(pod).map((ref) => (ref.claim ? dra.claims[ref.claim] : undefined)) : [];
  const keys = new Set<string>();
  for (const c of claims) for (const d of c?.devices ?? []) keys.add(d.deviceKey);
  for (const k of preparedDeviceKeys(pr)) keys.add(k);
  return { claims, deviceKeys: [...keys] };
}

/**
 * What the pods section reads of `dra` for every pod at once: every claim and every device a claim
 * or PodResources names. A fault on a free device changes none of these objects.
 */
export function podHeldDra(
  dra: DraState,
  prPods: readonly podresources.PodResources[] | undefined,
): unknown[] {
  const keys = new Set<string>();
  for (const c of Object.values(dra.claims)) for (const d of c.devices) keys.add(d.deviceKey);
  for (const pr of prPods ?? []) for (const k of preparedDeviceKeys(pr)) keys.add(k);
  return [...Object.values(dra.claims), ...[...keys].map((k) => dra.devices[k])];
}

/** summary.dra: counts per driver, per DeviceClass, and the pending claims. */
export function summarizeDra(dra: DraState): DraSummary {
  const drivers: DraSummary['drivers'] = {};
  for (const d of Object.values(dra.drivers)) drivers[d.name] = { ...d.counts };
  const deviceClasses: DraSummary['deviceClasses'] = {};
  const cls = (name: string) => (deviceClasses[name] ??= { allocated: 0, pendingClaims: 0 });
  const pendingClaims: string[] = [];
  for (const c of Object.values(dra.claims)) {
    const classOf = (request: string): string | null => {
      const [main, sub] = request.split('/');
      const r = c.requests.find((x) => x.name === main);
      if (!r) return null;
      return sub === undefined
        ? r.deviceClassName
        : (r.firstAvailable.find((s) => s.name === sub)?.deviceClassName ?? null);
    };
    if (c.phase === 'pending') {
      pendingClaims.push(c.key);
      const classes = new Set(
        c.requests.flatMap((r) =>
          r.deviceClassName ? [r.deviceClassName] : r.firstAvailable.map((s) => s.deviceClassName),
        ),
      );
      for (const name of classes) cls(name).pendingClaims++;
      continue;
    }
    for (const d of c.devices) {
      const name = classOf(d.request);
      if (name) cls(name).allocated++;
    }
  }
  return { drivers, deviceClasses, pendingClaims: pendingClaims.sort() };
}
