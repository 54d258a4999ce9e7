// The stream hub as the gateway runs it: its client, drop and broadcast counters (and the log line
// for a client the gateway closes), fed with every model change on both views.
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config.js';
import type { NodeModel } from '../model/node-model.js';
import type { GatewayMetrics } from './metrics.js';
import { StreamHub } from './stream.js';

export interface StreamFeed {
  hub: StreamHub;
  /** Closes every client once; later calls do nothing (the HTTP server's close calls it first). */
  close: () => Promise<void>;
}

export function createStreamFeed(deps: {
  config: GatewayConfig;
  model: NodeModel;
  metrics: GatewayMetrics;
  logger: Logger;
  now: () => Date;
}): StreamFeed {
  const { config, model, metrics, logger, now } = deps;
  const hub = new StreamHub(
    {
      ...config.stream,
      now,
      initialSeq: now().getTime() * 1000,
      onClientChange: (view, delta) => metrics.streamClients.inc({ view }, delta),
      onDrop: (view, reason) => {
        metrics.streamDropped.inc({ view, reason });
        logger.warn({ view, reason }, 'stream client closed by the gateway');
      },
      onBroadcast: (view) => metrics.streamPatches.inc({ view }),
    },
    { full: model.snapshot(), summary: model.summary() },
  );
  let closed = false;
  return {
    hub,
    close: async () => {
      if (closed) return;
      closed = true;
      await hub.closeAll();
    },
  };
}

/** Publishes every model change on both views (after the history feed has seen it). */
export function publishModelChanges(model: NodeModel, hub: StreamHub, metrics: GatewayMetrics): void {
  model.on('change', (c) => {
    hub.channels.full.publish(c.snapshot, c.ops);
    hub.channels.summary.publish(c.summary, c.summaryOps);
    metrics.modelUpdateDuration.observe((performance.now() - c.startedAt) / 1000);
  });
}
