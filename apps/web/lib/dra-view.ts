// Pure derivations from a snapshot's `dra` section for the node page: tile keys, the fault target
// of a DRA device, the pods a taint would evict, a device's faults and history, claims in reading
// order, and requests in words. The NUMA map places DRA devices beside device-plugin devices, so
// their tile keys carry a prefix that no extended resource name can start with.
import type {
  DeviceFaultPhase,
  DraCapacityRequestPolicy,
  DraClaimRequest,
  DraClaimState,
  DraCounterSetState,
  DraCounterUsage,
  DraDeviceState,
  DraHealth,
  DraState,
  FaultState,
  FaultTaintRuleStatus,
  NodeEvent,
  NodeSnapshot,
  PodState,
} from '@plugboard/api';

/**
 * Tile keys of DRA devices: `dra:${driver}/${pool}/${device}`. A device-plugin tile is
 * `${resource}/${id}` and a resource name has no ':' (it is a domain-prefixed name).
 */
const DRA_TILE_PREFIX = 'dra:';

/**
 * Whether the node has anything DRA to show: a gateway with DRA support always sends `dra`, empty
 * on a node without drivers or claims; the page then shows no DRA sections, like an older gateway.
 */
export function hasDra(dra: DraState | undefined): dra is DraState {
  return (
    dra !== undefined &&
    (Object.keys(dra.drivers).length > 0 ||
      Object.keys(dra.devices).length > 0 ||
      Object.keys(dra.claims).length > 0)
  );
}

export function draTileKey(deviceKey: string): string {
  return DRA_TILE_PREFIX + deviceKey;
}

/** The DRA device key of a tile key, or null for a device-plugin tile. */
export function draDeviceKeyOf(tileKey: string): string | null {
  return tileKey.startsWith(DRA_TILE_PREFIX) ? tileKey.slice(DRA_TILE_PREFIX.length) : null;
}

export function draDeviceOfTile(node: NodeSnapshot, tileKey: string): DraDeviceState | null {
  const key = draDeviceKeyOf(tileKey);
  return key === null ? null : (node.dra?.devices[key] ?? null);
}

/**
 * What POST /api/v1/faults names for a DRA device: the driver as `resource`; for a driver this
 * gateway runs, the device source's ID as `deviceId` (its ResourceSlice name when the source ID is
 * not known) and the fault goes through the driver (`via: 'driver'`); for any other driver
 * `<pool>/<device>` (never ambiguous) and the fault is a DeviceTaintRule (`via: 'taint-rule'`).
 */
export function draFaultTarget(
  dra: DraState,
  d: DraDeviceState,
): { resource: string; deviceId: string; via: 'driver' | 'taint-rule' } {
  if (dra.drivers[d.driver]?.inProcess) {
    return { resource: d.driver, deviceId: d.sourceId ?? d.name, via: 'driver' };
  }
  return { resource: d.driver, deviceId: `${d.pool}/${d.name}`, via: 'taint-rule' };
}

/** Pod keys using the device: every allocation's `reservedFor`, once each, sorted. */
export function draDevicePods(d: DraDeviceState): string[] {
  return [...new Set(d.allocations.flatMap((a) => a.pods))].sort();
}

/**
 * The pods a NoExecute taint on the device would evict: those its allocations are reserved for
 * (the device taint eviction controller evicts the pods of claims allocated the tainted device).
 * A pod the snapshot does not list (yet) is still named.
 */
export function draEvictionPreview(
  node: NodeSnapshot,
  d: DraDeviceState,
): { key: string; pod: PodState | null }[] {
  return draDevicePods(d).map((key) => ({ key, pod: node.pods[key] ?? null }));
}

/** Faults the gateway holds on the device (by source ID or ResourceSlice name, or its DeviceTaintRule). */
export function draFaultsForDevice(node: NodeSnapshot, d: DraDeviceState): FaultState[] {
  return Object.values(node.faults).filter((f) =>
    f.taintRule
      ? isRuleOf(f, d)
      : f.resource === d.driver && (f.deviceId === d.sourceId || f.deviceId === d.name),
  );
}

function isRuleOf(f: FaultState, d: DraDeviceState): boolean {
  const r = f.taintRule;
  return !!r && r.driver === d.driver && r.pool === d.pool && r.device === d.name;
}

