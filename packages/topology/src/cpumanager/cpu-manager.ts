// The CPU Manager (pkg/kubelet/cm/cpumanager, release-1.33: cpu_manager.go, policy_none.go,
// policy_static.go, cpu_assignment.go) with its `none` and `static` policies. Under `static`, a
// container of a Guaranteed pod with a whole number of CPUs gets exclusive CPUs; everything else
// runs on the shared pool (all CPUs minus exclusive ones; reservedSystemCPUs stay shared and are
// never handed out exclusively). As a Topology Manager hint provider it offers NUMA affinities for
// that request; its allocation takes the CPUs inside the merged affinity first and packs them by
// topology (takeByTopology): whole NUMA nodes, then whole physical cores (SMT siblings together),
// then single threads from cores that are already partly used.

import { TopologyError } from '../errors.js';
import type { MachineInfo } from '../machine/machine-info.js';
import { isSet, type Mask } from '../topologymanager/bitmask.js';
import { generateHints, type TopologyHint } from '../topologymanager/topology-manager.js';

export type CpuManagerPolicy = 'none' | 'static';

export class CpuManager {
  /** Exclusive CPUs by `podUid/container`. */
  private readonly assigned = new Map<string, number[]>();
  /** CPUs of a pod's init containers that its later containers may take over (cpusToReuse). */
  private readonly reusable = new Map<string, Set<number>>();
  private readonly reserved: Set<number>;
  private readonly numaIds: number[];

  constructor(
    private readonly shape: MachineInfo,
    readonly policy: CpuManagerPolicy,
    reservedCpus: readonly number[] = [],
  ) {
    for (const c of reservedCpus) {
      if (!shape.cpus[c])
        throw new TopologyError(
          'Config',
          `reservedCpus: CPU ${c} does not exist (the node has ${shape.cpus.length})`,
        );
    }
    if (reservedCpus.length >= shape.cpus.length)
      throw new TopologyError('Config', 'reservedCpus: at least one CPU must stay allocatable');
    this.reserved = new Set(reservedCpus);
    this.numaIds = shape.numaNodes.map((n) => n.id);
  }

  reservedCpus(): number[] {
    return [...this.reserved].sort((a, b) => a - b);
  }

  /** Exclusive CPUs a container asks for: whole CPUs of a Guaranteed pod under `static`, else 0. */
  guaranteedCpus(qos: string, milliCpu: number): number {
    if (this.policy !== 'static' || qos !== 'Guaranteed' || milliCpu <= 0 || milliCpu % 1000 !== 0) return 0;
    return milliCpu / 1000;
  }

  private exclusive(): Set<number> {
    return new Set([...this.assigned.values()].flat());
  }

  /** The shared pool: every CPU not exclusively assigned (reserved CPUs included). */
  sharedPool(): number[] {
    const used = this.exclusive();
    return this.shape.cpus.map((c) => c.id).filter((c) => !used.has(c));
  }

  /** CPUs that can still be handed out exclusively (GetAvailableCPUs): shared pool minus reserved. */
  availableCpus(): number[] {
    return this.sharedPool().filter((c) => !this.reserved.has(c));
  }

  /**
   * Hints for `count` exclusive CPUs (GetTopologyHints / GetPodTopologyHints): null when the
   * container is not pinned (no preference), [] when too few CPUs are free.
   */
  hints(podUid: string, count: number): TopologyHint[] | null {
    if (count === 0) return null;
    const reuse = this.reusable.get(podUid) ?? new Set<number>();
    const available = [...new Set([...this.availableCpus(), ...reuse])];
    if (available.length < count) return [];
    const numaOf = (c: number) => this.shape.cpus[c]!.numaNode;
    return generateHints(
      this.numaIds,
      count,
      (mask) => this.shape.cpus.filter((c) => isSet(mask, c.numaNode)).length,
      (mask) => available.filter((c) => isSet(mask, numaOf(c))).length,
    );
  }

