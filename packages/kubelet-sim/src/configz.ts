// The kubelet's `GET /configz` (k8s.io/component-base/configz, registered by cmd/kubelet's
// initConfigz; release-1.33): one key, `kubeletconfig`, holding the KubeletConfiguration in force as
// kubelet.config.k8s.io/v1beta1 JSON (no kind/apiVersion: configz serialises the struct as is). The
// API server's node proxy serves it at `/api/v1/nodes/{node}/proxy/configz`, which is how a node
// agent learns the Topology, CPU and Memory Manager policies without reading the kubelet's files.
// Only the fields the simulator models are filled; `omitempty` ones it does not use are left out.

import { formatCpuList } from './machine/node-shape.js';

export interface ConfigzInput {
  maxPods: number;
  cpuManagerPolicy: string;
  memoryManagerPolicy: string;
  topologyManagerPolicy: string;
  topologyManagerScope: string;
  reservedCpus: readonly number[];
}

export function configz(c: ConfigzInput): { kubeletconfig: Record<string, unknown> } {
  return {
    kubeletconfig: {
      enableServer: true,
      maxPods: c.maxPods,
      cpuManagerPolicy: c.cpuManagerPolicy,
      cpuManagerReconcilePeriod: '10s',
      memoryManagerPolicy: c.memoryManagerPolicy,
      topologyManagerPolicy: c.topologyManagerPolicy,
      topologyManagerScope: c.topologyManagerScope,
      ...(c.reservedCpus.length ? { reservedSystemCPUs: formatCpuList(c.reservedCpus) } : {}),
      podPidsLimit: -1,
      containerLogMaxSize: '10Mi',
      containerLogMaxFiles: 5,
    },
  };
}
