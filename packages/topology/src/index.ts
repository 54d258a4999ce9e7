// @plugboard/topology: the kubelet's Topology, CPU and Memory Manager logic and the device
// manager's hints and device choice (pkg/kubelet/cm, release-1.33), pure and in memory. kubelet-sim
// admits pods with it; the gateway rebuilds the same managers from sysfs, configz and PodResources
// to predict where a pod would land on a real node. One implementation, so the two cannot drift.
export { TopologyError, admissionRejection, type TopologyErrorCode } from './errors.js';
export {
  HUGEPAGE_SIZES,
  machineFromLayout,
  uniformMachine,
  type CpuInfo,
  type HugepageResource,
  type MachineInfo,
  type NumaLayout,
  type NumaNode,
} from './machine/machine-info.js';
export {
  allMasks,
  bitsOf,
  countOf,
  isNarrower,
  isSet,
  maskOf,
  type Mask,
} from './topologymanager/bitmask.js';
export {
  applyPolicy,
  mergeHints,
  topologyAffinityError,
  type PolicyDecision,
} from './topologymanager/policy.js';
export {
  generateHints,
  MAX_ALIGNABLE_NUMA_NODES,
  TOPOLOGY_MANAGER_POLICIES,
  TOPOLOGY_MANAGER_SCOPES,
  type HintProvider,
  type ResourceHints,
  type TopologyHint,
  type TopologyManagerPolicy,
  type TopologyManagerScope,
} from './topologymanager/topology-manager.js';
export {
  TopologyAdmission,
  type AdmissionDecision,
  type AdmissionStep,
  type ContainerPlacement,
  type HintView,
  type ProviderHintsView,
  type TopologyAdmissionOptions,
  type TopologyOverride,
} from './topologymanager/scope.js';
export { CpuManager, type CpuManagerPolicy } from './cpumanager/cpu-manager.js';
export {
  MemoryManager,
  type MemoryBlock,
  type MemoryManagerPolicy,
  type MemoryResource,
} from './memorymanager/memory-manager.js';
export {
  NODE_WITHOUT_TOPOLOGY,
  type DeviceAllocation,
  type DeviceHintProvider,
  type DeviceView,
} from './devicemanager/types.js';
export { deviceHasTopologyAlignment, generateDeviceTopologyHints } from './devicemanager/topology-hints.js';
export {
  devicesByNuma,
  devicesToAllocate,
  type DevicesToAllocateRequest,
  type Picked,
  type ResourceDeviceState,
} from './devicemanager/devices-to-allocate.js';
export {
  containerRequests,
  effectiveRequests,
  invalid,
  podLevel,
  qosClass,
  type ContainerInput,
  type ContainerRequests,
  type PodRequests,
  type QosClass,
} from './pod/requests.js';
export { checkNodeResources } from './lifecycle/predicate.js';
export { parseInteger, parseMilliCpu, parseQuantity } from './resource/quantity.js';
export { isExtendedResourceName, isNativeResourceName } from './resource/resource-names.js';
