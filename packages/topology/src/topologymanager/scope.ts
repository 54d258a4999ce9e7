// The Topology Manager's admit handler (pkg/kubelet/cm/topologymanager scope.go,
// scope_container.go, scope_pod.go; release-1.33): per container (scope `container`) or once for
// the whole pod (scope `pod`) it asks the hint providers — device manager, CPU Manager, Memory
// Manager, in the kubelet's order — for NUMA hints, merges them under the policy (policy.ts),
// rejects with TopologyAffinityError when the policy says so, and otherwise lets each provider
// allocate inside the merged affinity (allocateAlignedResources). Every step is recorded in an
// AdmissionDecision, which kubelet-sim's control API serves and the gateway's prediction answers, so
// a dashboard can say why a pod landed (or would land) where it did, or why it was refused.

import type { CpuManager, CpuManagerPolicy } from '../cpumanager/cpu-manager.js';
import { NODE_WITHOUT_TOPOLOGY, type DeviceHintProvider } from '../devicemanager/types.js';
import type { MemoryManager, MemoryManagerPolicy, MemoryResource } from '../memorymanager/memory-manager.js';
import {
  podLevel,
  type ContainerRequests as ContainerSpec,
  type PodRequests as PodSpec,
  type QosClass,
} from '../pod/requests.js';
import type {
  AdmissionDecision as ApiAdmissionDecision,
  ContainerPlacement,
  TopologyHintView,
} from '@plugboard/api';
import { TopologyError } from '../errors.js';
import { bitsOf, type Mask } from './bitmask.js';
import { applyPolicy, topologyAffinityError } from './policy.js';
import {
  MAX_ALIGNABLE_NUMA_NODES,
  type HintProvider,
  type ResourceHints,
  type TopologyHint,
  type TopologyManagerPolicy,
  type TopologyManagerScope,
} from './topology-manager.js';

export type {
  AdmissionStep,
  ContainerPlacement,
  ProviderHintsView,
  TopologyHintView as HintView,
} from '@plugboard/api';

/** The decision in @plugboard/api's shape (the gateway reads it), with this kubelet's policy names. */
export interface AdmissionDecision extends ApiAdmissionDecision {
  policy: TopologyManagerPolicy;
  scope: TopologyManagerScope;
  cpuManagerPolicy: CpuManagerPolicy;
  memoryManagerPolicy: MemoryManagerPolicy;
}

/** Topology Manager settings a dry run may try instead of the node's. */
export interface TopologyOverride {
  policy?: TopologyManagerPolicy;
  scope?: TopologyManagerScope;
}

export interface TopologyAdmissionOptions {
  policy: TopologyManagerPolicy;
  scope: TopologyManagerScope;
  numaIds: number[];
  deviceManager: DeviceHintProvider;
  cpuManager: CpuManager;
  memoryManager: MemoryManager;
}

const view = (h: TopologyHint): TopologyHintView => ({
  numaNodes: h.mask === null ? null : bitsOf(h.mask),
  preferred: h.preferred,
});

export class TopologyAdmission {
  constructor(private readonly o: TopologyAdmissionOptions) {}

  get policy(): TopologyManagerPolicy {
    return this.o.policy;
  }

  get scope(): TopologyManagerScope {
    return this.o.scope;
  }

  /**
   * A decision to fill, with the settings in force for this admission: the node's, or — for a
   * dry run only — a policy/scope to try instead ("what would single-numa-node say?").
   */
  newDecision(dryRun: boolean, override: TopologyOverride = {}): AdmissionDecision {
    if (override.policy && override.policy !== 'none' && this.o.numaIds.length > MAX_ALIGNABLE_NUMA_NODES) {
      throw new TopologyError(
        'Config',
        `topologyManagerPolicy: unsupported on machines with more than ${MAX_ALIGNABLE_NUMA_NODES} NUMA Nodes`,
      );
    }
    return {
      policy: override.policy ?? this.o.policy,
      scope: override.scope ?? this.o.scope,
      cpuManagerPolicy: this.o.cpuManager.policy,
      memoryManagerPolicy: this.o.memoryManager.policy,
      at: new Date().toISOString(),
      dryRun,
      result: 'admitted',
      reason: null,
      message: null,
      steps: [],
      containers: [],
    };
  }

  private deviceRequests(c: ContainerSpec): [string, number][] {
    return [...c.limits].filter(([r, n]) => n > 0 && this.o.deviceManager.isDevicePluginResource(r));
  }

  private cpuCount(qos: QosClass, c: ContainerSpec): number {
    return this.o.cpuManager.guaranteedCpus(qos, c.requests.get('cpu') ?? 0);
  }