  /**
   * Allocates `count` exclusive CPUs for a container (allocateCPUs): inside `affinity` first,
   * the rest anywhere. Throws the static policy's error text when too few are free.
   */
  allocate(podUid: string, container: string, count: number, affinity: Mask | null, init: boolean): number[] {
    if (count === 0) return [];
    const key = `${podUid}/${container}`;
    const existing = this.assigned.get(key);
    if (existing) return [...existing];
    const reuse = this.reusable.get(podUid) ?? new Set<number>();
    const allocatable = [...new Set([...this.availableCpus(), ...reuse])].sort((a, b) => a - b);
    if (allocatable.length < count) {
      throw new Error(
        `not enough cpus available to satisfy request: requested=${count}, available=${allocatable.length}`,
      );
    }
    let result: number[] = [];
    if (affinity !== null) {
      const aligned = allocatable.filter((c) => isSet(affinity, this.shape.cpus[c]!.numaNode));
      result = this.takeByTopology(aligned, Math.min(count, aligned.length));
    }
    const taken = new Set(result);
    result = [
      ...result,
      ...this.takeByTopology(
        allocatable.filter((c) => !taken.has(c)),
        count - result.length,
      ),
    ];
    result.sort((a, b) => a - b);
    // CPUs reused from an init container move to this container.
    for (const [k, cpus] of this.assigned) {
      if (k.startsWith(`${podUid}/`))
        this.assigned.set(
          k,
          cpus.filter((c) => !result.includes(c)),
        );
    }
    this.assigned.set(key, result);
    if (init) for (const c of result) reuse.add(c);
    else for (const c of result) reuse.delete(c);
    this.reusable.set(podUid, reuse);
    return [...result];
  }

  /**
   * takeByTopology, packed: whole free NUMA nodes while the request covers one, then whole free
   * cores (all SMT siblings), then single CPUs preferring cores that are already partly taken and
   * NUMA nodes with fewer free CPUs, so that free whole cores and nodes stay available.
   */
  takeByTopology(free: readonly number[], count: number): number[] {
    if (count <= 0) return [];
    if (free.length < count) {
      throw new Error(
        `not enough cpus available to satisfy request: requested=${count}, available=${free.length}`,
      );
    }
    const left = new Set(free);
    const out: number[] = [];
    const take = (ids: readonly number[]) => {
      for (const c of ids) {
        left.delete(c);
        out.push(c);
      }
    };
    const freeOnNode = (n: number) => this.shape.numaNodes[n]!.cpus.filter((c) => left.has(c)).length;
    for (const node of this.shape.numaNodes) {
      if (count - out.length >= node.cpus.length && node.cpus.every((c) => left.has(c))) take(node.cpus);
    }
    const t = this.shape.threadsPerCore;
    const cores = () => {
      const byCore = new Map<number, number[]>();
      for (const c of [...left].sort((a, b) => a - b)) {
        const core = this.shape.cpus[c]!.coreId;
        byCore.set(core, [...(byCore.get(core) ?? []), c]);
      }
      return [...byCore.values()];
    };
    while (count - out.length >= t) {
      const whole = cores()
        .filter((ids) => ids.length === t)
        .sort(
          (a, b) =>
            freeOnNode(this.shape.cpus[a[0]!]!.numaNode) - freeOnNode(this.shape.cpus[b[0]!]!.numaNode) ||
            a[0]! - b[0]!,
        );
      if (whole.length === 0) break;
      take(whole[0]!);
    }
    while (out.length < count) {
      const singles = cores().sort(
        (a, b) =>
          a.length - b.length ||
          freeOnNode(this.shape.cpus[a[0]!]!.numaNode) - freeOnNode(this.shape.cpus[b[0]!]!.numaNode) ||
          a[0]! - b[0]!,
      );
      take([singles[0]![0]!]);
    }
    return out;
  }

  /**
   * Takes back what a container already holds (the kubelet reads it from its state file; a node
   * agent from PodResources' cpu_ids): those CPUs are no longer free.
   */
  restore(podUid: string, container: string, cpuIds: readonly number[]): void {
    if (cpuIds.length > 0)
      this.assigned.set(
        `${podUid}/${container}`,
        [...cpuIds].sort((a, b) => a - b),
      );
  }

  cpusOf(podUid: string, container: string): number[] {
    return [...(this.assigned.get(`${podUid}/${container}`) ?? [])];
  }

  release(podUid: string): void {
    for (const key of [...this.assigned.keys()]) if (key.startsWith(`${podUid}/`)) this.assigned.delete(key);
    this.reusable.delete(podUid);
  }

  /** CPUs PodResources reports as allocatable: all but the reserved ones under `static`, none under `none`. */
  allocatableCpus(): number[] {
    return this.policy === 'static'
      ? this.shape.cpus.map((c) => c.id).filter((c) => !this.reserved.has(c))
      : [];
  }
}
