// @plugboard/api: the wire contract between Plugboard's parts — the node snapshot and summary the
// gateway serves, its history, the stream's messages and close codes, request schemas, fault
// scenarios, the one JSON Patch apply, and kubelet-sim's admission view. Owned by no app: the
// gateway, the dashboard, `kubectl plugboard` and kubelet-sim depend on it.
export type * from './common.ts';
export type * from './node.ts';
export type * from './dra.ts';
export type * from './extended-resources.ts';
export type * from './history.ts';
export type * from './admission.ts';
export * from './stream.ts';
export * from './json-patch.ts';
export * from './requests.ts';
export * from './scenarios.ts';
export * from './migration.ts';
