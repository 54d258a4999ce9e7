// @plugboard/k8s-api: the Kubernetes API types Plugboard reads and writes as JSON, laid out like
// k8s.io/api (1.37): resource/v1 (DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate,
// DeviceTaintRule), the core/v1 node selectors they refer to and the Pod's claim fields. Types and
// upstream constants only.
export * from './core/v1/types.js';
export * from './resource/v1/types.js';
