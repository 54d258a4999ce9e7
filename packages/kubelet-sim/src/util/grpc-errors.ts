// How the kubelet (Go, grpc-go's status package) prints and returns gRPC errors, so messages read
// like a real kubelet's: a plugin's failure shows up as `rpc error: code = Unknown desc = …`, and a
// Go error returned from a kubelet handler reaches the caller as status UNKNOWN with its text.

import { status, type ServiceError } from '@grpc/grpc-js';

const CODE_NAMES: Record<number, string> = {
  0: 'OK',
  1: 'Canceled',
  2: 'Unknown',
  3: 'InvalidArgument',
  4: 'DeadlineExceeded',
  5: 'NotFound',
  6: 'AlreadyExists',
  7: 'PermissionDenied',
  8: 'ResourceExhausted',
  9: 'FailedPrecondition',
  10: 'Aborted',
  11: 'OutOfRange',
  12: 'Unimplemented',
  13: 'Internal',
  14: 'Unavailable',
  15: 'DataLoss',
  16: 'Unauthenticated',
};

function isServiceError(err: unknown): err is ServiceError {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as ServiceError).code === 'number' &&
    'details' in err
  );
}

/** grpc-go's `status.Error(...).Error()` text for an error from a plugin call. */
export function goGrpcErrorText(err: unknown): string {
  if (isServiceError(err))
    return `rpc error: code = ${CODE_NAMES[err.code] ?? String(err.code)} desc = ${err.details}`;
  return err instanceof Error ? err.message : String(err);
}

/** A Go error returned from a gRPC handler: status UNKNOWN with the error text. */
export function unknownStatus(message: string): Partial<ServiceError> {
  return { code: status.UNKNOWN, details: message, message };
}
