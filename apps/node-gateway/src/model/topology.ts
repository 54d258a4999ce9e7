// NUMA placement in the node model, pure: the host layout (CPUs and memory per NUMA node from
// sysfs), the kubelet's resource-manager settings (its configz, else a kubelet-sim's control API),
// the admission decisions (kubelet-sim's control API only), whether "try to place" can predict and
// admit, and per pod what sits where — devices, exclusive CPUs, pinned memory — with an alignment
// verdict and its reason, plus the plugin's preferred-allocation reasons behind its devices.
// build.ts calls these; no I/O here.
import type {
  AdmissionView,
  AlignmentPart,
  ContainerState,
  NodeTopology,
  NumaAlignment,
  PodTopology,
  PreferredAllocationView,
} from '@plugboard/api';

export interface HostTopology {
  root: string;
  nodes: readonly { id: number; cpuIds: readonly number[]; memTotalBytes: number | null }[];
  numaOfCpu: ReadonlyMap<number, number>;
  siblings: ReadonlyMap<number, readonly number[]>;
}

/** The kubelet's resource-manager settings as the gateway uses them. */
export interface KubeletSettings {
  /** The kubelet's configz (any kubelet), or kubelet-sim's control API. */
  source: 'configz' | 'kubelet-sim';
  topologyManagerPolicy: string;
  topologyManagerScope: string;
  cpuManagerPolicy: string;
  memoryManagerPolicy: string;
  reservedCpuIds: number[];
}

/** What kubelet-sim's control API reports: the settings and the admission decisions. */
export interface KubeletControlState {
  topologyManagerPolicy: string;
  topologyManagerScope: string;
  cpuManagerPolicy: string;
  memoryManagerPolicy: string;
  reservedCpuIds: number[];
  /** Admission decisions by `${namespace}/${name}`. */
  admissions: ReadonlyMap<string, AdmissionView>;
}

/** An availability with the reason when it is not there. */
export interface Availability {
  available: boolean;
  reason: string | null;
}

export interface PreferredRecord {
  resource: string;
  chosen: readonly string[];
  reason: string;
  at: string;
}

export interface TopologyInput {
  sysfsRoot: string;
  host: HostTopology | null;
  hostReason: string | null;
  /** The kubelet's settings: from its configz, else from kubelet-sim's control API; null with the reason. */
  kubelet: KubeletSettings | null;
  kubeletReason: string | null;
  /** Admission decisions by `${namespace}/${name}`: kubelet-sim's control API only (empty otherwise). */
  admissions: ReadonlyMap<string, AdmissionView>;
  /** Why "try to place" cannot predict whatever the kubelet says (PodResources off), else null. */
  predictionBlocked: string | null;
  /** Admitting a previewed pod: kubelet-sim's control API behind the kubeconfig. */
  admit: Availability;
  /** Recent GetPreferredAllocation answers of this node's plugins, oldest first. */
  preferred: readonly PreferredRecord[];
}

/** Whether "try to place" can predict, or why not: it needs the host layout and the kubelet's settings. */
export function predictionAvailability(t: TopologyInput): Availability {
  if (t.predictionBlocked) return { available: false, reason: t.predictionBlocked };
  if (!t.host)
    return { available: false, reason: `the NUMA layout is unknown (${t.hostReason ?? 'no sysfs'})` };
  if (!t.kubelet)
    return {
      available: false,
      reason: `the kubelet's settings are unknown (${t.kubeletReason ?? 'no source'})`,
    };
  return { available: true, reason: null };
}

export function nodeTopology(t: TopologyInput): NodeTopology {
  return {
    sysfs: { root: t.sysfsRoot, available: t.host !== null, reason: t.hostReason },
    kubelet: t.kubelet && { ...t.kubelet, reservedCpuIds: [...t.kubelet.reservedCpuIds] },
    kubeletReason: t.kubelet ? null : t.kubeletReason,
    placement: { ...predictionAvailability(t), admit: { ...t.admit } },
  };
}

