// @plugboard/testbed: one place for a test to get a node and its clients.
export * from './real-cluster.js';
export * from './pod-resources.js';
export * from './wait.js';
