// The one place a PluginError becomes a gRPC status, plus the server options shared by the
// DevicePlugin and plugin-watcher servers (binding them to Unix sockets is @plugboard/proto's
// bindUnixServer/closeUnixServer, shared with kubelet-sim).
import { Server, status, type ServiceError } from '@grpc/grpc-js';
import { PluginError, type PluginErrorCode } from './errors.js';

const STATUS_BY_CODE: Record<PluginErrorCode, status> = {
  'config-invalid': status.INVALID_ARGUMENT,
  'invalid-resource-name': status.INVALID_ARGUMENT,
  'invalid-argument': status.INVALID_ARGUMENT,
  'not-found': status.NOT_FOUND,
  'registration-failed': status.UNAVAILABLE,
  'source-failed': status.UNAVAILABLE,
  'pre-start-failed': status.INTERNAL,
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
