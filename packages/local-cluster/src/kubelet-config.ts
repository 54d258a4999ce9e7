// The KubeletConfiguration (kubelet.config.k8s.io/v1beta1) of a local node. Each setting that
// differs from the kubelet's defaults is here because this kind of machine needs it (no container
// engine, cgroup v1, no systemd, no iptables binary, the fake runtime's empty image filesystem) or
// because several kubelets share one machine (ports, directories); see docs/LOCAL-CLUSTER.md.

export type TopologyManagerPolicy = 'none' | 'best-effort' | 'restricted' | 'single-numa-node';

export interface KubeletConfigOptions {
  nodeIP: string;
  port: number;
  healthzPort: number;
  runtimeSocket: string;
  clientCAFile: string;
  podLogsDir: string;
  topologyManagerPolicy?: TopologyManagerPolicy;
  /** How often the kubelet computes node status (upstream default 10 s). */
  nodeStatusUpdateFrequency?: string;
}

export function kubeletConfiguration(o: KubeletConfigOptions): Record<string, unknown> {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: o.nodeIP,
    port: o.port,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: o.healthzPort,
    containerRuntimeEndpoint: `unix://${o.runtimeSocket}`,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: o.clientCAFile },
    },
    authorization: { mode: 'Webhook' },
    podLogsDir: o.podLogsDir,
    // Pods get a DNS config; nothing resolves through it (the fake runtime runs no process).
    clusterDNS: ['10.0.0.10'],
    clusterDomain: 'cluster.local',
    resolvConf: '/etc/resolv.conf',
    // Since 1.35 the kubelet refuses cgroup v1 unless told otherwise (KEP-5573); this machine is v1.
    failCgroupV1: false,
    // No kubepods hierarchy and no enforcement (which needs it); cgroupfs, as there is no systemd.
    cgroupsPerQOS: false,
    enforceNodeAllocatable: ['none'],
    cgroupDriver: 'cgroupfs',
    failSwapOn: false,
    // Otherwise the kubelet would write vm.overcommit_memory, kernel.panic… on the machine.
    protectKernelDefaults: false,
    makeIPTablesUtilChains: false,
    localStorageCapacityIsolation: false,
    // MemoryQoS is on by default in 1.37 and is a cgroup v2 feature.
    featureGates: { MemoryQoS: false },
    // The fake runtime has no image filesystem to garbage-collect or to run out of (kind does the same).
    imageGCHighThresholdPercent: 100,
    evictionHard: { 'nodefs.available': '0%', 'nodefs.inodesFree': '0%', 'imagefs.available': '0%' },
    topologyManagerPolicy: o.topologyManagerPolicy ?? 'none',
    ...(o.nodeStatusUpdateFrequency ? { nodeStatusUpdateFrequency: o.nodeStatusUpdateFrequency } : {}),
  };
}
