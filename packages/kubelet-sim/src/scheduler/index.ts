// The scheduler's part of Dynamic Resource Allocation for kubelet-sim (structured parameters, 1.37):
// the DynamicResources plugin for one node (dynamicresources/), the ResourceClaim controller's
// template → claim step, and the allocator with its CEL device selectors (structured/). Pure: the
// caller persists claims and pod status.

export {
  allocateClaims,
  PLUGIN_NAME,
  RESOURCE_CLAIM_FINALIZER,
  type AllocateClaimsInput,
  type AllocateClaimsResult,
} from './dynamicresources/dynamicresources.js';
export {
  createRequestsAndMappings,
  DeviceClassResolver,
  EXTENDED_RESOURCE_CLAIM_ANNOTATION,
  hasDeviceClassMappedExtendedResource,
  isDRAExtendedResourceName,
  RESOURCE_DEVICE_CLASS_PREFIX,
  type ExtendedResourcePod,
} from './dynamicresources/extendeddynamicresources.js';
export {
  claimGenerateName,
  claimsFromTemplates,
  generateName,
  POD_RESOURCE_CLAIM_ANNOTATION,
  type ClaimsFromTemplatesOptions,
  type ClaimsFromTemplatesResult,
} from './dynamicresources/resourceclaim-controller.js';
export {
  Allocator,
  ALLOCATION_RESULTS_MAX_SIZE,
  type AllocateOutcome,
  type AllocatorOptions,
} from './structured/allocator.js';
export {
  compileSelector,
  evaluateSelector,
  SelectorCache,
  validateSelector,
  type CelCompileError,
  type CelDevice,
  type CompiledSelector,
  type CompileResult,
} from './structured/cel/compile.js';
export { Quantity } from '@plugboard/apimachinery';
export { Semver } from './structured/cel/library/semver.js';
export { applyDeviceTaintRules } from './structured/device-taint-rules.js';
export { toleratesTaint } from './structured/device-toleration.js';
export { gatherPools, type Pool } from './structured/pools.js';
export type * from './types.js';
