// The DRAPlugin gRPC service (NodePrepareResources / NodeUnprepareResources), served as v1 and, for
// kubelets before 1.34, v1beta1 (the same messages on the wire) by one implementation. Transport
// only: the driver decides per claim; a malformed request (no claims field is malformed, an empty
// list is a valid no-op) never fails the call, it fails the claims it names.
import type { Logger } from 'pino';
import { drav1, drav1beta1 } from '@plugboard/proto';
import { unaryHandler } from '../grpc-status.js';

export interface DraNodeHandlers {
  prepare(claims: readonly drav1.Claim[]): Promise<Record<string, drav1.NodePrepareResourceResponse>>;
  unprepare(claims: readonly drav1.Claim[]): Promise<Record<string, drav1.NodeUnprepareResourceResponse>>;
}

export function draNodeServices(
  handlers: DraNodeHandlers,
  logger: Logger,
): { v1: drav1.DRAPluginServer; v1beta1: drav1beta1.DRAPluginServer } {
  const impl: drav1.DRAPluginServer = {
    nodePrepareResources: unaryHandler(
      logger,
      'NodePrepareResources',
      async (request: drav1.NodePrepareResourcesRequest) => ({
        claims: await handlers.prepare(request.claims),
      }),
    ),
    nodeUnprepareResources: unaryHandler(
      logger,
      'NodeUnprepareResources',
      async (request: drav1.NodeUnprepareResourcesRequest) => ({
        claims: await handlers.unprepare(request.claims),
      }),
    ),
  };
  return { v1: impl, v1beta1: impl };
}
