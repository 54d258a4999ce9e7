// The one place a PluginError becomes a gRPC status, the unary-handler wrapper every service of the
// package uses (log with duration, map errors once), plus the server options shared by the
// DevicePlugin, DRA and plugin-watcher servers (binding them to Unix sockets is @plugboard/proto's
// bindUnixServer/closeUnixServer, shared with kubelet-sim).
import { Server, status, type sendUnaryData, type ServerUnaryCall, type ServiceError } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { PluginError, type PluginErrorCode } from './errors.js';

const STATUS_BY_CODE: Record<PluginErrorCode, status> = {
  'config-invalid': status.INVALID_ARGUMENT,
  'invalid-resource-name': status.INVALID_ARGUMENT,
  'invalid-argument': status.INVALID_ARGUMENT,
  'not-found': status.NOT_FOUND,
  'registration-failed': status.UNAVAILABLE,
  'source-failed': status.UNAVAILABLE,
  'pre-start-failed': status.INTERNAL,
  'api-request-failed': status.UNAVAILABLE,
  stopped: status.UNAVAILABLE,
  internal: status.INTERNAL,
};

export function toServiceError(err: unknown): Partial<ServiceError> {
  const e = PluginError.from(err);
  return { code: STATUS_BY_CODE[e.code], details: e.message, message: e.message };
}

export function newServer(): Server {
  // Small messages, local peers: no need for large defaults.
  return new Server({ 'grpc.max_receive_message_length': 4 * 1024 * 1024 });
}

export type UnaryHandler<Req, Res> = (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => void;

/**
 * A unary handler that runs `handle`, logs the call with its duration and maps a thrown error to a
 * gRPC status once; `after` sees every call (e.g. to emit an event).
 */
export function unaryHandler<Req, Res>(
  logger: Logger,
  rpc: string,
  handle: (request: Req) => Res | Promise<Res>,
  after?: (request: Req, ms: number, err: unknown) => void,
): UnaryHandler<Req, Res> {
  return (call, callback) => {
    const started = performance.now();
    const finish = (err: unknown, res?: Res): void => {
      const durationMs = performance.now() - started;
      after?.(call.request, durationMs, err);
      if (err === null) {
        logger.info({ rpc, durationMs }, 'rpc ok');
        callback(null, res);
      } else {
        const status = toServiceError(err);
        logger.warn({ rpc, durationMs, err: status.details }, 'rpc failed');
        callback(status, null);
      }
    };
    try {
      const result = handle(call.request);
      if (result instanceof Promise)
        result.then(
          (r) => finish(null, r),
          (e: unknown) => finish(e),
        );
      else finish(null, result);
    } catch (err) {
      finish(err);
    }
  };
}
