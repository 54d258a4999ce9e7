// The Memory Manager (pkg/kubelet/cm/memorymanager, release-1.33: memory_manager.go,
// policy_none.go, policy_static.go) with its `None` and `Static` policies. Under `Static`,
// containers of Guaranteed pods get their memory and hugepages from a set of NUMA nodes (a
// "group"), accounted per NUMA node. As a hint provider it offers the NUMA combinations whose free
// memory covers the request, with the Static policy's group rules: a NUMA node already used by a
// single-node allocation cannot join a multi-node group, and a node in a group can only be used by
// that same group. Its allocation follows the merged affinity, or its own narrowest preferred hint
// when the Topology Manager gave none, and widens an affinity that is too small.

import type { HugepageResource, MachineInfo } from '../machine/machine-info.js';
import { bitsOf, isNarrower, maskOf, type Mask } from '../topologymanager/bitmask.js';
import { generateHints, type TopologyHint } from '../topologymanager/topology-manager.js';

export type MemoryManagerPolicy = 'None' | 'Static';
export type MemoryResource = 'memory' | HugepageResource;

export interface MemoryBlock {
  type: MemoryResource;
  bytes: number;
  /** The NUMA nodes of the group the block was allocated from. */
  numaNodes: number[];
}

interface NumaMemoryState {
  allocatable: Map<MemoryResource, number>;
  free: Map<MemoryResource, number>;
  /** The group this node belongs to (itself when used alone). */
  cells: number[];
  assignments: number;
}

export class MemoryManager {
  private readonly nodes = new Map<number, NumaMemoryState>();
  /** Blocks by `podUid/container`, with the bytes taken per NUMA node to give back on release. */
  private readonly blocks = new Map<
    string,
    { blocks: MemoryBlock[]; taken: [number, MemoryResource, number][] }
  >();
  private readonly numaIds: number[];

  constructor(
    shape: MachineInfo,
    readonly policy: MemoryManagerPolicy,
  ) {
    this.numaIds = shape.numaNodes.map((n) => n.id);
    for (const n of shape.numaNodes) {
      const allocatable = new Map<MemoryResource, number>([['memory', n.memoryBytes]]);
      for (const [name, bytes] of Object.entries(n.hugepages) as [HugepageResource, number][])
        allocatable.set(name, bytes);
      this.nodes.set(n.id, { allocatable, free: new Map(allocatable), cells: [n.id], assignments: 0 });
    }
  }

  /** Memory and hugepage requests a container asks to pin: only Guaranteed pods under Static. */
  requestsOf(qos: string, requests: ReadonlyMap<string, number>): Map<MemoryResource, number> {
    const out = new Map<MemoryResource, number>();
    if (this.policy !== 'Static' || qos !== 'Guaranteed') return out;
    for (const [name, bytes] of requests) {
      if ((name === 'memory' || name.startsWith('hugepages-')) && bytes > 0)
        out.set(name as MemoryResource, bytes);
    }
    return out;
  }

  private sum(mask: Mask, resource: MemoryResource, field: 'allocatable' | 'free'): number {
    return bitsOf(mask).reduce((s, n) => s + (this.nodes.get(n)?.[field].get(resource) ?? 0), 0);
  }

  /** The Static policy's group rules for a candidate mask. */
  private maskUsable(mask: Mask): boolean {
    const ids = bitsOf(mask);
    const single = ids.length === 1;
    for (const id of ids) {
      const n = this.nodes.get(id);
      if (!n) return false;
      if (single && n.cells.length > 1) return false;
      if (!single && n.assignments > 0) {
        if (n.cells.length === 1) return false;
        if (maskOf(n.cells) !== mask) return false;
      }
    }
    return true;
  }

  /** Hints per memory resource; null (no preference) when nothing is pinned. */
  hints(requests: ReadonlyMap<MemoryResource, number>): Map<MemoryResource, TopologyHint[]> {
    const out = new Map<MemoryResource, TopologyHint[]>();
    for (const [resource, bytes] of requests) {
      out.set(
        resource,
        generateHints(
          this.numaIds,
          bytes,
          (mask) => this.sum(mask, resource, 'allocatable'),
          (mask) => (this.maskUsable(mask) ? this.sum(mask, resource, 'free') : null),
        ),
      );
    }
    return out;
  }

  /** The narrowest mask (preferred first) that satisfies every request and contains `within`. */
  private bestMask(requests: ReadonlyMap<MemoryResource, number>, within: Mask): Mask | null {
    const hints = this.hints(requests);
    let best: TopologyHint | null = null;
    const candidates = [...new Set([...hints.values()].flat().map((h) => h.mask!))];
    for (const mask of candidates) {
      if ((mask & within) !== within) continue;
      const fits = [...hints.values()].every((list) => list.some((h) => h.mask === mask));
      if (!fits) continue;
      const preferred = [...hints.values()].every((list) => list.some((h) => h.mask === mask && h.preferred));
      if (
        !best ||
        (preferred && !best.preferred) ||
        (preferred === best.preferred && isNarrower(mask, best.mask!))
      )
        best = { mask, preferred };
    }
    return best?.mask ?? null;
  }

