// The DeviceClass a driver's users select its devices with, as upstream drivers ship it in their
// Helm chart (sigs.k8s.io/dra-example-driver's `gpu.example.com`): a CEL selector on the driver's
// name, optionally narrowed further, and optionally an `extendedResourceName` (extended resources
// backed by DRA, KEP-5004, GA in Kubernetes 1.37): pods may then ask `limits: {<name>: N}` with no
// claim, and the scheduler allocates the devices through a claim of its own. Every class also
// answers the implicit name `deviceclass.resource.kubernetes.io/<class>`.
//
// The driver never creates it itself: a DeviceClass is cluster-scoped and one per cluster, while a
// driver runs on every node. An operator applies it (`kubectl apply`) or a chart installs it.
import type { DeviceClass } from '@plugboard/k8s-api';
import { PluginError } from '../errors.js';
import { resourceNameProblem } from '../resource-name.js';

/** resourceapi.ResourceDeviceClassPrefix. */
export const RESOURCE_DEVICE_CLASS_PREFIX = 'deviceclass.resource.kubernetes.io/';

export interface DeviceClassOptions {
  /** The class's name (a DNS subdomain; cluster-wide). */
  name: string;
  /** An extended resource name (`example.com/gpu`) pods may ask for instead of a claim. */
  extendedResourceName?: string;
  /** CEL expressions ANDed with the driver selector (e.g. `device.attributes["…"].model == "X"`). */
  selectors?: string[];
}

/** The DeviceClass selecting `driverName`'s devices; throws PluginError for a bad extended resource name. */
export function deviceClassFor(
  driverName: string,
  options: DeviceClassOptions,
): DeviceClass & { apiVersion: 'resource.k8s.io/v1'; kind: 'DeviceClass' } {
  const extended = options.extendedResourceName;
  if (extended !== undefined) {
    const problem = resourceNameProblem(extended);
    if (problem !== null)
      throw new PluginError(
        'invalid-resource-name',
        `DeviceClass ${options.name}: extendedResourceName "${extended}": ${problem}`,
      );
  }
  return {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'DeviceClass',
    metadata: { name: options.name },
    spec: {
      selectors: [`device.driver == ${JSON.stringify(driverName)}`, ...(options.selectors ?? [])].map(
        (expression) => ({ cel: { expression } }),
      ),
      ...(extended !== undefined ? { extendedResourceName: extended } : {}),
    },
  };
}
