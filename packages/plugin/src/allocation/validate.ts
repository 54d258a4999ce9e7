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
}

/** Returns the devices of every container request, or throws `invalid-argument` naming bad IDs. */
export function validateAllocation(
  requests: readonly (readonly string[])[],
  options: AllocateValidationOptions,
): PluginDevice[][] {
  if (requests.length === 0) throw new PluginError('invalid-argument', 'Allocate: no container requests');
  const unknown: string[] = [];
  const unhealthy: string[] = [];
  const duplicated: string[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  const result = requests.map((ids, index) => {
    if (ids.length === 0) problems.push(`container request ${index} has no device IDs`);
    if (options.failRequestsGreaterThanOne && ids.length > 1) {
      problems.push(
        `container request ${index} asks for ${ids.length} shared devices (${ids.join(', ')}); this resource allows 1 per container (failRequestsGreaterThanOne)`,
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
  if (unknown.length) problems.push(`unknown device IDs: ${unknown.join(', ')}`);
  if (unhealthy.length) problems.push(`unhealthy device IDs: ${unhealthy.join(', ')}`);
  if (duplicated.length) problems.push(`duplicated device IDs: ${duplicated.join(', ')}`);
  if (problems.length > 0) throw new PluginError('invalid-argument', `Allocate: ${problems.join('; ')}`);
  return result;
}
