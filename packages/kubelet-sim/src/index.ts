// @plugboard/kubelet-sim: an embedded kubelet stand-in for device-plugin development and tests.
export { startKubeletSim, parseListen } from './kubelet-sim.js';
export type {
  KubeletSim,
  KubeletSimOptions,
  KubeletSimEvents,
  KubeletState,
  DeviceManagerState,
  PodState,
} from './types.js';
export { KubeletSimError } from './errors.js';
export type { KubeletSimErrorCode } from './errors.js';
export type { PodSpecInput } from './pods/pod-spec.js';
export type { AdmittedPod, BackoffOptions } from './pods/runtime.js';
export type { ResourceView, DeviceView, PluginOptions, RegisteredVia } from './cm/devicemanager/types.js';
export type { KubeObject } from './apiserver/object-store.js';
// Dynamic Resource Allocation: what state().dra and the pods' DRA fields hold.
export type { DraStateView, DraClaimView, DraResourceStatus, DynamicResourceView } from './cm/dra/manager.js';
export type { DriverView } from './cm/dra/plugin/dra-plugin-manager.js';
export type { ContainerClaim, PodResourceClaim, PodResourceClaimStatus } from './cm/dra/types.js';
export type { RateLimit } from './apis/podresources/grpc/ratelimit.js';
// The resource managers' types and names come from @plugboard/topology (kubelet-sim admits with it).
export type {
  AdmissionDecision,
  AdmissionStep,
  ContainerPlacement,
  CpuManagerPolicy,
  HintProvider,
  HintView,
  HugepageResource,
  MemoryBlock,
  MemoryManagerPolicy,
  MemoryResource,
  ProviderHintsView,
  TopologyManagerPolicy,
  TopologyManagerScope,
  TopologyOverride,
} from '@plugboard/topology';
export {
  isExtendedResourceName,
  TOPOLOGY_MANAGER_POLICIES,
  TOPOLOGY_MANAGER_SCOPES,
} from '@plugboard/topology';
/** A protobuf request body (`application/vnd.kubernetes.protobuf`) as the JSON the API slice stores. */
export { decodeProtobufObject } from './apiserver/protobuf.js';
