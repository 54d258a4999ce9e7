// The kubelet's `GET /configz` (k8s.io/component-base/configz, registered by cmd/kubelet's
// initConfigz; release-1.33): one key, `kubeletconfig`, holding the KubeletConfiguration in force as
// kubelet.config.k8s.io/v1beta1 JSON (no kind/apiVersion: configz serialises the struct as is). The
// API server's node proxy serves it at `/api/v1/nodes/{node}/proxy/configz`, which is how a node
// agent learns the Topology, CPU and Memory Manager policies without reading the kubelet's files.
// Only the fields the simulator models are filled; `omitempty` ones it does not use are left out.

export interface ConfigzInput {
  maxPods: number;
  cpuManagerPolicy: string;
  memoryManagerPolicy: string;
  topologyManagerPolicy: string;
  topologyManagerScope: string;
  reservedCpus: readonly number[];
}

/** A CPU list in the kernel's cpuset syntax (`0-3,8`), as cpuset.CPUSet.String writes it. */
export function formatCpuSet(ids: readonly number[]): string {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  const ranges: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    ranges.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return ranges.join(',');
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
      ...(c.reservedCpus.length ? { reservedSystemCPUs: formatCpuSet(c.reservedCpus) } : {}),
      podPidsLimit: -1,
      containerLogMaxSize: '10Mi',
      containerLogMaxFiles: 5,
    },
  };
}
