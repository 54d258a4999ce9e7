// Builds realistic NodeSnapshots for tests and benchmarks: N devices over NUMA nodes, pods holding
// devices, optional sharing replicas. Deterministic (no randomness) so assertions can be exact.
import type { DeviceState, NodeSnapshot, PodState, ResourceState } from '@plugboard/api';
import { containerState, gatewayInfo, pluginRegisteredAt } from '@plugboard/api/testing';

export interface SnapshotShape {
  nodeName?: string;
  resource?: string;
  devices: number;
  numaNodes: number;
  pods: number;
  /** Devices per pod. */
  devicesPerPod?: number;
  /** Replicas per physical device (shared resource) — 1 = not shared. */
  replicas?: number;
  cpusPerNuma?: number;
}

const T0 = '2026-01-01T00:00:00.000Z';

export function makeSnapshot(shape: SnapshotShape): NodeSnapshot {
  const resource = shape.resource ?? 'plugboard.example/gpu';
  const replicas = shape.replicas ?? 1;
  const perPod = shape.devicesPerPod ?? 1;
  const cpus = shape.cpusPerNuma ?? 32;
  const devices: Record<string, DeviceState> = {};
  const deviceKeys: string[] = [];
  const numaDevices: Record<string, string[]> = {};
  const physical = Math.ceil(shape.devices / replicas);
  for (let p = 0; p < physical; p++) {
    const numa = Math.floor((p * shape.numaNodes) / physical);
    for (let r = 0; r < replicas && deviceKeys.length < shape.devices; r++) {
      const id = replicas > 1 ? `dev-${p}::${r}` : `dev-${p}`;
      const key = `${resource}/${id}`;
      devices[key] = {
        key,
        resource,
        id,
        health: 'Healthy',
        reason: null,
        since: T0,
        numaNodes: [numa],
        replicaOf: replicas > 1 ? `dev-${p}` : null,
        kubeletHealth: 'Healthy',
        fault: null,
        faulted: false,
        allocation: null,
      };
      deviceKeys.push(key);
      (numaDevices[String(numa)] ??= []).push(key);
    }
  }
  const pods: Record<string, PodState> = {};
  let next = 0;
  for (let i = 0; i < shape.pods && next < deviceKeys.length; i++) {
    const name = `pod-${i}`;
    const namespace = i % 2 === 0 ? 'ml' : 'batch';
    const held = deviceKeys.slice(next, next + perPod);
    next += perPod;
    for (const k of held)
      devices[k] = { ...devices[k]!, allocation: { namespace, pod: name, container: 'main' } };
    const numas = [...new Set(held.map((k) => devices[k]!.numaNodes[0]!))];
    pods[`${namespace}/${name}`] = {
      key: `${namespace}/${name}`,
      namespace,
      name,
      phase: 'Running',
      reason: null,
      containers: [containerState({ devices: { [resource]: held } })],
      affectedByUnhealthyDevice: false,
      numaAlignment: {
        verdict: numas.length === 1 ? 'aligned' : 'spread',
        numaNodes: numas,
        reason: numas.length === 1 ? 'all devices on one NUMA node' : 'devices span NUMA nodes',
      },
    };
  }
  const allocated = next;
  const res: ResourceState = {
    name: resource,
    kubelet: {
      capacity: deviceKeys.length,
      allocatable: deviceKeys.length,
      allocated,
      free: deviceKeys.length - allocated,
      healthy: deviceKeys.length,
      unhealthy: 0,
    },
    apiServer: { capacity: deviceKeys.length, allocatable: deviceKeys.length, staleSince: null },
    registration: pluginRegisteredAt(T0),
    replicas,
    deviceKeys,
  };
  const numaNodes: NodeSnapshot['numa']['nodes'] = {};
  for (let n = 0; n < shape.numaNodes; n++) {
    numaNodes[String(n)] = {
      id: n,
      cpuIds: Array.from({ length: cpus }, (_, i) => n * cpus + i),
      memory: { memory: 64 * 2 ** 30 },
      deviceKeys: numaDevices[String(n)] ?? [],
    };
  }
  return {
    schema: 1,
    nodeName: shape.nodeName ?? 'node-a',
    updatedAt: T0,
    gateway: gatewayInfo(T0, { persistence: { enabled: false, reason: 'test' } }),
    resources: { [resource]: res },
    devices,
    numa: { nodes: numaNodes },
    pods,
    faults: {},
    events: [],
    sources: {
      podResources: { status: 'ok', lastSuccess: T0, reason: null },
      kubernetes: { status: 'disabled', lastSuccess: null, reason: 'no kubeconfig' },
    },
  };
}
