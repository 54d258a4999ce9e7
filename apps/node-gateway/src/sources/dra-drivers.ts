// The in-process DRA drivers as a source, as plugins.ts does for device plugins: every driver event
// refreshes that driver in the model (devices with the fault overlay, the health the kubelet was
// last sent, registration, health streams, slice publication) and is forwarded to the gateway's
// hooks for the event ring, metrics and Kubernetes Events. Also the fault store's actuator for the
// drivers' devices: a fault goes into the driver's overlay (→ NodeWatchResources → the pods'
// allocatedResourcesStatus) and, when asked, becomes a device taint in its ResourceSlice.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import {
  draDeviceName,
  kubeApiFromKubeConfig,
  startDraDrivers,
  type DraDriver,
  type DraDriverEvents,
  type DraRuntime,
} from '@plugboard/plugin';
import type { GatewayConfig } from '../config.js';
import type { DraDriverInput } from '../model/dra.js';
import type { NodeModel } from '../model/node-model.js';
import type { FaultActuator } from '../faults/fault-store.js';
import type { TaintRuleFaults } from '../faults/taint-rules.js';
import { GatewayError } from '../errors.js';
import { sameItems } from '../same-items.js';

export interface DraDriverHooks {
  health?: (driver: string, event: DraDriverEvents['health'][0]) => void;
  registered?: (driver: string, event: DraDriverEvents['registered'][0]) => void;
  registrationError?: (driver: string, event: DraDriverEvents['registration-error'][0]) => void;
  prepared?: (driver: string, event: DraDriverEvents['prepared'][0]) => void;
  unprepared?: (driver: string, event: DraDriverEvents['unprepared'][0]) => void;
  slicesError?: (driver: string, event: DraDriverEvents['slices-error'][0]) => void;
}

/** The drivers this gateway runs, by name (DraRuntime's `drivers`). */
export type DraDrivers = Pick<DraRuntime, 'drivers'>;

export function draDriverInput(driver: DraDriver): DraDriverInput {
  const registration = driver.registration();
  const publication = driver.publication();
  return {
    name: driver.driverName,
    poolName: driver.poolName,
    devices: driver.devices(),
    sliceDevices: driver.sliceDevices(),
    reported: driver.healthReported(),
    registration: {
      phase: registration.phase,
      registeredAt: registration.registeredAt,
      error: registration.error,
    },
    healthStreams: driver.healthStreams,
    publication: {
      generation: publication.generation,
      slices: publication.slices,
      lastPublishedAt: publication.lastPublishedAt,
      error: publication.error,
    },
  };
}

/** The driver keeps unchanged devices and slice entries as the same objects: compare by reference. */
function sameDriverInput(a: DraDriverInput, b: DraDriverInput): boolean {
  return (
    a.devices === b.devices &&
    a.reported === b.reported &&
    a.healthStreams === b.healthStreams &&
    sameItems(a.sliceDevices, b.sliceDevices) &&
    a.registration.phase === b.registration.phase &&
    a.registration.registeredAt === b.registration.registeredAt &&
    a.registration.error === b.registration.error &&
    a.publication.generation === b.publication.generation &&
    a.publication.lastPublishedAt === b.publication.lastPublishedAt &&
    a.publication.error === b.publication.error &&
    sameItems(a.publication.slices, b.publication.slices)
  );
}

/** Wires the drivers into the model; returns a function that detaches every listener. */
export function attachDraDrivers(runtime: DraDrivers, model: NodeModel, hooks: DraDriverHooks): () => void {
  const detach: (() => void)[] = [];
  for (const driver of runtime.drivers.values()) {
    const name = driver.driverName;
    let last: DraDriverInput | null = null;
    const push = (): void => {
      const next = draDriverInput(driver);
      // The health heartbeat (every third of the health timeout) changes nothing: no rebuild.
      if (last && sameDriverInput(last, next)) return;
      last = next;
      model.setDraDriver(next);
    };
    const on = <K extends keyof DraDriverEvents>(
      event: K,
      fn: (...args: DraDriverEvents[K]) => void,
    ): void => {
      const listener = ((...args: DraDriverEvents[K]) => {
        push();
        fn(...args);
      }) as never;
      driver.on(event, listener);
      detach.push(() => driver.off(event, listener));
    };
    const none = (): void => undefined;
    on('devices', none);
    on('health-sent', none);
    on('health-streams', none);
    on('slices-published', none);
    on('socket-restored', none);
    on('health', (e) => hooks.health?.(name, e));
    on('registered', (e) => hooks.registered?.(name, e));
    on('registration-error', (e) => hooks.registrationError?.(name, e));
    on('prepared', (e) => hooks.prepared?.(name, e));
    on('unprepared', (e) => hooks.unprepared?.(name, e));
    on('slices-error', (e) => hooks.slicesError?.(name, e));
    push();
    detach.push(() => model.removeDraDriver(name));
  }
  return () => detach.forEach((fn) => fn());
}

