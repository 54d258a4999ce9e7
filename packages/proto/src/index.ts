// @plugboard/proto: the kubelet's gRPC APIs (device plugin v1beta1, PodResources v1,
// plugin registration) as generated types and @grpc/grpc-js stubs, plus the upstream constants and
// the Unix-socket server and directory-watch helpers both sides of those APIs use.
// The three APIs reuse message names (TopologyInfo, NUMANode, CDIDevice), so each is a namespace.
export * as deviceplugin from './gen/v1beta1/api.pb.js';
export * as podresources from './gen/podresources/v1/api.pb.js';
export * as pluginregistration from './gen/pluginregistration/v1/api.pb.js';
// Dynamic Resource Allocation: the DRAPlugin service (v1, and v1beta1 for older kubelets) and the
// DRAResourceHealth service (v1, and v1alpha1 for older kubelets), vendored verbatim from upstream.
export * as drav1 from './gen/dra/v1/api.pb.js';
export * as drav1beta1 from './gen/dra/v1beta1/api.pb.js';
export * as drahealthv1 from './gen/dra-health/v1/api.pb.js';
export * as drahealthv1alpha1 from './gen/dra-health/v1alpha1/api.pb.js';
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
export {
  bindUnixServer,
  closeUnixServer,
  connectionRoutes,
  unixSocketPathProblem,
  UNIX_SOCKET_PATH_MAX_BYTES,
  type BindUnixServerOptions,
  type ConnectionRefusal,
  type ConnectionRoute,
  type ConnectionRouter,
  type ConnectionRouterEvents,
  type RoutedUnixConnection,
  type UnixServerLogger,
} from './unix-server.js';
