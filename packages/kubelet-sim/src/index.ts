// @plugboard/kubelet-sim: an embedded kubelet stand-in for device-plugin development and tests.
export { startKubeletSim, parseListen } from './kubelet-sim.js';
export type {
  KubeletSim,
  KubeletSimOptions,
  KubeletSimEvents,
  DeviceManagerState,
  PodState,
} from './kubelet-sim.js';
export { KubeletSimError } from './errors.js';
export type { KubeletSimErrorCode } from './errors.js';
export type { PodSpecInput } from './pod-spec.js';
export type { AdmittedPod, BackoffOptions } from './pods.js';
export type { ResourceView, DeviceView, PluginOptions, RegisteredVia } from './device-manager.js';
export type { KubeObject } from './object-store.js';
export type { RateLimit } from './pod-resources-server.js';
export type { CpuManagerPolicy } from './cpu-manager.js';
export type { MemoryManagerPolicy, MemoryBlock, MemoryResource } from './memory-manager.js';
export type { HugepageResource } from './node-shape.js';
export type {
  AdmissionDecision,
  AdmissionStep,
  ContainerPlacement,
  HintView,
  ProviderHintsView,
  TopologyOverride,
} from './admission.js';
export type { TopologyManagerPolicy, TopologyManagerScope, HintProvider } from './topology-manager.js';
export { TOPOLOGY_MANAGER_POLICIES, TOPOLOGY_MANAGER_SCOPES } from './topology-manager.js';
export { isExtendedResourceName } from './resource-names.js';
