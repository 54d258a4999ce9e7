// The Node object the simulated kubelet keeps up to date (what pkg/kubelet/nodestatus setters.go
// report, stored as the API server would): capacity and allocatable with the extended resources
// from the device manager (capacity = all devices, allocatable = healthy, 0 once a gone plugin's
// grace period expired), conditions with their heartbeat, addresses and nodeInfo.

import { release } from 'node:os';
import { kubeTime } from '../util/kube-time.js';
import { CONTAINER_RUNTIME_VERSION } from '../kuberuntime/runtime.js';
import type { KubeObject } from '../apiserver/object-store.js';
import { totalCpus, totalHugepages, totalMemoryBytes, type NodeShape } from '../machine/node-shape.js';

/** The Kubernetes release whose kubelet and API server the simulator follows. */
export const SIMULATED_KUBERNETES_VERSION = 'v1.37.0';
/** What the Node reports as `kubeletVersion` and `/version` as `gitVersion`: says it is simulated. */
export const SIMULATED_KUBELET_VERSION = `${SIMULATED_KUBERNETES_VERSION}-plugboard-sim`;

export interface NodeObjectInput {
  name: string;
  uid: string;
  createdAt: Date;
  readySince: Date;
  /** When the kubelet last reported its status (the conditions' lastHeartbeatTime). */
  heartbeat: Date;
  hostIp: string;
  port: number;
  shape: NodeShape;
  /** reservedSystemCPUs: taken off allocatable cpu (the kubelet's system reservation). */
  reservedCpus: number;
  capacity: Map<string, number>;
  allocatable: Map<string, number>;
}

function memoryQuantity(bytes: number): string {
  if (bytes === 0) return '0';
  return bytes % 1024 === 0 ? `${bytes / 1024}Ki` : String(bytes);
}

export function renderNode(n: NodeObjectInput): KubeObject {
  const base = {
    cpu: String(totalCpus(n.shape)),
    memory: memoryQuantity(totalMemoryBytes(n.shape)),
    pods: String(n.shape.maxPods),
    'ephemeral-storage': '102400Mi',
    'hugepages-1Gi': memoryQuantity(totalHugepages(n.shape, 'hugepages-1Gi')),
    'hugepages-2Mi': memoryQuantity(totalHugepages(n.shape, 'hugepages-2Mi')),
  };
  const allocatableCpu = totalCpus(n.shape) - n.reservedCpus;
  const extended = (m: Map<string, number>) =>
    Object.fromEntries([...m].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, String(v)]));
  const since = kubeTime(n.readySince);
  const heartbeat = kubeTime(n.heartbeat);
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    lastHeartbeatTime: heartbeat,
    lastTransitionTime: since,
    reason,
    message,
  });
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: n.name,
      uid: n.uid,
      creationTimestamp: kubeTime(n.createdAt),
      labels: {
        'beta.kubernetes.io/arch': arch,
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': arch,
        'kubernetes.io/hostname': n.name,
        'kubernetes.io/os': 'linux',
      },
      annotations: { 'plugboard.dev/kubelet-sim': 'true' },
    },
    spec: {},
    status: {
      capacity: { ...base, ...extended(n.capacity) },
      allocatable: { ...base, cpu: String(allocatableCpu), ...extended(n.allocatable) },
      conditions: [
        condition(
          'MemoryPressure',
          'False',
          'KubeletHasSufficientMemory',
          'kubelet has sufficient memory available',
        ),
        condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      addresses: [
        { type: 'InternalIP', address: n.hostIp },
        { type: 'Hostname', address: n.name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: n.port } },
      nodeInfo: {
        machineID: n.uid.replace(/-/g, ''),
        systemUUID: n.uid,
        bootID: n.uid,
        kernelVersion: release(),
        osImage: 'Plugboard kubelet-sim',
        containerRuntimeVersion: CONTAINER_RUNTIME_VERSION,
        kubeletVersion: SIMULATED_KUBELET_VERSION,
        kubeProxyVersion: '',
        operatingSystem: 'linux',
        architecture: arch,
      },
    },
  };
}