/**
 * The fault store's actuator for DRA drivers: the driver's fault overlay, taking a device's source
 * ID or ResourceSlice name. A refusal is thrown as a GatewayError ('invalid-body').
 */
export function draActuator(runtime: DraDrivers): FaultActuator & { serves(resource: string): boolean } {
  const run = <T>(resource: string, fn: (d: DraDriver) => T): T => {
    const driver = runtime.drivers.get(resource);
    if (!driver) throw new GatewayError('invalid-body', `DRA driver ${resource} is not run by this gateway`);
    try {
      return fn(driver);
    } catch (err) {
      throw GatewayError.from(err, 'invalid-body');
    }
  };
  return {
    serves: (resource) => runtime.drivers.has(resource),
    inject: (resource, deviceId, reason, options = {}) =>
      run(resource, (d) =>
        d.injectFault(deviceId, reason, {
          ...(options.absentOk ? { absentOk: true } : {}),
          taint: options.taint ?? null,
        }),
      ),
    clear: (resource, deviceId) => run(resource, (d) => d.clearFault(deviceId)),
    resolve: (resource, deviceId) =>
      run(
        resource,
        (d) => d.devices().find((x) => x.id === deviceId || draDeviceName(x.id) === deviceId)?.id,
      ) ?? deviceId,
  };
}

/**
 * Routes each fault to its DeviceTaintRule (a fault with `taintRule`: another driver's device), else
 * to the DRA driver of that name, else to the device plugin of that resource.
 */
export function routeFaults(
  plugins: FaultActuator,
  dra: FaultActuator & { serves(resource: string): boolean },
  taintRules?: TaintRuleFaults,
): FaultActuator {
  const to = (resource: string): FaultActuator => (dra.serves(resource) ? dra : plugins);
  return {
    inject: (resource, deviceId, reason, options) => {
      if (options?.taintRule && taintRules) {
        taintRules.want({ rule: options.taintRule, effect: options.taint ?? 'None', reason });
      } else to(resource).inject(resource, deviceId, reason, options);
    },
    clear: (resource, deviceId, options) => {
      if (options?.taintRule && taintRules) taintRules.unwant(options.taintRule);
      else to(resource).clear(resource, deviceId);
    },
    resolve: (resource, deviceId) =>
      (dra.serves(resource) ? dra.resolve?.(resource, deviceId) : null) ?? deviceId,
  };
}

/**
 * Starts the config's `dra:` drivers (none: null) against the gateway's Kubernetes API, with the
 * gateway's directories and faults allowed to carry taints. The drivers need the API: without it,
 * a config error.
 */
export async function startConfiguredDraDrivers(
  config: Pick<GatewayConfig, 'plugins' | 'nodeName' | 'pluginsDir' | 'pluginsRegistryDir' | 'cdiDir'>,
  kubeConfig: KubeConfig | null,
  logger: Logger,
): Promise<DraRuntime | null> {
  if (config.plugins.dra.length === 0) return null;
  if (!kubeConfig) {
    throw new GatewayError(
      'config-invalid',
      `DRA drivers (dra: ${config.plugins.dra.map((d) => d.driver).join(', ')}) need the Kubernetes API: set gateway.kube (kubeconfig or in-cluster)`,
    );
  }
  return startDraDrivers(config.plugins, {
    nodeName: config.nodeName,
    kube: await kubeApiFromKubeConfig({ kubeConfig }),
    pluginsDir: config.pluginsDir,
    pluginsRegistryDir: config.pluginsRegistryDir,
    cdiDir: config.cdiDir,
    logger,
    faultTaints: true,
  });
}
