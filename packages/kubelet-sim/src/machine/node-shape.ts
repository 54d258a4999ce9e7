// The simulated machine, standing in for what the kubelet learns from cAdvisor's MachineInfo
// (pkg/kubelet/cadvisor) and the CPU Manager's topology discovery (cm/cpumanager/topology):
// NUMA nodes with their logical CPUs (grouped into physical cores of SMT siblings), memory and
// pre-allocated hugepages per NUMA node. The CPU, Memory and Topology Managers allocate from it,
// PodResources reports it and sysfs.ts writes it out the way Linux exposes it under /sys, so a
// node agent can learn the CPU↔NUMA mapping as on a real node.

import {
  HUGEPAGE_SIZES,
  type CpuInfo,
  type HugepageResource,
  type MachineInfo,
  type NumaNode,
} from '@plugboard/topology';
import { KubeletSimError } from '../errors.js';

export { HUGEPAGE_SIZES, type CpuInfo, type HugepageResource, type NumaNode } from '@plugboard/topology';

/** The machine (@plugboard/topology's MachineInfo) plus what the node reports beside it. */
export interface NodeShape extends MachineInfo {
  /** Max pods (node status `pods`), 110 like the kubelet's default. */
  maxPods: number;
}

export interface NodeShapeOptions {
  cpus?: number;
  numaNodes?: number;
  memoryPerNumaBytes?: number;
  /** SMT threads per physical core; default 2 when every NUMA node has an even CPU count, else 1. */
  threadsPerCore?: number;
  /** Pre-allocated hugepages per NUMA node, in bytes (a multiple of the page size). */
  hugepagesPerNumaBytes?: Partial<Record<HugepageResource, number>>;
  /** Pods the node admits (node status `pods`, the kubelet's --max-pods); default 110. */
  maxPods?: number;
}

export const DEFAULT_CPUS = 8;
export const DEFAULT_NUMA_NODES = 1;
export const DEFAULT_MEMORY_PER_NUMA_BYTES = 16 * 2 ** 30;
/** The kubelet's bitmask holds at most 64 NUMA nodes; hint generation is exponential beyond ~8. */
const MAX_NUMA_NODES = 16;

/**
 * CPUs are split into contiguous blocks per NUMA node (0-3 on node 0, 4-7 on node 1, …), and
 * within a block consecutive CPUs are SMT siblings of one core (0,1 / 2,3 / …), the numbering
 * AMD and many VMs use.
 */
export function buildNodeShape(opts: NodeShapeOptions = {}): NodeShape {
  const cpus = opts.cpus ?? DEFAULT_CPUS;
  const numa = opts.numaNodes ?? DEFAULT_NUMA_NODES;
  const memory = opts.memoryPerNumaBytes ?? DEFAULT_MEMORY_PER_NUMA_BYTES;
  if (!Number.isInteger(numa) || numa < 1 || numa > MAX_NUMA_NODES)
    throw new KubeletSimError(
      'Config',
      `numaNodes: must be an integer from 1 to ${MAX_NUMA_NODES}, got ${numa}`,
    );
  if (!Number.isInteger(cpus) || cpus < numa) {
    throw new KubeletSimError(
      'Config',
      `cpus: must be an integer of at least numaNodes (${numa}), got ${cpus}`,
    );
  }
  if (!Number.isFinite(memory) || memory <= 0) {
    throw new KubeletSimError('Config', `memoryPerNumaBytes: must be positive, got ${memory}`);
  }
  const perNode = Array.from(
    { length: numa },
    (_, id) => Math.floor(cpus / numa) + (id < cpus % numa ? 1 : 0),
  );
  const threads = opts.threadsPerCore ?? (perNode.every((n) => n % 2 === 0) ? 2 : 1);
  if (!Number.isInteger(threads) || threads < 1 || perNode.some((n) => n % threads !== 0)) {
    throw new KubeletSimError(
      'Config',
      `threadsPerCore: must be a positive integer dividing the CPUs of every NUMA node (${perNode.join(', ')}), got ${threads}`,
    );
  }
  const hugepages: Partial<Record<HugepageResource, number>> = {};
  for (const [name, bytes] of Object.entries(opts.hugepagesPerNumaBytes ?? {}) as [
    HugepageResource,
    number,
  ][]) {
    const page = HUGEPAGE_SIZES[name];
    if (page === undefined || !Number.isFinite(bytes) || bytes < 0 || bytes % page !== 0) {
      throw new KubeletSimError(
        'Config',
        `hugepagesPerNumaBytes.${name}: must be a multiple of the page size (${page ?? '?'} bytes), got ${bytes}`,
      );
    }
    if (bytes > 0) hugepages[name] = bytes;
  }
  const numaNodes: NumaNode[] = [];
  const cpuInfo: CpuInfo[] = [];
  let next = 0;
  for (let id = 0; id < numa; id++) {
    const ids = Array.from({ length: perNode[id]! }, (_, i) => next + i);
    for (const c of ids) {
      const first = c - ((c - next) % threads);
      cpuInfo.push({
        id: c,
        coreId: first / threads,
        numaNode: id,
        siblings: Array.from({ length: threads }, (_, t) => first + t),
      });
    }
    numaNodes.push({ id, cpus: ids, memoryBytes: memory, hugepages: { ...hugepages } });
    next += ids.length;
  }
  return { numaNodes, cpus: cpuInfo, threadsPerCore: threads, maxPods: opts.maxPods ?? 110 };
}

export function totalCpus(shape: NodeShape): number {
  return shape.cpus.length;
}

export function totalMemoryBytes(shape: NodeShape): number {
  return shape.numaNodes.reduce((n, node) => n + node.memoryBytes, 0);
}

export function totalHugepages(shape: NodeShape, name: HugepageResource): number {
  return shape.numaNodes.reduce((n, node) => n + (node.hugepages[name] ?? 0), 0);
}

export function numaNodeOfCpu(shape: NodeShape, cpu: number): number {
  const info = shape.cpus[cpu];
  if (!info) throw new KubeletSimError('Config', `CPU ${cpu} does not exist on this node`);
  return info.numaNode;
}

/** Linux cpulist format (`0-3,8,10-11`), as in sysfs and the kubelet's --reserved-cpus. */
export function formatCpuList(ids: readonly number[]): string {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** Parses a cpulist (`0-3,8`); undefined when malformed. */
export function parseCpuList(text: string): number[] | undefined {
  if (text.trim() === '') return [];
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const m = /^\s*(\d+)(?:-(\d+))?\s*$/.exec(part);
    if (!m) return undefined;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from || to - from > 65536) return undefined;
    for (let c = from; c <= to; c++) out.add(c);
  }
  return [...out].sort((a, b) => a - b);
}