/** SMT sibling groups of a NUMA node's CPUs, each listed once, in CPU order. */
export function coresOf(host: HostTopology, cpuIds: readonly number[]): number[][] {
  const seen = new Set<number>();
  const out: number[][] = [];
  for (const c of cpuIds) {
    if (seen.has(c)) continue;
    const group = [...(host.siblings.get(c) ?? [c])].filter((x) => cpuIds.includes(x));
    for (const x of group) seen.add(x);
    out.push(group.length ? group : [c]);
  }
  return out;
}

const GIB = 2 ** 30;
const MIB = 2 ** 20;
export function formatBytes(bytes: number): string {
  if (bytes >= GIB && bytes % (GIB / 4) === 0) return `${bytes / GIB} GiB`;
  if (bytes >= MIB) return `${Math.round((bytes / MIB) * 10) / 10} MiB`;
  return `${bytes} B`;
}

const list = (ids: readonly number[]): string => ids.join(', ');

function devicePart(
  kind: 'devices' | 'dra-devices',
  name: string,
  container: string,
  keys: readonly string[],
  numa: (key: string) => readonly number[],
): AlignmentPart {
  const nodes = new Set<number>();
  for (const k of keys) for (const n of numa(k)) nodes.add(n);
  return { kind, name, container, count: keys.length, numaNodes: [...nodes].sort((a, b) => a - b) };
}

/**
 * What a pod's containers hold, per resource kind, with the NUMA nodes they sit on. DRA devices
 * (the claims PodResources lists for a container) are one part per driver, on the NUMA nodes
 * `draDeviceNuma` gives for their `driver/pool/device` key.
 */
export function alignmentParts(
  containers: readonly ContainerState[],
  deviceNuma: (key: string) => readonly number[],
  draDeviceNuma: (key: string) => readonly number[] = () => [],
): AlignmentPart[] {
  const parts: AlignmentPart[] = [];
  for (const c of containers) {
    for (const [resource, keys] of Object.entries(c.devices))
      parts.push(devicePart('devices', resource, c.name, keys, deviceNuma));
    const byDriver = new Map<string, Set<string>>();
    for (const dr of c.dynamicResources) {
      for (const d of dr.devices) {
        let keys = byDriver.get(d.driver);
        if (!keys) byDriver.set(d.driver, (keys = new Set()));
        keys.add(`${d.driver}/${d.pool}/${d.device}`);
      }
    }
    for (const [driver, keys] of byDriver)
      parts.push(devicePart('dra-devices', driver, c.name, [...keys], draDeviceNuma));
    if (c.cpuIds.length) {
      parts.push({
        kind: 'cpus',
        name: 'cpu',
        container: c.name,
        count: c.cpuIds.length,
        numaNodes: [...new Set(c.cpuNumaNodes ?? [])].sort((a, b) => a - b),
      });
    }
    for (const m of c.memory) {
      parts.push({
        kind: 'memory',
        name: m.type,
        container: c.name,
        count: m.size,
        numaNodes: [...m.numaNodes],
      });
    }
  }
  return parts;
}

function describePart(p: AlignmentPart): string {
  if (p.kind === 'devices') return `${p.name} ×${p.count}`;
  if (p.kind === 'dra-devices') return `${p.name} ×${p.count} (DRA)`;
  if (p.kind === 'cpus') return `${p.count} exclusive CPU${p.count === 1 ? '' : 's'}`;
  return `${p.name} ${formatBytes(p.count)}`;
}

/**
 * The verdict: aligned when every NUMA-bound part sits on one node, spread over N nodes
 * otherwise, no preference when nothing has NUMA affinity. The reason names what sits where and,
 * when the kubelet-sim told, what the Topology Manager decided. DRA devices count where they are:
 * the verdict says where the pod's devices really sit, and a spread that involves them says the
 * scheduler placed them, since the Topology Manager has no DRA hint provider to align them.
 */