  /** Pins a container's memory; throws the Static policy's error text when no group can hold it. */
  allocate(
    podUid: string,
    container: string,
    requests: ReadonlyMap<MemoryResource, number>,
    affinity: Mask | null,
  ): MemoryBlock[] {
    if (requests.size === 0) return [];
    const key = `${podUid}/${container}`;
    const existing = this.blocks.get(key);
    if (existing) return existing.blocks.map((b) => ({ ...b, numaNodes: [...b.numaNodes] }));
    let mask = affinity;
    const satisfies = (m: Mask) =>
      this.maskUsable(m) && [...requests].every(([r, bytes]) => this.sum(m, r, 'free') >= bytes);
    if (mask === null || !satisfies(mask)) {
      const extended = this.bestMask(requests, mask ?? 0);
      if (extended === null) {
        throw new Error(
          mask === null
            ? 'failed to get the default NUMA affinity, no NUMA nodes with enough memory is available'
            : `failed to find NUMA nodes to extend the current topology hint`,
        );
      }
      mask = extended;
    }
    const ids = bitsOf(mask);
    const blocks: MemoryBlock[] = [];
    const taken: [number, MemoryResource, number][] = [];
    for (const [resource, bytes] of requests) {
      let left = bytes;
      for (const id of ids) {
        const n = this.nodes.get(id)!;
        const part = Math.min(left, n.free.get(resource) ?? 0);
        if (part <= 0) continue;
        n.free.set(resource, (n.free.get(resource) ?? 0) - part);
        taken.push([id, resource, part]);
        left -= part;
        if (left === 0) break;
      }
      blocks.push({ type: resource, bytes, numaNodes: ids });
    }
    for (const id of ids) {
      const n = this.nodes.get(id)!;
      n.cells = ids;
      n.assignments++;
    }
    this.blocks.set(key, { blocks, taken });
    return blocks.map((b) => ({ ...b, numaNodes: [...b.numaNodes] }));
  }

  /**
   * Takes back what a container already holds (the kubelet's state file; a node agent reads the
   * blocks from PodResources, which gives each block's NUMA group but not how much came from each
   * node — taking it from the group's nodes in order, as allocate does, gives the same group totals
   * and the same group rules, which is all hints and allocation read).
   */
  restore(podUid: string, container: string, blocks: readonly MemoryBlock[]): void {
    const ids = [...(blocks[0]?.numaNodes ?? [])].sort((a, b) => a - b);
    if (ids.length === 0 || ids.some((id) => !this.nodes.has(id))) return;
    const taken: [number, MemoryResource, number][] = [];
    for (const b of blocks) {
      let left = b.bytes;
      for (const id of ids) {
        const n = this.nodes.get(id)!;
        const part = Math.min(left, n.free.get(b.type) ?? 0);
        if (part <= 0) continue;
        n.free.set(b.type, (n.free.get(b.type) ?? 0) - part);
        taken.push([id, b.type, part]);
        left -= part;
        if (left === 0) break;
      }
    }
    for (const id of ids) {
      const n = this.nodes.get(id)!;
      n.cells = ids;
      n.assignments++;
    }
    this.blocks.set(`${podUid}/${container}`, {
      blocks: blocks.map((b) => ({ ...b, numaNodes: ids })),
      taken,
    });
  }

  blocksOf(podUid: string, container: string): MemoryBlock[] {
    return (this.blocks.get(`${podUid}/${container}`)?.blocks ?? []).map((b) => ({
      ...b,
      numaNodes: [...b.numaNodes],
    }));
  }

  release(podUid: string): void {
    for (const [key, entry] of [...this.blocks]) {
      if (!key.startsWith(`${podUid}/`)) continue;
      for (const [id, resource, part] of entry.taken) {
        const n = this.nodes.get(id)!;
        n.free.set(resource, (n.free.get(resource) ?? 0) + part);
      }
      const ids = entry.blocks[0]?.numaNodes ?? [];
      for (const id of ids) {
        const n = this.nodes.get(id)!;
        n.assignments = Math.max(0, n.assignments - 1);
        if (n.assignments === 0) n.cells = [id];
      }
      this.blocks.delete(key);
    }
  }

  /** Per NUMA node and resource: allocatable and free bytes (for state and GetAllocatableResources). */
  perNuma(): { numaNode: number; type: MemoryResource; allocatable: number; free: number }[] {
    const out: { numaNode: number; type: MemoryResource; allocatable: number; free: number }[] = [];
    for (const [id, n] of this.nodes) {
      for (const [type, allocatable] of n.allocatable)
        out.push({ numaNode: id, type, allocatable, free: n.free.get(type) ?? 0 });
    }
    return out;
  }

  /** GetAllocatableResources memory: per NUMA node and type under Static, nothing under None. */
  allocatableMemory(): { numaNode: number; type: MemoryResource; bytes: number }[] {
    if (this.policy !== 'Static') return [];
    return this.perNuma().map((m) => ({ numaNode: m.numaNode, type: m.type, bytes: m.allocatable }));
  }
}
