// What the kubelet shows of itself, read from its managers: the simulator's `state()` view (and
// `GET /control/v1/state`), the admissions slice a gateway polls, the configz document
// (cmd/kubelet's initConfigz) and node allocatable for the admission predicate. No upstream
// counterpart for the views: a real kubelet only logs its admission decisions.

import type { CpuManager, MemoryManager, TopologyAdmission } from '@plugboard/topology';
import type { DeviceManager } from './cm/devicemanager/manager.js';
import type { DraManager } from './cm/dra/manager.js';
import { configz } from './configz.js';
import { totalCpus, totalHugepages, totalMemoryBytes, type NodeShape } from './machine/node-shape.js';
import type { PodManager } from './pods/pod-manager.js';
import type { KubeletState } from './types.js';

/** The kubelet's parts the views read. */
export interface KubeletParts {
  nodeName: string;
  shape: NodeShape;
  sysfsRoot: string;
  deviceManager: DeviceManager;
  cpuManager: CpuManager;
  memoryManager: MemoryManager;
  topology: TopologyAdmission;
  pods: PodManager;
  dra: DraManager;
}

/** Node allocatable for the node-resources predicate: cpu in millicores, memory in bytes, pods, extended resources. */
export function nodeAllocatable(
  shape: NodeShape,
  deviceManager: DeviceManager,
  cpuManager: CpuManager,
): Map<string, number> {
  const { allocatable } = deviceManager.nodeResources();
  return new Map([
    ...allocatable,
    ['cpu', (totalCpus(shape) - cpuManager.reservedCpus().length) * 1000],
    ['memory', totalMemoryBytes(shape)],
    ['hugepages-2Mi', totalHugepages(shape, 'hugepages-2Mi')],
    ['hugepages-1Gi', totalHugepages(shape, 'hugepages-1Gi')],
    ['pods', shape.maxPods],
  ]);
}

export function kubeletState(k: KubeletParts): KubeletState {
  const { shape, deviceManager, cpuManager, memoryManager, topology, pods } = k;
  return {
    node: {
      name: k.nodeName,
      numaNodes: shape.numaNodes.map((n) => ({
        id: n.id,
        cpus: [...n.cpus],
        memoryBytes: n.memoryBytes,
        hugepages: { ...n.hugepages },
        memory: Object.fromEntries(
          memoryManager
            .perNuma()
            .filter((m) => m.numaNode === n.id)
            .map((m) => [m.type, { allocatable: m.allocatable, free: m.free }]),
        ),
      })),
      cpus: shape.cpus.map((c) => ({ ...c, siblings: [...c.siblings] })),
      threadsPerCore: shape.threadsPerCore,
      reservedCpus: cpuManager.reservedCpus(),
      sharedCpus: cpuManager.sharedPool(),
      cpuManagerPolicy: cpuManager.policy,
      memoryManagerPolicy: memoryManager.policy,
      topologyManagerPolicy: topology.policy,
      topologyManagerScope: topology.scope,
      sysfsRoot: k.sysfsRoot,
    },
    resources: Object.fromEntries(deviceManager.resources().map((r) => [r.name, r])),
    pods: pods.allPods().map((p) => {
      const obj = pods.render(p);
      const status = obj['status'] as { phase: string; reason?: string };
      return {
        namespace: p.spec.namespace,
        name: p.spec.name,
        uid: p.spec.uid,
        phase: status.phase,
        reason: status.reason ?? null,
        containers: [...p.spec.initContainers, ...p.spec.containers].map((c) => {
          const allocations = deviceManager.containerAllocations(p.spec.uid, c.name);
          const runtime = [...p.init, ...p.app].find((r) => r.spec === c);
          return {
            name: c.name,
            init: c.init,
            state: runtime
              ? runtime.state.kind === 'waiting'
                ? runtime.state.reason
                : runtime.state.kind
              : 'unknown',
            restartCount: runtime?.restartCount ?? 0,
            devices: Object.fromEntries(allocations.map((a) => [a.resource, [...a.deviceIds]])),
            cpuIds: cpuManager.cpusOf(p.spec.uid, c.name),
            memory: memoryManager.blocksOf(p.spec.uid, c.name),
            allocateResponses: Object.fromEntries(allocations.map((a) => [a.resource, a.response])),
            claims: c.claims.map((x) => ({ ...x })),
            cdiDevices: pods.cdiDevicesOf(p, c),
          };
        }),
        admission: p.admission,
        resourceClaimStatuses: p.resourceClaimStatuses.map((x) => ({ ...x })),
        extendedResourceClaimStatus: p.extendedResourceClaimStatus
          ? structuredClone(p.extendedResourceClaimStatus)
          : null,
        unschedulable: p.unschedulable ? { ...p.unschedulable } : null,
      };
    }),
    dra: k.dra.state(),
  };
}

/**
 * Read straight from the managers: what a gateway polls every second, without rendering every pod
 * and the whole node as kubeletState() does.
 */
export function admissionsView(k: KubeletParts): unknown {
  return {
    node: {
      topologyManagerPolicy: k.topology.policy,
      topologyManagerScope: k.topology.scope,
      cpuManagerPolicy: k.cpuManager.policy,
      memoryManagerPolicy: k.memoryManager.policy,
      reservedCpus: k.cpuManager.reservedCpus(),
    },
    pods: k.pods.allPods().map((p) => ({
      namespace: p.spec.namespace,
      name: p.spec.name,
      admission: p.admission,
    })),
  };
}

/** The kubelet's `/configz` (served through `nodes/{name}/proxy/configz`). */
export function kubeletConfigz(k: KubeletParts): unknown {
  return configz({
    maxPods: k.shape.maxPods,
    cpuManagerPolicy: k.cpuManager.policy,
    memoryManagerPolicy: k.memoryManager.policy,
    topologyManagerPolicy: k.topology.policy,
    topologyManagerScope: k.topology.scope,
    reservedCpus: k.cpuManager.reservedCpus(),
  });
}
