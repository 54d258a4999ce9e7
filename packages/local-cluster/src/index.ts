// @plugboard/local-cluster: a real Kubernetes on this machine, for tests and the demo.
export {
  ensureBinaries,
  cachedBinaries,
  binariesDir,
  cacheRoot,
  type Binaries,
  type BinaryName,
  type BuildProgress,
} from './binaries.js';
export {
  up,
  assertCanRunCluster,
  down,
  status,
  addNode,
  removeNode,
  restartKubelet,
  startKubelet,
  stopKubelet,
  readState,
  hostNodeIP,
  socketsUnder,
  type UpOptions,
  type ComponentStatus,
} from './cluster.js';
export { writeKubeconfig } from './pki.js';
export { runKubectl, type KubectlResult } from './kubectl.js';
export { LocalClusterError, type LocalClusterErrorCode } from './errors.js';
export type { TopologyManagerPolicy } from './kubelet-config.js';
export {
  clusterInfo,
  HOST_DEVICE_PLUGIN_DIR,
  type ClusterInfo,
  type ClusterState,
  type NodeState,
} from './state.js';
export {
  ensureThirdPartyBinary,
  cachedThirdPartyBinary,
  THIRD_PARTY_BINARIES,
  THIRD_PARTY_NAMES,
  thirdPartyLabel,
  type ThirdPartyBinary,
  type ThirdPartyBinaryName,
} from './third-party.js';
export { KUBERNETES_VERSION } from './versions.js';
