// Pure derivations for NUMA placement views: who holds which CPU, how much memory pods pinned on
// each NUMA node, one pod's footprint (devices + CPUs + memory), the misaligned pods, and the
// wording of Topology Manager hints. Free of React so they are tested directly.
import type { AdmissionView, NodeSnapshot, PodState, TopologyHintView } from '@plugboard/api';

export interface CpuCell {
  id: number;
  /** Pod key holding the CPU exclusively, null for the shared pool. */
  owner: string | null;
  /** Reserved for the system (reservedSystemCPUs): never exclusive. */
  reserved: boolean;
}

export interface MemoryUse {
  type: string;
  /** What the kubelet reports allocatable on this NUMA node (bytes). */
  allocatable: number;
  /** Pinned by pods (bytes; a block over several NUMA nodes counts evenly on each). */
  pinned: number;
  /** Pinned bytes per pod key. */
  byPod: Record<string, number>;
}

export interface NumaResources {
  /** SMT sibling groups (physical cores) with their CPUs, or one CPU per group when unknown. */
  cores: CpuCell[][];
  memory: MemoryUse[];
}

/** CPU ID → the pod holding it exclusively (PodResources cpu_ids). */
export function cpuOwners(node: NodeSnapshot): Map<number, string> {
  const out = new Map<number, string>();
  for (const pod of Object.values(node.pods))
    for (const c of pod.containers) for (const id of c.cpuIds) out.set(id, pod.key);
  return out;
}

/** CPUs and memory of one NUMA node with their current holders. */
export function numaResources(
  node: NodeSnapshot,
  numaKey: string,
  owners: Map<number, string>,
): NumaResources {
  const topo = node.numa.nodes[numaKey];
  if (!topo) return { cores: [], memory: [] };
  const reserved = new Set(topo.reservedCpuIds ?? node.topology?.kubelet?.reservedCpuIds ?? []);
  const groups = topo.cpuCores && topo.cpuCores.length ? topo.cpuCores : topo.cpuIds.map((id) => [id]);
  const cores = groups.map((g) =>
    g.map((id) => ({ id, owner: owners.get(id) ?? null, reserved: reserved.has(id) })),
  );
  const memory: MemoryUse[] = Object.entries(topo.memory).map(([type, allocatable]) => ({
    type,
    allocatable,
    pinned: 0,
    byPod: {},
  }));
  const id = topo.id;
  if (id !== null) {
    for (const pod of Object.values(node.pods)) {
      for (const c of pod.containers) {
        for (const m of c.memory) {
          if (!m.numaNodes.includes(id)) continue;
          let use = memory.find((u) => u.type === m.type);
          if (!use) memory.push((use = { type: m.type, allocatable: 0, pinned: 0, byPod: {} }));
          const share = m.size / m.numaNodes.length;
          use.pinned += share;
          use.byPod[pod.key] = (use.byPod[pod.key] ?? 0) + share;
        }
      }
    }
  }
  return { cores, memory };
}

/** The exclusive CPUs a pod holds. */
export function podCpuSet(node: NodeSnapshot, podKey: string): Set<number> {
  const pod = node.pods[podKey];
  return new Set(pod ? pod.containers.flatMap((c) => c.cpuIds) : []);
}

/** Pods whose devices, exclusive CPUs and pinned memory are not on one NUMA node. */
export function misalignedPods(node: NodeSnapshot): PodState[] {
  return Object.values(node.pods)
    .filter((p) => p.numaAlignment.verdict === 'spread')
    .sort((a, b) => a.key.localeCompare(b.key));
}

/** Device tile keys (`resource/physical id`) held by misaligned pods. */
export function misalignedTiles(node: NodeSnapshot): Set<string> {
  const out = new Set<string>();
  for (const pod of misalignedPods(node)) {
    for (const c of pod.containers) {
      for (const keys of Object.values(c.devices)) {
        for (const k of keys) {
          const d = node.devices[k];
          if (d) out.add(`${d.resource}/${d.replicaOf ?? d.id}`);
        }
      }
    }
  }
  return out;
}

/** "NUMA 0", "NUMA 0+1", "any NUMA node", with "(preferred)". */
export function hintLabel(h: TopologyHintView | null): string {
  if (!h) return 'no merge (policy none)';
  const where = h.numaNodes === null ? 'any NUMA node' : `NUMA ${h.numaNodes.join('+')}`;
  return `${where}${h.preferred ? ' (preferred)' : ' (not preferred)'}`;
}

/** One provider's hints as text: "no preference", "cannot be satisfied", or the hint list. */
export function hintsLabel(hints: TopologyHintView[] | null): string {
  if (hints === null) return 'no preference';
  if (hints.length === 0) return 'cannot be satisfied on any NUMA node';
  return hints
    .map((h) => `${h.numaNodes === null ? 'any' : h.numaNodes.join('+')}${h.preferred ? '★' : ''}`)
    .join('  ');
}

/** A one-line summary of an admission decision (dry run or real). */
export function admissionSummary(a: AdmissionView): string {
  const merged = a.steps.map((s) => s.merged).find((m) => m !== null) ?? null;
  if (a.result === 'rejected') {
    return `rejected: ${a.reason ?? 'unknown reason'}${a.message ? ` — ${a.message}` : ''}`;
  }
  const affinities = [...new Set(a.containers.map((c) => (c.affinity ? c.affinity.join('+') : 'any')))];
  return `admitted by ${a.policy} (scope ${a.scope}) on NUMA ${affinities.join(', ')}${
    merged && !merged.preferred ? ' — not the preferred (aligned) placement' : ''
  }`;
}

export interface PodRequest {
  namespace: string;
  name: string;
  /** Device counts by resource name. */
  devices: Record<string, number>;
  /** Whole CPUs (a Guaranteed pod gets them exclusively under the static CPU policy). */
  cpus: number;
  memoryGiB: number;
}

/**
 * The Pod object the "try to place" form sends: one container; cpu and memory as limits (the API
 * server defaults requests to them), so with both set the pod is Guaranteed.
 */
export function podFromRequest(r: PodRequest): Record<string, unknown> {
  const limits: Record<string, string> = {};
  for (const [resource, n] of Object.entries(r.devices)) if (n > 0) limits[resource] = String(n);
  if (r.cpus > 0) limits.cpu = String(r.cpus);
  if (r.memoryGiB > 0) limits.memory = `${r.memoryGiB}Gi`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: r.name,
      namespace: r.namespace,
      labels: { 'app.kubernetes.io/created-by': 'plugboard-try-to-place' },
    },
    spec: { restartPolicy: 'Always', containers: [{ name: 'main', resources: { limits } }] },
  };
}
