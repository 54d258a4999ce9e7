// Where a gateway event goes: the model's event ring (what the dashboard, the stream and
// `kubectl plugboard events` show) and, for the ones an operator looks for on the Node, a Kubernetes
// Event (only with gateway.kube.emitEvents and a connected API). The Event reasons are listed here.
import type { NodeEvent } from '@plugboard/api';
import type { NodeModel } from '../model/node-model.js';

/** A ring event; resource, devices and pod default to none, `at` to now. */
export type RingEvent = Omit<NodeEvent, 'seq' | 'at' | 'pod' | 'deviceIds' | 'resource'> & Partial<NodeEvent>;

export type NodeEventType = 'Normal' | 'Warning';

/** The `reason` of every Kubernetes Event the gateway posts on its Node. */
export type NodeEventReason =
  | 'PlugboardFaultInjected'
  | 'PlugboardFaultCleared'
  | 'DeviceHealthy'
  | 'DeviceUnhealthy'
  | 'DeviceTainted'
  | 'DeviceUntainted'
  | 'DevicePluginRegistered'
  | 'DevicePluginWaitingForKubelet'
  /** Another device plugin's resource (observed) appeared or its capacity/allocatable moved. */
  | 'ObservedResourceChanged'
  | 'KubeletRestartDetected';

/** Posts an Event on the Node (KubeSource.postNodeEvent). */
export interface NodeEventPoster {
  postNodeEvent(event: { type: NodeEventType; reason: NodeEventReason; message: string }): Promise<void>;
}

export interface GatewayEvents {
  ring(event: RingEvent): void;
  node(type: NodeEventType, reason: NodeEventReason, message: string): void;
}

/** `poster` answers null while there is no API connection or Events are off. */
export function createGatewayEvents(
  model: Pick<NodeModel, 'addEvent'>,
  poster: () => NodeEventPoster | null,
): GatewayEvents {
  return {
    ring: (e) => {
      model.addEvent({ resource: null, deviceIds: [], pod: null, ...e });
    },
    node: (type, reason, message) => {
      const p = poster();
      if (p) void p.postNodeEvent({ type, reason, message });
    },
  };
}

/**
 * A device's health transition, as the device plugins and the DRA drivers both report it: a
 * `health` ring event and a DeviceHealthy/DeviceUnhealthy Event on the Node.
 */
export function deviceHealthEvent(
  events: GatewayEvents,
  e: Pick<NodeEvent, 'resource' | 'deviceIds' | 'pod' | 'message' | 'at'> & { health: string },
): void {
  events.ring({
    kind: 'health',
    resource: e.resource,
    deviceIds: e.deviceIds,
    pod: e.pod,
    message: e.message,
    at: e.at,
  });
  const healthy = e.health === 'Healthy';
  events.node(healthy ? 'Normal' : 'Warning', healthy ? 'DeviceHealthy' : 'DeviceUnhealthy', e.message);
}
