// The fault store's side effects: a ring event and a Kubernetes Event per injected or cleared fault,
// the injected-faults counter, the model's fault list and persistence state, and their log lines.
import type { Logger } from 'pino';
import type { FaultRecord } from '@plugboard/api';
import type { FaultClearCause, FaultStoreEvents } from '../faults/fault-store.js';
import type { NodeModel } from '../model/node-model.js';
import type { GatewayMetrics } from '../http/metrics.js';
import type { GatewayEvents } from './gateway-events.js';

export function faultMessage(f: FaultRecord, injected: boolean, cause?: FaultClearCause): string {
  const device = `${f.resource}/${f.deviceId}`;
  return !injected
    ? `simulated fault on ${device} cleared (${cause})`
    : f.failure
      ? `simulated fault on ${device} ${f.failure}`
      : `simulated fault on ${device}: ${f.reason}${f.expiresAt ? ` (until ${f.expiresAt})` : ''}`;
}

export function faultStoreEvents(deps: {
  events: GatewayEvents;
  metrics: GatewayMetrics;
  model: Pick<NodeModel, 'setFaults' | 'setGateway'>;
  logger: Logger;
}): FaultStoreEvents {
  const { events, metrics, model, logger } = deps;
  const faultEvent = (f: FaultRecord, injected: boolean, cause?: FaultClearCause): void => {
    const message = faultMessage(f, injected, cause);
    events.ring({
      kind: injected ? 'fault-injected' : 'fault-cleared',
      resource: f.resource,
      deviceIds: [f.deviceId],
      message,
    });
    events.node(
      injected ? 'Warning' : 'Normal',
      injected ? 'PlugboardFaultInjected' : 'PlugboardFaultCleared',
      message,
    );
    if (injected && !f.failure) metrics.faultsInjected.inc({ resource: f.resource });
  };
  return {
    onInjected: (f) => faultEvent(f, true),
    onCleared: (f, cause) => faultEvent(f, false, cause),
    onChange: (list) => model.setFaults(list),
    onActuatorError: (f, message) =>
      logger.warn(
        { fault: f.id, resource: f.resource, device: f.deviceId, error: message },
        'fault release failed',
      ),
    onPersistenceChange: (p) => {
      model.setGateway({ persistence: p });
      if (!p.enabled) logger.warn({ reason: p.reason }, 'fault persistence is off');
    },
  };
}
