// Wires the history store to the model and the stream: every model change is sampled (only what its
// patch touched), and at each boundary of the finest tier the closed buckets and the device
// transitions since the last boundary (device plugins and DRA alike) go out as one `history` message per view, serialised once,
// to the clients that asked for it (`?history=true`). Snapshots and the patch sequence are untouched.
import type { ModelChange, NodeModel } from '../model/node-model.js';
import { NodeHistoryStore, type HistoryOptions } from '../model/history.js';
import type { StreamHub } from './stream.js';

export interface HistoryFeed {
  store: NodeHistoryStore;
  stop(): void;
}

export function attachHistory(
  model: Pick<NodeModel, 'on' | 'off' | 'snapshot'>,
  hub: Pick<StreamHub, 'channels'>,
  options: HistoryOptions,
): HistoryFeed {
  const store = new NodeHistoryStore(options);
  store.observeAll(model.snapshot());
  const onChange = (c: ModelChange): void => store.observe(c.snapshot, c.ops);
  model.on('change', onChange);

  const step = options.tiers[0]!.resolutionMs;
  let timer: NodeJS.Timeout | undefined;
  const schedule = (): void => {
    // Just after the next bucket boundary, so the bucket that ended is closed with its last sample.
    const wall = Date.now();
    timer = setTimeout(tick, Math.ceil((wall + 1) / step) * step - wall + 5);
    timer.unref();
  };
  const tick = (): void => {
    const delta = store.tick();
    if (delta) {
      hub.channels.full.extra({ type: 'history', ...delta });
      // The summary view is counts only: the points, not every device's transitions.
      if (delta.points.length || delta.draPoints.length)
        hub.channels.summary.extra({
          type: 'history',
          points: delta.points,
          transitions: [],
          draPoints: delta.draPoints,
          draTransitions: [],
        });
    }
    schedule();
  };
  schedule();

  return {
    store,
    stop() {
      clearTimeout(timer);
      model.off('change', onChange);
    },
  };
}
