// Name rules of the DRA API a driver is checked against before it starts.
import { DRIVER_NAME_MAX_LENGTH } from './api-types.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why a driver name is not acceptable (a DNS subdomain of at most 63 characters), or null. */
export function driverNameProblem(name: string): string | null {
  if (name.length === 0) return 'must not be empty';
  if (name.length > DRIVER_NAME_MAX_LENGTH) return `must be at most ${DRIVER_NAME_MAX_LENGTH} characters`;
  if (!DNS_SUBDOMAIN.test(name)) return 'must be a lower-case DNS subdomain such as "gpu.example.com"';
  return null;
}
