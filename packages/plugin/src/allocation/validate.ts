// Allocate input checks: every requested ID must be advertised, healthy and requested once; a
// shared resource can refuse requests for more than one replica.
import { PluginError } from '../errors.js';
import type { PluginDevice } from '../types.js';

export interface AllocateValidationOptions {
  lookup: (id: string) => PluginDevice | undefined;
  /** Shared resources: refuse a container asking for more than one replica. */
  failRequestsGreaterThanOne?: boolean;
  /** PreStartContainer may reset a device that turned unhealthy after Allocate. */
  allowUnhealthy?: boolean;
  /** RPC named in messages (default Allocate). */
  rpc?: string;
}

/** IDs named in an error message at most; a status message must stay small (it travels as a trailer). */
const MAX_NAMED_IDS = 20;

/** "a, b, c" — or the first MAX_NAMED_IDS and "… and N more" for long lists. */
export function nameIds(ids: readonly string[]): string {
  const shown = ids.slice(0, MAX_NAMED_IDS).map((id) => (id.length > 64 ? `${id.slice(0, 64)}…` : id));
  return ids.length > MAX_NAMED_IDS
    ? `${shown.join(', ')} … and ${ids.length - MAX_NAMED_IDS} more`
    : shown.join(', ');
}

/** Returns the devices of every container request, or throws `invalid-argument` naming bad IDs. */
export function validateAllocation(
  requests: readonly (readonly string[])[],
  options: AllocateValidationOptions,
): PluginDevice[][] {
  const rpc = options.rpc ?? 'Allocate';
  if (requests.length === 0) throw new PluginError('invalid-argument', `${rpc}: no container requests`);
  const unknown: string[] = [];
  const unhealthy: string[] = [];
  const duplicated: string[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  const result = requests.map((ids, index) => {
    if (ids.length === 0) problems.push(`container request ${index} has no device IDs`);
    if (options.failRequestsGreaterThanOne && ids.length > 1) {
      problems.push(
        `container request ${index} asks for ${ids.length} shared devices (${nameIds(ids)}); this resource allows 1 per container (failRequestsGreaterThanOne)`,
      );
    }
    const devices: PluginDevice[] = [];
    for (const id of ids) {
      if (seen.has(id)) {
        if (!duplicated.includes(id)) duplicated.push(id);
        continue;
      }
      seen.add(id);
      const device = options.lookup(id);
      if (!device) unknown.push(id);
      else if (device.health !== 'Healthy' && !options.allowUnhealthy) unhealthy.push(id);
      else devices.push(device);
    }
    return devices;
  });
  if (unknown.length) problems.push(`unknown device IDs: ${nameIds(unknown)}`);
  if (unhealthy.length) problems.push(`unhealthy device IDs: ${nameIds(unhealthy)}`);
  if (duplicated.length) problems.push(`duplicated device IDs: ${nameIds(duplicated)}`);
  if (problems.length > 0) throw new PluginError('invalid-argument', `${rpc}: ${problems.join('; ')}`);
  return result;
}

/**
 * GetPreferredAllocation input checks: every available and must-include ID must be advertised and
 * every must-include ID must be among the available ones (the kubelet passes available ∪ reused).
 */
export function validatePreferredRequest(
  available: readonly string[],
  mustInclude: readonly string[],
  lookup: (id: string) => PluginDevice | undefined,
): void {
  const unknown = [...new Set([...available, ...mustInclude])].filter((id) => !lookup(id));
  const availableSet = new Set(available);
  const notAvailable = [...new Set(mustInclude)].filter((id) => !availableSet.has(id) && lookup(id));
  const problems: string[] = [];
  if (unknown.length) problems.push(`unknown device IDs: ${nameIds(unknown)}`);
  if (notAvailable.length) problems.push(`must-include device IDs not available: ${nameIds(notAvailable)}`);
  if (problems.length > 0)
    throw new PluginError('invalid-argument', `GetPreferredAllocation: ${problems.join('; ')}`);
}
