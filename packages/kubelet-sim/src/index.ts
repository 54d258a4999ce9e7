// @plugboard/kubelet-sim: an embedded kubelet stand-in for device-plugin development and tests.
export { startKubeletSim, parseListen } from './kubelet-sim.js';
export type {
  KubeletSim,
  KubeletSimOptions,
  KubeletSimEvents,
  DeviceManagerState,
  PodState,
} from './types.js';
export { KubeletSimError } from './errors.js';
export type { KubeletSimErrorCode } from './errors.js';
export type { PodSpecInput } from './pods/pod-spec.js';
export type { AdmittedPod, BackoffOptions } from './pods/runtime.js';
export type { ResourceView, DeviceView, PluginOptions, RegisteredVia } from './cm/devicemanager/types.js';
export type { KubeObject } from './apiserver/object-store.js';
export type { RateLimit } from './apis/podresources/grpc/ratelimit.js';
export type { CpuManagerPolicy } from './cm/cpumanager/cpu-manager.js';
export type { MemoryManagerPolicy, MemoryBlock, MemoryResource } from './cm/memorymanager/memory-manager.js';
export type { HugepageResource } from './machine/node-shape.js';
export type {
  AdmissionDecision,
  AdmissionStep,
  ContainerPlacement,
  HintView,
  ProviderHintsView,
  TopologyOverride,
} from './cm/topologymanager/scope.js';
export type {
  TopologyManagerPolicy,
  TopologyManagerScope,
  HintProvider,
} from './cm/topologymanager/topology-manager.js';
export { TOPOLOGY_MANAGER_POLICIES, TOPOLOGY_MANAGER_SCOPES } from './cm/topologymanager/topology-manager.js';
export { isExtendedResourceName } from './util/resource-names.js';