  /** The providers' hints for one container (or, with `pod`, for the whole pod's requests). */
  private hints(
    uid: string,
    devices: [string, number][],
    reusable: Map<string, Set<string>>,
    cpus: number,
    memory: Map<MemoryResource, number>,
  ): ResourceHints[] {
    const out: ResourceHints[] = [];
    const numaIds = this.o.numaIds;
    const none = (provider: HintProvider) => {
      if (!out.some((h) => h.provider === provider)) out.push({ provider, resource: '', hints: null });
    };
    for (const [resource, n] of devices) {
      out.push({
        provider: 'devices',
        resource,
        hints: this.o.deviceManager.topologyHints(resource, n, reusable.get(resource) ?? new Set(), numaIds),
      });
    }
    none('devices');
    if (cpus > 0) out.push({ provider: 'cpu', resource: 'cpu', hints: this.o.cpuManager.hints(uid, cpus) });
    none('cpu');
    for (const [resource, hints] of this.o.memoryManager.hints(memory))
      out.push({ provider: 'memory', resource, hints });
    none('memory');
    return out;
  }

  private merge(
    decision: AdmissionDecision,
    container: string | null,
    providers: ResourceHints[],
  ): Mask | null {
    const { hint, admit } = applyPolicy(decision.policy, this.o.numaIds, providers);
    decision.steps.push({
      container,
      hints: providers.map((p) => ({
        provider: p.provider,
        resource: p.resource === '' ? null : p.resource,
        hints: p.hints === null ? null : p.hints.map(view),
      })),
      merged: view(hint),
      admit,
    });
    if (!admit) throw topologyAffinityError();
    return hint.mask;
  }

  /**
   * Admits `spec` (or, with `dryRun`, works out where it would go; the caller frees the scratch
   * pod afterwards). Fills `decision` as it goes, so a failure still shows the steps taken.
   * Throws TopologyAffinityError (a TopologyError) or a plain Error with the kubelet's text.
   */
  async admit(spec: PodSpec, qos: QosClass, decision: AdmissionDecision, dryRun: boolean): Promise<void> {
    const all = [...spec.initContainers, ...spec.containers];
    const reusable = new Map<string, Set<string>>();
    const memoryOf = (c: ContainerSpec) => this.o.memoryManager.requestsOf(qos, c.requests);
    let podMask: Mask | null = null;
    if (decision.policy !== 'none' && decision.scope === 'pod') {
      const devices = new Map<string, number>();
      for (const c of all) for (const [r] of this.deviceRequests(c)) devices.set(r, 0);
      for (const r of devices.keys())
        devices.set(
          r,
          podLevel(spec, (c) => c.limits.get(r) ?? 0),
        );
      const memory = new Map<MemoryResource, number>();
      for (const c of all) for (const [r] of memoryOf(c)) memory.set(r, 0);
      for (const r of memory.keys())
        memory.set(
          r,
          podLevel(spec, (c) => memoryOf(c).get(r) ?? 0),
        );
      const cpus = podLevel(spec, (c) => this.cpuCount(qos, c));
      podMask = this.merge(decision, null, this.hints(spec.uid, [...devices], reusable, cpus, memory));
    }
    for (const c of all) {
      const devices = this.deviceRequests(c);
      const cpus = this.cpuCount(qos, c);
      const memory = memoryOf(c);
      let mask: Mask | null = podMask;
      if (decision.policy !== 'none' && decision.scope === 'container')
        mask = this.merge(decision, c.name, this.hints(spec.uid, devices, reusable, cpus, memory));
      const placement: ContainerPlacement = {
        container: c.name,
        init: c.init,
        affinity: mask === null ? null : bitsOf(mask),
        devices: [],
        cpuIds: [],
        memory: [],
      };
      decision.containers.push(placement);
      for (const [resource, n] of devices) {
        const reuse = reusable.get(resource) ?? new Set<string>();
        const allocation = await this.o.deviceManager.allocate(
          spec.uid,
          c.name,
          resource,
          n,
          reuse,
          mask,
          dryRun,
        );
        if (!allocation) continue;
        const numaNodes: Record<string, number[]> = {};
        for (const [numa, ids] of allocation.byNuma)
          for (const id of ids)
            numaNodes[id] = numa === NODE_WITHOUT_TOPOLOGY ? [] : [...(numaNodes[id] ?? []), numa];
        placement.devices.push({
          resource,
          deviceIds: [...allocation.deviceIds],
          numaNodes,
          preferred: allocation.preferred,
        });
        // Devices of (non-sidecar) init containers are reusable by the containers after them.
        if (c.init && !c.sidecar) for (const id of allocation.deviceIds) reuse.add(id);
        else for (const id of allocation.deviceIds) reuse.delete(id);
        reusable.set(resource, reuse);
      }
      placement.cpuIds = this.o.cpuManager.allocate(spec.uid, c.name, cpus, mask, c.init && !c.sidecar);
      placement.memory = this.o.memoryManager.allocate(spec.uid, c.name, memory, mask);
    }
  }
}