/** The faults on the device that are its DeviceTaintRule (a driver this gateway does not run), oldest first. */
export function draTaintRuleFaults(node: NodeSnapshot, d: DraDeviceState): FaultState[] {
  return Object.values(node.faults)
    .filter((f) => isRuleOf(f, d))
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/**
 * The device's DeviceTaintRule as observed, from its newest fault (the newest fault's taint is the
 * rule's): the fault, the rule's name and status. null when no fault holds a rule on the device.
 */
export function draTaintRuleView(
  node: NodeSnapshot,
  d: DraDeviceState,
): { fault: FaultState; name: string; status: FaultTaintRuleStatus | null } | null {
  const fault = draTaintRuleFaults(node, d).at(-1);
  if (!fault?.taintRule) return null;
  return { fault, name: fault.taintRule.name, status: fault.taintRuleStatus ?? null };
}

/** Where a DeviceTaintRule fault stands, as a tile's switch shows it: 'active' once the rule is observed with its effect. */
export function draTaintRulePhase(node: NodeSnapshot, d: DraDeviceState): DeviceFaultPhase | null {
  const faults = draTaintRuleFaults(node, d);
  if (faults.length === 0) return null;
  return faults.at(-1)!.state === 'active' ? 'active' : 'pending';
}

/** Events about the device (its name, source ID or key, for its driver), newest first. */
export function draDeviceHistory(node: NodeSnapshot, d: DraDeviceState): NodeEvent[] {
  const ids = new Set([d.name, d.key, ...(d.sourceId ? [d.sourceId] : [])]);
  return node.events
    .filter((e) => (e.resource === null || e.resource === d.driver) && e.deviceIds.some((id) => ids.has(id)))
    .reverse();
}

/** The kubelet was told something else than the driver says (null: no stream, nothing told). */
export function kubeletDisagrees(d: DraDeviceState): boolean {
  return d.kubeletHealth !== null && d.kubeletHealth !== d.health;
}

/** The taints that keep claims off the device (None is informational). */
export function effectiveTaints(d: DraDeviceState): DraDeviceState['taints'] {
  return d.taints.filter((t) => t.effect !== 'None');
}

const PHASE_ORDER: Record<DraClaimState['phase'], number> = {
  pending: 0,
  allocated: 1,
  reserved: 2,
  prepared: 3,
};

/** Pending claims first (they need attention), then by phase and key. */
export function claimsInOrder(dra: DraState): DraClaimState[] {
  return Object.values(dra.claims).sort(
    (a, b) => PHASE_ORDER[a.phase] - PHASE_ORDER[b.phase] || a.key.localeCompare(b.key),
  );
}

/** "1 × gpu.example.com", "all of gpu.example.com", "first available of: …". */
export function describeRequest(r: DraClaimRequest): string {
  const one = (cls: string, mode: 'ExactCount' | 'All', count: number) =>
    mode === 'All' ? `all of ${cls}` : `${count} × ${cls}`;
  if (r.deviceClassName !== null) return one(r.deviceClassName, r.allocationMode, r.count);
  return `first available of: ${r.firstAvailable
    .map((s) => `${s.name} (${one(s.deviceClassName, s.allocationMode, s.count)})`)
    .join(', ')}`;
}

/** The worst of several healths (Unhealthy > Unknown > Healthy). */
export function worstHealth(hs: readonly DraHealth[]): DraHealth {
  if (hs.includes('Unhealthy')) return 'Unhealthy';
  if (hs.includes('Unknown')) return 'Unknown';
  return 'Healthy';
}

/** The DRA tiles of a pod's claims (its DRA footprint on the NUMA map). */
export function draPodTiles(node: NodeSnapshot, podKey: string): string[] {
  const dra = node.dra;
  const pod = node.pods[podKey];
  if (!dra || !pod) return [];
  const out = new Set<string>();
  for (const ref of pod.claims ?? []) {
    const claim = ref.claim ? dra.claims[ref.claim] : undefined;
    for (const d of claim?.devices ?? []) out.add(draTileKey(d.deviceKey));
  }
  for (const c of pod.containers) {
    for (const r of c.dynamicResources) {
      for (const d of r.devices) out.add(draTileKey(`${d.driver}/${d.pool}/${d.device}`));
    }
  }
  return [...out];
}

/** "memory 20Gi used of 40Gi, 20Gi left" (a counter set's counter or a shared device's capacity). */
export function describeUsage(name: string, u: DraCounterUsage): string {
  return `${name} ${u.used} used of ${u.capacity}, ${u.left} left`;
}

/** "20Gi memory" for a share's or a partition's amounts, several joined with ", "; "" for none. */
export function describeAmounts(amounts: Record<string, string>): string {
  return Object.entries(amounts)
    .map(([name, v]) => `${v} ${name}`)
    .join(', ');
}

/** A capacity's request policy in words: "default 10Gi; 10Gi and up in steps of 10Gi". */
export function describeRequestPolicy(p: DraCapacityRequestPolicy): string {
  const parts: string[] = [];
  if (p.default !== undefined) parts.push(`default ${p.default}`);
  if (p.validRange) {
    const { min, max, step } = p.validRange;
    parts.push(
      `${max !== undefined ? `${min} to ${max}` : `${min} and up`}${step !== undefined ? ` in steps of ${step}` : ''}`,
    );
  }
  if (p.validValues) parts.push(`one of ${p.validValues.join(', ')}`);
  return parts.join('; ');
}

/** The counter set a partition consumes (its first), as its pool reports it; null for no partition. */
export function draCounterSetOf(
  node: NodeSnapshot,
  d: DraDeviceState,
): { set: DraCounterSetState; consumes: Record<string, string> } | null {
  const c = d.consumesCounters?.[0];
  if (!c) return null;
  const set = node.dra?.drivers[d.driver]?.pools[d.pool]?.counterSets?.[c.counterSet];
  return set ? { set, consumes: c.counters } : null;
}

/** A DRA device on the map: a device of its own, or the partitions of one counter set together. */
export type DraMapEntry =
  | { kind: 'device'; device: DraDeviceState }
  | { kind: 'counter-set'; key: string; set: DraCounterSetState; devices: DraDeviceState[] };

/**
 * A driver's devices on one NUMA node in map order, the partitions of each counter set gathered
 * where the first of them is (the counter set is the physical device; the API gives it no NUMA node
 * of its own, so it sits with its partitions).
 */
export function draMapEntries(node: NodeSnapshot, devices: readonly DraDeviceState[]): DraMapEntry[] {
  const out: DraMapEntry[] = [];
  const groups = new Map<string, Extract<DraMapEntry, { kind: 'counter-set' }>>();
  for (const d of devices) {
    const of = draCounterSetOf(node, d);
    if (!of) {
      out.push({ kind: 'device', device: d });
      continue;
    }
    const key = `${d.driver}/${d.pool}/${of.set.name}`;
    let g = groups.get(key);
    if (!g) {
      g = { kind: 'counter-set', key, set: of.set, devices: [] };
      groups.set(key, g);
      out.push(g);
    }
    g.devices.push(d);
  }
  return out;
}
