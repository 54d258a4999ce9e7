// @plugboard/k8s-api: the Kubernetes API types Plugboard reads and writes as JSON, laid out like
// k8s.io/api (1.37): resource/v1 (DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate,
// DeviceTaintRule) and the core/v1 node selectors they refer to. Types and upstream constants only.
export * from './core/v1/types.js';
export * from './resource/v1/types.js';
