// @plugboard/grpc-authority: lets a @grpc/grpc-js server on a Unix socket serve the clients a
// grpc-go server (a real kubelet) serves — those that send the raw socket path as HTTP/2
// `:authority` (grpc-go < 1.57, grpc-java, older Python gRPC, kubelets < 1.26), which Node's HTTP/2
// layer refuses. `routeConnection` is a connection router for @plugboard/proto's bindUnixServer:
//
//   await bindUnixServer(server, socketPath, { log, routeConnection });
//
// This package does not import @plugboard/proto (its types match bindUnixServer's by shape), so
// either can be used without the other. Why and how: h2-authority-rewriter.ts.
export {
  AuthorityRewritingSocket,
  FIRST_REQUEST_TIMEOUT_MS,
  MAX_START_OCTETS,
  REWRITTEN_AUTHORITY,
  routeConnection,
  type AuthorityRewritingOptions,
  type ConnectionRoute,
  type ConnectionRoutingOptions,
  type H2Refusal,
  type RewritingReason,
  type RoutedConnection,
} from './h2-authority-rewriter.js';
