// The machine the resource managers allocate from, as the kubelet learns it from cAdvisor's
// MachineInfo and the CPU Manager's topology discovery (pkg/kubelet/cm/cpumanager/topology,
// release-1.33): NUMA nodes with their logical CPUs, memory and pre-allocated hugepages, and each
// CPU's physical core (SMT siblings share one). kubelet-sim builds a synthetic one; a node agent
// builds it from sysfs (`machineFromLayout`), with the Memory Manager's per-NUMA allocatable from
// PodResources.

import { TopologyError } from '../errors.js';

/** Hugepage resources the kubelet knows on x86-64, with their page size in bytes. */
export const HUGEPAGE_SIZES = { 'hugepages-2Mi': 2 * 2 ** 20, 'hugepages-1Gi': 2 ** 30 } as const;
export type HugepageResource = keyof typeof HUGEPAGE_SIZES;

export interface CpuInfo {
  id: number;
  /** Physical core; SMT siblings share it. */
  coreId: number;
  numaNode: number;
  /** All logical CPUs of the core, this one included, ascending (thread_siblings_list). */
  siblings: number[];
}

export interface NumaNode {
  id: number;
  /** Logical CPU IDs on this NUMA node. */
  cpus: number[];
  memoryBytes: number;
  /** Pre-allocated hugepages in bytes, by resource name; only sizes that are configured. */
  hugepages: Partial<Record<HugepageResource, number>>;
}

export interface MachineInfo {
  /** Indexed by NUMA node ID. */
  numaNodes: NumaNode[];
  /** Indexed by CPU ID. */
  cpus: CpuInfo[];
  threadsPerCore: number;
}

/** One NUMA node as a layout source (sysfs) describes it. */
export interface NumaLayout {
  id: number;
  cpuIds: readonly number[];
  memoryBytes: number;
  hugepages?: Partial<Record<HugepageResource, number>>;
}

/**
 * A machine from a NUMA layout and SMT siblings (CPU → its thread siblings, itself included; a CPU
 * without an entry is a core of its own). The core ID is the lowest sibling. NUMA node IDs must be
 * 0…N-1, as the managers index nodes by ID.
 */
export function machineFromLayout(
  nodes: readonly NumaLayout[],
  siblings: ReadonlyMap<number, readonly number[]> = new Map(),
): MachineInfo {
  const ids = nodes.map((n) => n.id).sort((a, b) => a - b);
  if (ids.length === 0 || ids.some((id, i) => id !== i))
    throw new TopologyError('Config', `NUMA node IDs must be 0…N-1, got ${ids.join(', ') || 'none'}`);
  const numaNodes: NumaNode[] = [];
  const cpus: CpuInfo[] = [];
  let threadsPerCore = 1;
  for (const n of nodes) {
    numaNodes[n.id] = {
      id: n.id,
      cpus: [...n.cpuIds].sort((a, b) => a - b),
      memoryBytes: n.memoryBytes,
      hugepages: { ...(n.hugepages ?? {}) },
    };
    for (const c of n.cpuIds) {
      const group = [...(siblings.get(c) ?? [c])].sort((a, b) => a - b);
      threadsPerCore = Math.max(threadsPerCore, group.length);
      cpus[c] = { id: c, coreId: group[0] ?? c, numaNode: n.id, siblings: group };
    }
  }
  return { numaNodes, cpus, threadsPerCore };
}

/**
 * A uniform machine (tests, examples): `cpus` split into contiguous blocks per NUMA node, and within
 * a block `threadsPerCore` consecutive CPUs per core — kubelet-sim's numbering.
 */
export function uniformMachine(o: {
  cpus: number;
  numaNodes: number;
  memoryPerNumaBytes: number;
  threadsPerCore?: number;
  hugepagesPerNumaBytes?: Partial<Record<HugepageResource, number>>;
}): MachineInfo {
  const per = o.cpus / o.numaNodes;
  const threads = o.threadsPerCore ?? 2;
  const layout = Array.from({ length: o.numaNodes }, (_, id) => ({
    id,
    cpuIds: Array.from({ length: per }, (_, i) => id * per + i),
    memoryBytes: o.memoryPerNumaBytes,
    hugepages: { ...(o.hugepagesPerNumaBytes ?? {}) },
  }));
  const siblings = new Map<number, number[]>();
  for (let c = 0; c < o.cpus; c++) {
    const first = c - (c % threads);
    siblings.set(
      c,
      Array.from({ length: threads }, (_, t) => first + t),
    );
  }
  return machineFromLayout(layout, siblings);
}
