// @plugboard/proto: the kubelet's gRPC APIs (device plugin v1beta1, PodResources v1,
// plugin registration) as generated types and @grpc/grpc-js stubs, plus the upstream constants and
// the Unix-socket server and directory-watch helpers both sides of those APIs use; and gnostic's OpenAPI v2 `Document`
// (openapi.v2), the protobuf kube-apiserver serves `/openapi/v2` as.
// The three APIs reuse message names (TopologyInfo, NUMANode, CDIDevice), so each is a namespace,
// and so is the OpenAPI document.
export * as deviceplugin from './gen/v1beta1/api.pb.js';
export * as podresources from './gen/podresources/v1/api.pb.js';
export * as pluginregistration from './gen/pluginregistration/v1/api.pb.js';
// Dynamic Resource Allocation: the DRAPlugin service (v1, and v1beta1 for older kubelets) and the
// DRAResourceHealth service (v1, and v1alpha1 for older kubelets), vendored verbatim from upstream.
export * as drav1 from './gen/dra/v1/api.pb.js';
export * as drav1beta1 from './gen/dra/v1beta1/api.pb.js';
export * as drahealthv1 from './gen/dra-health/v1/api.pb.js';
export * as drahealthv1alpha1 from './gen/dra-health/v1alpha1/api.pb.js';
export * as openapiv2 from './gen/openapiv2/OpenAPIv2.pb.js';
export * from './constants.js';
export {
  watchDirectory,
  watchFailureReason,
  type DirectoryWatch,
  type DirectoryWatchLogger,
  type DirectoryWatchMode,
  type WatchDirectoryOptions,
  type WatchFactory,
  type WatchHandle,
} from './dir-watch.js';
export { bindUnixServer, closeUnixServer, type BindUnixServerOptions } from './unix-server.js';
