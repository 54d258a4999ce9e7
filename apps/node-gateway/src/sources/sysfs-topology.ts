// The host's NUMA layout from sysfs, read once at start: which CPUs belong to which NUMA node
// (devices/system/node/node<N>/cpulist), each node's memory (node<N>/meminfo) and SMT siblings
// (devices/system/cpu/cpu<N>/topology/thread_siblings_list). PodResources reports exclusive
// cpu_ids without their NUMA node, so this is how the gateway places a pod's CPUs on the NUMA map
// — on a real node from /sys, against kubelet-sim from the fixture it writes (gateway.topology.sysfsRoot).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface SysfsNumaNode {
  id: number;
  cpuIds: number[];
  /** MemTotal of the node in bytes, null when meminfo is missing or unreadable. */
  memTotalBytes: number | null;
}

export interface SysfsTopology {
  root: string;
  nodes: SysfsNumaNode[];
  /** CPU ID → its SMT siblings (itself included), when the kernel lists them. */
  siblings: Map<number, number[]>;
  /** CPU ID → NUMA node. */
  numaOfCpu: Map<number, number>;
}

export type SysfsResult = { topology: SysfsTopology; reason: null } | { topology: null; reason: string };

/** Parses a kernel cpulist (`0-3,8,10-11`); null when it is not one. */
export function parseKernelCpuList(text: string): number[] | null {
  const ids: number[] = [];
  const trimmed = text.trim();
  if (trimmed === '') return ids;
  for (const range of trimmed.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(range);
    if (!m) return null;
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo || hi - lo > 1 << 16) return null;
    for (let id = lo; id <= hi; id++) ids.push(id);
  }
  return [...new Set(ids)].sort((a, b) => a - b);
}

const MEMTOTAL = /^Node\s+\d+\s+MemTotal:\s+(\d+)\s+kB$/m;

/** Reads the NUMA layout under `root` (normally /sys); never throws — a missing tree is a reason. */
export function readSysfsTopology(root: string): SysfsResult {
  const nodeDir = join(root, 'devices', 'system', 'node');
  let entries: string[];
  try {
    entries = readdirSync(nodeDir);
  } catch (err) {
    return {
      topology: null,
      reason: `cannot read ${nodeDir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    };
  }
  const nodes: SysfsNumaNode[] = [];
  for (const name of entries) {
    const m = /^node(\d+)$/.exec(name);
    if (!m) continue;
    let cpuIds: number[] | null;
    try {
      cpuIds = parseKernelCpuList(readFileSync(join(nodeDir, name, 'cpulist'), 'utf8'));
    } catch {
      cpuIds = null;
    }
    if (!cpuIds)
      return { topology: null, reason: `${join(nodeDir, name, 'cpulist')} is missing or malformed` };
    let memTotalBytes: number | null = null;
    try {
      const mem = MEMTOTAL.exec(readFileSync(join(nodeDir, name, 'meminfo'), 'utf8'));
      if (mem) memTotalBytes = Number(mem[1]) * 1024;
    } catch {
      memTotalBytes = null;
    }
    nodes.push({ id: Number(m[1]), cpuIds, memTotalBytes });
  }
  if (nodes.length === 0) return { topology: null, reason: `no NUMA nodes under ${nodeDir}` };
  nodes.sort((a, b) => a.id - b.id);
  const numaOfCpu = new Map<number, number>();
  for (const n of nodes) for (const c of n.cpuIds) numaOfCpu.set(c, n.id);
  const siblings = new Map<number, number[]>();
  for (const c of numaOfCpu.keys()) {
    try {
      const list = parseKernelCpuList(
        readFileSync(
          join(root, 'devices', 'system', 'cpu', `cpu${c}`, 'topology', 'thread_siblings_list'),
          'utf8',
        ),
      );
      if (list) siblings.set(c, list);
    } catch {
      // Offline CPUs have no topology directory; they simply have no known siblings.
    }
  }
  return { topology: { root, nodes, siblings, numaOfCpu }, reason: null };
}
