// The in-process plugins' events as the gateway reports them: ring events, Kubernetes Events on the
// Node, metrics and log lines for health changes, allocations, preferred allocations, registration,
// the kubelet letting go of a plugin and kubelet restarts; plus the PodResources re-polls they call for.
import type { Logger } from 'pino';
import type { NodeModel } from '../model/node-model.js';
import type { TopologyState } from '../model/topology-state.js';
import type { GatewayMetrics } from '../http/metrics.js';
import type { PluginHooks } from '../sources/plugins.js';
import { deviceHealthEvent, type GatewayEvents } from './gateway-events.js';

export interface PluginEventDeps {
  model: Pick<NodeModel, 'snapshot'>;
  events: GatewayEvents;
  metrics: GatewayMetrics;
  topology: Pick<TopologyState, 'recordPreferred'>;
  logger: Logger;
  /** Ask the PodResources poller (if any) to look again after `delayMs` (its default when omitted). */
  pollSoon: (delayMs?: number) => void;
  /** A kubelet restart was seen: its settings (configz) may have changed. */
  kubeletRestarted?: () => void;
}

export function pluginEventHooks(deps: PluginEventDeps): PluginHooks {
  const { model, events, metrics, topology, logger, pollSoon, kubeletRestarted } = deps;
  /** Resources the kubelet let go of, until they register again. */
  const waitingForKubelet = new Set<string>();
  return {
    health: (resource, e) => {
      const message = `${resource}/${e.deviceId} is ${e.health}${e.reason ? `: ${e.reason}` : ''}`;
      const alloc = model.snapshot().devices[`${resource}/${e.deviceId}`]?.allocation ?? null;
      deviceHealthEvent(events, {
        resource,
        deviceIds: [e.deviceId],
        pod: alloc && { namespace: alloc.namespace, name: alloc.pod, container: alloc.container },
        message,
        at: e.at,
        health: e.health,
      });
      // Allocatable changes in the kubelet right after ListAndWatch; look soon rather than in a second.
      pollSoon(10);
    },
    allocate: (resource, e) => {
      metrics.allocateDuration.observe({ resource, result: e.ok ? 'success' : 'error' }, e.durationMs / 1000);
      events.ring({
        kind: 'allocation',
        resource,
        deviceIds: e.deviceIds.flat(),
        message: e.ok
          ? `Allocate ${e.deviceIds.map((c) => `[${c.join(', ')}]`).join(' ')} (${e.durationMs.toFixed(1)} ms)`
          : `Allocate ${e.deviceIds.flat().join(', ')} failed: ${e.error ?? 'unknown error'}`,
      });
      pollSoon();
    },
    preferredAllocation: (resource, d) => {
      // Kept for "why here?": the plugin's reason behind the devices a pod got.
      topology.recordPreferred({ resource, chosen: [...d.chosen], reason: d.reason, at: d.at });
      metrics.preferredAllocationDuration.observe({ resource }, d.durationMs / 1000);
      events.ring({
        kind: 'preferred-allocation',
        resource,
        deviceIds: d.chosen,
        message: `preferred ${d.chosen.join(', ')} of ${d.available.length} available: ${d.reason}`,
        at: d.at,
      });
    },
    registered: (resource, e) => {
      metrics.registrations.inc({ resource });
      const back = waitingForKubelet.delete(resource);
      const message = `${resource} registered with the kubelet${back ? ' again' : ''} (attempt ${e.attempt})`;
      events.ring({ kind: 'registration', resource, message, at: e.at });
      // Pairs the Warning below, so the Node's events show when the kubelet took the plugin back.
      if (back) events.node('Normal', 'DevicePluginRegistered', message);
      logger.info({ resource }, 'plugin registered');
    },
    waitingForKubelet: (resource, e) => {
      waitingForKubelet.add(resource);
      const message = `${resource} is no longer held by the kubelet (${e.reason}); it registers again when the kubelet is back`;
      events.ring({ kind: 'registration', resource, message, at: e.at });
      events.node('Warning', 'DevicePluginWaitingForKubelet', message);
      logger.warn({ resource, cause: e.cause, reason: e.reason }, 'plugin waiting for the kubelet');
    },
    kubeletRestart: (resource, e) => {
      metrics.kubeletRestarts.inc({ resource });
      events.ring({
        kind: 'kubelet-restart',
        resource,
        message: `kubelet restart detected by ${resource} (${e.detectedBy})`,
        at: e.at,
      });
      events.node(
        'Normal',
        'KubeletRestartDetected',
        `${resource} detected a kubelet restart (${e.detectedBy}) and re-registers`,
      );
      pollSoon(50);
      kubeletRestarted?.();
    },
    registrationError: (resource, e) => {
      metrics.registrationErrors.inc({ resource });
      // The plugin logs each attempt itself; keep the gateway's copy for debugging.
      logger.debug({ resource, error: e.error, attempt: e.attempt }, 'plugin registration failed');
    },
  };
}