export function alignmentOf(
  parts: readonly AlignmentPart[],
  admission: AdmissionView | null,
  cpusUnmapped: boolean,
): NumaAlignment {
  const bound = parts.filter((p) => p.numaNodes.length > 0);
  const all = [...new Set(bound.flatMap((p) => p.numaNodes))].sort((a, b) => a - b);
  const unmapped = cpusUnmapped ? ' (the NUMA node of its exclusive CPUs is unknown: no sysfs topology)' : '';
  const merged = admission?.steps.find((s) => s.merged && s.merged.numaNodes !== null)?.merged ?? null;
  const policyNote =
    admission && admission.result === 'admitted' && merged && !merged.preferred
      ? `; Topology Manager ${admission.policy} admitted a hint that was not preferred`
      : '';
  const draNote = bound.some((p) => p.kind === 'dra-devices')
    ? '; DRA devices are placed by the scheduler (matchAttribute on resource.kubernetes.io/numaNode), not the Topology Manager'
    : '';
  if (all.length === 0) {
    return {
      verdict: 'no-preference',
      numaNodes: [],
      reason: `no device, exclusive CPU or pinned memory of the pod has NUMA affinity${unmapped}`,
      parts: [...parts],
    };
  }
  if (all.length === 1) {
    return {
      verdict: 'aligned',
      numaNodes: all,
      reason: `aligned on NUMA node ${all[0]}: ${bound.map(describePart).join(', ')}${unmapped}`,
      parts: [...parts],
    };
  }
  return {
    verdict: 'spread',
    numaNodes: all,
    reason: `spread over ${all.length} NUMA nodes (${list(all)}): ${bound
      .map((p) => `${describePart(p)} on ${list(p.numaNodes)}`)
      .join('; ')}${policyNote}${draNote}${unmapped}`,
    parts: [...parts],
  };
}

/** The plugin's most recent preferred-allocation answers that match this pod's device sets. */
export function preferredFor(
  containers: readonly ContainerState[],
  preferred: readonly PreferredRecord[],
): PreferredAllocationView[] {
  const out: PreferredAllocationView[] = [];
  for (const c of containers) {
    for (const [resource, keys] of Object.entries(c.devices)) {
      const ids = new Set(keys.map((k) => k.slice(resource.length + 1)));
      for (let i = preferred.length - 1; i >= 0; i--) {
        const p = preferred[i]!;
        if (p.resource !== resource || p.chosen.length === 0 || !p.chosen.every((id) => ids.has(id)))
          continue;
        out.push({ container: c.name, resource, deviceIds: [...p.chosen], reason: p.reason, at: p.at });
        break;
      }
    }
  }
  return out;
}

export function podTopology(
  key: string,
  containers: readonly ContainerState[],
  t: TopologyInput | null,
): PodTopology {
  const admission = t?.admissions.get(key) ?? null;
  return {
    policy: t?.kubelet?.topologyManagerPolicy ?? 'unknown',
    scope: t?.kubelet?.topologyManagerScope ?? 'unknown',
    admission,
    preferredAllocations: t ? preferredFor(containers, t.preferred) : [],
  };
}

/** The fields of a Pod the rejection check reads (structurally a V1Pod). */
interface PodLike {
  metadata?: { uid?: string; name?: string; namespace?: string };
  status?: { phase?: string; reason?: string; message?: string };
}

export interface AdmissionRejection {
  uid: string;
  namespace: string;
  name: string;
  reason: string;
  message: string;
}

/**
 * Pods the kubelet refused at admission that `seen` does not hold yet: a rejected pod is Failed
 * with the rejection's reason and a "Pod was rejected: …" message (the kubelet's rejectPod), on
 * a real cluster as on kubelet-sim. Updates `seen` (forgetting pods that are gone).
 */
export function newAdmissionRejections(pods: readonly PodLike[], seen: Set<string>): AdmissionRejection[] {
  const out: AdmissionRejection[] = [];
  const present = new Set<string>();
  for (const p of pods) {
    const uid = p.metadata?.uid;
    const message = p.status?.message ?? '';
    if (!uid || p.status?.phase !== 'Failed' || !message.startsWith('Pod was rejected:')) continue;
    present.add(uid);
    if (seen.has(uid)) continue;
    seen.add(uid);
    out.push({
      uid,
      namespace: p.metadata?.namespace ?? 'default',
      name: p.metadata?.name ?? '',
      reason: p.status.reason ?? 'Rejected',
      message,
    });
  }
  for (const uid of seen) if (!present.has(uid)) seen.delete(uid);
  return out;
}
