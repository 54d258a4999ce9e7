// @plugboard/testbed: one place for a test to get a node — simulated (kubelet-sim) or real (the
// local cluster) — its gateway and its clients.
export * from './test-node.js';
export * from './sim-node.js';
export * from './real-cluster.js';
export * from './sim-cluster.js';
export * from './test-cluster.js';
export * from './test-bed.js';
export * from './gateway-document.js';
export * from './gateway-client.js';
export * from './gateway-process.js';
export * from './pod.js';
export * from './pod-resources.js';
export * from './third-party.js';
export * from './dra-cleanup.js';
export * from './wait.js';
