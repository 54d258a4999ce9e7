// @plugboard/proto: the kubelet's gRPC APIs (device plugin v1beta1, PodResources v1,
// plugin registration) as generated types and @grpc/grpc-js stubs, plus the upstream constants and
// the Unix-socket server helpers both sides of those APIs use.
// The three APIs reuse message names (TopologyInfo, NUMANode, CDIDevice), so each is a namespace.
export * as deviceplugin from './gen/v1beta1/api.pb.js';
export * as podresources from './gen/podresources/v1/api.pb.js';
export * as pluginregistration from './gen/pluginregistration/v1/api.pb.js';
export * from './constants.js';
export { bindUnixServer, closeUnixServer, type BindUnixServerOptions } from './unix-server.js';
