// The status of the gateway's two polled sources (PodResources and the Kubernetes API): their state
// before the first answer, and each change as the model's source state, a ring event and a log line.
import type { Logger } from 'pino';
import type { SourceState, SourcesState } from '@plugboard/api';
import type { GatewayConfig } from '../config.js';
import type { NodeModel } from '../model/node-model.js';
import type { GatewayEvents } from '../events/gateway-events.js';

export type SourceName = keyof SourcesState;

const LABELS: Record<SourceName, string> = { podResources: 'PodResources', kubernetes: 'Kubernetes API' };

/** Sources before they first answer: connecting, or disabled with the reason. */
export function initialSources(config: GatewayConfig): SourcesState {
  return {
    podResources: config.podResources.socket
      ? { status: 'connecting', lastSuccess: null, reason: null }
      : {
          status: 'disabled',
          lastSuccess: null,
          reason: 'PodResources polling disabled (no socket configured)',
        },
    kubernetes:
      config.kube.mode === 'disabled'
        ? {
            status: 'disabled',
            lastSuccess: null,
            reason: 'Kubernetes API disabled (--no-kube or no in-cluster config)',
          }
        : { status: 'connecting', lastSuccess: null, reason: null },
  };
}

/** Returns, per source, the `onState` callback its poller or informer reports to. */
export function sourceStatus(deps: {
  model: Pick<NodeModel, 'source' | 'setSource'>;
  events: GatewayEvents;
  logger: Logger;
}): (name: SourceName) => (state: SourceState) => void {
  const { model, events, logger } = deps;
  return (name) => (state) => {
    const prev = model.source(name);
    model.setSource(name, state);
    if (prev.status !== state.status) {
      events.ring({
        kind: 'source',
        message: `${LABELS[name]} is ${state.status}${state.reason ? `: ${state.reason}` : ''}`,
      });
      const level = state.status === 'stale' ? 'warn' : 'info';
      logger[level]({ source: name, status: state.status, reason: state.reason }, 'source status changed');
    }
  };
}
