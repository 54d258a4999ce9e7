// The in-process device plugins as a source: every plugin event refreshes that resource in the model
// and is forwarded (allocations, preferred-allocation decisions, health transitions, kubelet restarts,
// registration) to the gateway's hooks for the event ring, metrics and Kubernetes Events.
import {
  preferredAllocation,
  type PluginRuntime,
  type PreferredAllocationDecision,
  type ResourcePlugin,
  type ResourcePluginEvents,
} from '@plugboard/plugin';
import type { PredictionResource } from '../model/placement.js';
import type { NodeModel } from '../model/node-model.js';
import type { FaultActuator } from '../faults/fault-store.js';
import { GatewayError } from '../errors.js';

export interface PluginHooks {
  health?: (resource: string, event: ResourcePluginEvents['health'][0]) => void;
  allocate?: (resource: string, event: ResourcePluginEvents['allocate'][0]) => void;
  preferredAllocation?: (resource: string, decision: PreferredAllocationDecision) => void;
  registered?: (resource: string, event: ResourcePluginEvents['registered'][0]) => void;
  kubeletRestart?: (resource: string, event: ResourcePluginEvents['kubelet-restart'][0]) => void;
  registrationError?: (resource: string, event: ResourcePluginEvents['registration-error'][0]) => void;
  waitingForKubelet?: (resource: string, event: ResourcePluginEvents['waiting-for-kubelet'][0]) => void;
}

function push(model: NodeModel, plugin: ResourcePlugin): void {
  model.setResource({
    name: plugin.resourceName,
    devices: plugin.devices(),
    registration: plugin.registration(),
    reported: plugin.reported(),
  });
}

/** Wires the plugins into the model; returns a function that detaches every listener. */
export function attachPlugins(
  runtime: Pick<PluginRuntime, 'resources'>,
  model: NodeModel,
  hooks: PluginHooks,
  refreshMs = 1000,
): () => void {
  const detach: (() => void)[] = [];
  for (const plugin of runtime.resources.values()) {
    const name = plugin.resourceName;
    const on = <K extends keyof ResourcePluginEvents>(
      event: K,
      fn: (...args: ResourcePluginEvents[K]) => void,
    ): void => {
      const listener = ((...args: ResourcePluginEvents[K]) => {
        push(model, plugin);
        fn(...args);
      }) as never;
      plugin.on(event, listener);
      detach.push(() => plugin.off(event, listener));
    };
    on('devices', () => undefined);
    on('reported', () => undefined);
    on('health', (e) => hooks.health?.(name, e));
    on('allocate', (e) => hooks.allocate?.(name, e));
    on('preferred-allocation', (d) => hooks.preferredAllocation?.(name, d));
    on('registered', (e) => hooks.registered?.(name, e));
    on('kubelet-restart', (e) => hooks.kubeletRestart?.(name, e));
    on('registration-error', (e) => hooks.registrationError?.(name, e));
    on('waiting-for-kubelet', (e) => hooks.waitingForKubelet?.(name, e));
    push(model, plugin);
  }
  // lastListAndWatchSend changes without an event; pick it up at a modest pace, and only rebuild the
  // model when the registration state actually changed.
  const lastRegistration = new Map<string, string>();
  const timer = setInterval(() => {
    for (const plugin of runtime.resources.values()) {
      const reg = JSON.stringify(plugin.registration());
      if (lastRegistration.get(plugin.resourceName) === reg) continue;
      lastRegistration.set(plugin.resourceName, reg);
      push(model, plugin);
    }
  }, refreshMs);
  timer.unref();
  detach.push(() => clearInterval(timer));
  return () => detach.forEach((fn) => fn());
}

/**
 * The fault store's actuator: the plugins' fault overlay (faults travel ListAndWatch to the kubelet).
 * A refusal is thrown as a GatewayError so the caller (REST, scenario, restore) sees it.
 */
export function pluginActuator(runtime: Pick<PluginRuntime, 'resources'>): FaultActuator {
  const run = (resource: string, fn: (p: ResourcePlugin) => void): void => {
    const plugin = runtime.resources.get(resource);
    if (!plugin) throw new GatewayError('invalid-body', `resource ${resource} is not served by this gateway`);
    try {
      fn(plugin);
    } catch (err) {
      throw GatewayError.from(err, 'invalid-body');
    }
  };
  return {
    inject: (resource, deviceId, reason, options = {}) =>
      run(resource, (p) => {
        if (options.taint) {
          throw new GatewayError(
            'invalid-body',
            `taint applies to DRA devices only: ${resource} is a device-plugin resource`,
          );
        }
        p.injectFault(deviceId, reason, options.absentOk ? { absentOk: true } : {});
      }),
    clear: (resource, deviceId) => run(resource, (p) => p.clearFault(deviceId)),
  };
}

/**
 * The served resources as "try to place" predicts with them: the devices as the kubelet was last
 * told (ListAndWatch order) and the plugin's own GetPreferredAllocation policy (when it offers one),
 * answered without the RPC so a preview leaves no trace in the plugin's decision log.
 */
export function predictionResources(runtime: Pick<PluginRuntime, 'resources'>): PredictionResource[] {
  return [...runtime.resources.values()].map((plugin) => {
    const reported = plugin.reported();
    return {
      name: plugin.resourceName,
      reported:
        reported && reported.map((d) => ({ id: d.id, health: d.health, numaNodes: [...d.numaNodes] })),
      preferred: plugin.pluginOptions().getPreferredAllocationAvailable
        ? (available, mustInclude, size) => {
            const numa = new Map(plugin.devices().map((d) => [d.id, d.numaNodes] as const));
            return preferredAllocation({
              available,
              mustInclude,
              size,
              numaNodesOf: (id) => numa.get(id) ?? [],
            }).chosen;
          }
        : null,
    };
  });
}
