// The simulated machine: NUMA nodes with their CPU IDs and memory. The device manager uses it
// for NUMA-aligned picks, the PodResources server reports it, and a later CPU/Memory/Topology
// Manager policy can allocate from it without changing its shape.

import { KubeletSimError } from './errors.js';

export interface NumaNode {
  id: number;
  /** Logical CPU IDs on this NUMA node. */
  cpus: number[];
  memoryBytes: number;
}

export interface NodeShape {
  numaNodes: NumaNode[];
  /** Max pods (node status `pods`), 110 like the kubelet's default. */
  maxPods: number;
}

export interface NodeShapeOptions {
  cpus?: number;
  numaNodes?: number;
  memoryPerNumaBytes?: number;
  maxPods?: number;
}

export const DEFAULT_CPUS = 8;
export const DEFAULT_NUMA_NODES = 1;
export const DEFAULT_MEMORY_PER_NUMA_BYTES = 16 * 2 ** 30;

/** CPUs are split into contiguous blocks per NUMA node (0-3 on node 0, 4-7 on node 1, …). */
export function buildNodeShape(opts: NodeShapeOptions = {}): NodeShape {
  const cpus = opts.cpus ?? DEFAULT_CPUS;
  const numa = opts.numaNodes ?? DEFAULT_NUMA_NODES;
  const memory = opts.memoryPerNumaBytes ?? DEFAULT_MEMORY_PER_NUMA_BYTES;
  if (!Number.isInteger(numa) || numa < 1)
    throw new KubeletSimError('Config', `numaNodes: must be a positive integer, got ${numa}`);
  if (!Number.isInteger(cpus) || cpus < numa) {
    throw new KubeletSimError(
      'Config',
      `cpus: must be an integer of at least numaNodes (${numa}), got ${cpus}`,
    );
  }
  if (!Number.isFinite(memory) || memory <= 0) {
    throw new KubeletSimError('Config', `memoryPerNumaBytes: must be positive, got ${memory}`);
  }
  const numaNodes: NumaNode[] = [];
  let next = 0;
  for (let id = 0; id < numa; id++) {
    const count = Math.floor(cpus / numa) + (id < cpus % numa ? 1 : 0);
    numaNodes.push({ id, cpus: Array.from({ length: count }, (_, i) => next + i), memoryBytes: memory });
    next += count;
  }
  return { numaNodes, maxPods: opts.maxPods ?? 110 };
}

export function totalCpus(shape: NodeShape): number {
  return shape.numaNodes.reduce((n, node) => n + node.cpus.length, 0);
}

export function totalMemoryBytes(shape: NodeShape): number {
  return shape.numaNodes.reduce((n, node) => n + node.memoryBytes, 0);
}
