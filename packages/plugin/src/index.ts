// @plugboard/plugin: write Kubernetes device plugins in TypeScript. Public API.
export { PluginError, type PluginErrorCode } from './errors.js';
export {
  loadPluginConfig,
  parsePluginConfig,
  parseConfigWith,
  pluginConfigSchema,
  resourceConfigSchema,
  draDriverConfigSchema,
  type PluginConfig,
  type ResourceConfig,
  type DraDriverConfig,
  type ParseConfigOptions,
} from './config.js';
export {
  startPlugins,
  sourceFromConfig,
  deviceSourceFromSections,
  type PluginRuntime,
  type StartPluginsOptions,
} from './runtime.js';
export { ResourcePlugin, defaultSocketName, type ResourcePluginOptions } from './resource-plugin.js';
export { resourceNameProblem, assertResourceName } from './resource-name.js';
export {
  preferredAllocation,
  type PreferredAllocationInput,
  type PreferredAllocationResult,
} from './allocation/preferred.js';
export { validateAllocation } from './allocation/validate.js';
export {
  allocateResponseBuilder,
  DEFAULT_ENV,
  type AllocateTemplate,
  type CdiOptions,
  type DeviceSpecTemplate,
  type MountTemplate,
} from './allocation/response.js';
export { TEMPLATE_VARIABLES } from './allocation/template.js';
export { cdiSpec, writeCdiSpec, DEFAULT_CDI_SPEC_DIR } from './cdi.js';
export { SimulatedSource, type SimulatedSourceOptions } from './sources/simulated.js';
export { PathsSource, type PathsSourceOptions } from './sources/paths.js';
export { SysfsPciSource, type SysfsPciSourceOptions } from './sources/sysfs-pci.js';
export { ScanningSource } from './sources/scanning.js';
export { REPLICA_SEPARATOR } from './device-state.js';
export { createLogger, flushLogger, type LogLevel } from './logger.js';
export type {
  DeviceHealth,
  DeviceSource,
  SourceDevice,
  PluginDevice,
  PreferredAllocationDecision,
  RegistrationState,
  FileWatchState,
  RegistrationPhase,
  RegistrationMode,
  ResourcePluginEvents,
  RestartDetectedBy,
  NotHeldCause,
} from './types.js';
// Dynamic Resource Allocation: a DRA driver on the same device sources and fault overlay.
export {
  DraDriver,
  type DraDriverOptions,
  type DraDriverEvents,
  type DraClaimContext,
  type DraClaimOutcome,
  type DraRegistrationState,
  type DraRegistrationPhase,
  type DraFaultOptions,
  type FaultTaintEffect,
} from './dra/driver.js';
export type {
  DRAPlugin,
  ClaimToPrepare,
  PrepareResult,
  PreparedDeviceResult,
  UnprepareResult,
} from './dra/draplugin.js';
export type { ClaimRef } from './dra/claims.js';
export {
  DEVICE_READY_CONDITION,
  DEVICE_READY_REASON,
  type DeviceStatusContext,
  type DeviceStatusOptions,
  type DeviceStatusReport,
} from './dra/device-status.js';
export type { DeviceStatusOutcome } from './dra/helper.js';
export { driverNameProblem } from './dra/names.js';
export { deviceClassFor, RESOURCE_DEVICE_CLASS_PREFIX, type DeviceClassOptions } from './dra/device-class.js';
export {
  allowPlainHttpClusters,
  kubeApiFromKubeConfig,
  type DraKubeApi,
  type KubeAccess,
  type ResourceClaimStatusPatch,
} from './dra/kube-api.js';
export {
  startDraDrivers,
  draDriverFromConfig,
  faultDirOf,
  type DraRuntime,
  type StartDraDriversOptions,
} from './dra/runtime.js';
export { FaultDir, FAULT_STATUS_FILE, type FaultDirStatus } from './dra/fault-dir.js';
export type { PublicationStats, PublishedEvent } from './dra/resource-slices.js';
export {
  draDeviceName,
  evenPartitions,
  FAULT_TAINT_VALUE,
  type DevicePartition,
  type PartitionOptions,
} from './dra/slice-devices.js';
export type { PreparedClaim, PreparedDevice } from './dra/checkpoint.js';
export type {
  AllocatedDeviceStatus,
  DeviceAttribute,
  DeviceTaint,
  DeviceTaintEffect,
  ResourceClaim,
  ResourceSlice,
  SliceDevice,
} from './dra/api-types.js';
export { STANDARD_ATTRIBUTE_NUMA_NODE, STANDARD_ATTRIBUTE_PCI_BUS_ID } from './dra/api-types.js';
