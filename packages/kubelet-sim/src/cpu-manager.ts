// Exclusive CPUs and pinned memory for Guaranteed pods, in the spirit of the kubelet's CPU
// Manager `static` and Memory Manager `Static` policies: whole-CPU containers get CPUs of their
// own, taken from the NUMA node their devices sit on when it has room. This is the seam where
// fuller CPU/Memory/Topology Manager policies plug in; today it keeps only what PodResources shows.

import type { NodeShape } from './node-shape.js';

export type CpuManagerPolicy = 'none' | 'static';
export type MemoryManagerPolicy = 'None' | 'Static';

export interface ContainerPinning {
  cpuIds: number[];
  /** Pinned memory per NUMA node (Memory Manager Static policy). */
  memory: { numaNode: number; bytes: number }[];
}

export class CpuManager {
  /** Exclusive CPUs by `podUid/container`. */
  private readonly assigned = new Map<string, number[]>();
  private readonly memory = new Map<string, { numaNode: number; bytes: number }[]>();

  constructor(
    private readonly shape: NodeShape,
    readonly cpuPolicy: CpuManagerPolicy,
    readonly memoryPolicy: MemoryManagerPolicy,
  ) {}

  allCpus(): number[] {
    return this.shape.numaNodes.flatMap((n) => n.cpus);
  }

  private freeCpus(): number[] {
    const used = new Set([...this.assigned.values()].flat());
    return this.allCpus().filter((c) => !used.has(c));
  }

  /**
   * Pins a Guaranteed container. `milliCpu` must be a whole number of CPUs to get exclusive CPUs;
   * `preferredNuma` is where its devices are. Throws the CPU Manager's error text when short.
   */
  pin(
    podUid: string,
    container: string,
    milliCpu: number,
    memoryBytes: number,
    preferredNuma: number | undefined,
  ): ContainerPinning {
    const key = `${podUid}/${container}`;
    let cpuIds: number[] = [];
    if (this.cpuPolicy === 'static' && milliCpu > 0 && milliCpu % 1000 === 0) {
      const want = milliCpu / 1000;
      const free = this.freeCpus();
      if (free.length < want) {
        throw new Error(
          `not enough cpus available to satisfy request: requested=${want}, available=${free.length}`,
        );
      }
      const numaOf = (cpu: number) => this.shape.numaNodes.find((n) => n.cpus.includes(cpu))?.id ?? 0;
      const nodes = this.shape.numaNodes.map((n) => n.id);
      const order =
        preferredNuma === undefined ? nodes : [preferredNuma, ...nodes.filter((n) => n !== preferredNuma)];
      // Whole request from one NUMA node when possible (preferred first), else first-fit in NUMA order.
      const single = order.find((n) => free.filter((c) => numaOf(c) === n).length >= want);
      const pool =
        single === undefined
          ? order.flatMap((n) => free.filter((c) => numaOf(c) === n))
          : free.filter((c) => numaOf(c) === single);
      cpuIds = pool.slice(0, want).sort((a, b) => a - b);
      this.assigned.set(key, cpuIds);
    }
    const memory: { numaNode: number; bytes: number }[] = [];
    if (this.memoryPolicy === 'Static' && memoryBytes > 0) {
      const numa =
        cpuIds.length > 0
          ? (this.shape.numaNodes.find((n) => n.cpus.includes(cpuIds[0]!))?.id ?? 0)
          : (preferredNuma ?? 0);
      memory.push({ numaNode: numa, bytes: memoryBytes });
      this.memory.set(key, memory);
    }
    return { cpuIds, memory };
  }

  pinning(podUid: string, container: string): ContainerPinning {
    const key = `${podUid}/${container}`;
    return { cpuIds: [...(this.assigned.get(key) ?? [])], memory: [...(this.memory.get(key) ?? [])] };
  }

  release(podUid: string): void {
    for (const key of [...this.assigned.keys(), ...this.memory.keys()]) {
      if (key.startsWith(`${podUid}/`)) {
        this.assigned.delete(key);
        this.memory.delete(key);
      }
    }
  }

  /** CPUs PodResources reports as allocatable: all of them under `static`, none under `none`. */
  allocatableCpus(): number[] {
    return this.cpuPolicy === 'static' ? this.allCpus() : [];
  }

  allocatableMemory(): { numaNode: number; bytes: number }[] {
    return this.memoryPolicy === 'Static'
      ? this.shape.numaNodes.map((n) => ({ numaNode: n.id, bytes: n.memoryBytes }))
      : [];
  }
}
