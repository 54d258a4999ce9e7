// Renders a node's NUMA map as the node page does, for the map's component tests: fault switches
// enabled (unless `faultControl` says otherwise), no fault pending, and callbacks that do nothing.
// `update` re-renders it with a new node (and highlighted tiles), every other prop the same object
// as before, as a live patch does, so the tiles' re-renders (`onTileRender`) can be counted.
import { render } from '@testing-library/react';
import type { NodeSnapshot } from '@plugboard/api';
import { NumaMap } from '../components/node/numa-map';
import type { FaultControl } from '../components/node/device-tile';

const enabled: FaultControl = { mode: 'enabled' };
const noop = () => {};
const noPending: ReadonlySet<string> = new Set();

export function renderNumaMap(
  node: NodeSnapshot,
  o: { faultControl?: FaultControl; onTileRender?: (key: string) => void } = {},
) {
  const { faultControl = enabled, onTileRender } = o;
  const ui = (n: NodeSnapshot, highlight?: ReadonlySet<string>) => (
    <NumaMap
      node={n}
      faultControl={faultControl}
      pendingTiles={noPending}
      onOpen={noop}
      onToggleFault={noop}
      {...(highlight ? { highlightTiles: highlight } : {})}
      {...(onTileRender ? { onTileRender } : {})}
    />
  );
  const r = render(ui(node));
  return { ...r, update: (n: NodeSnapshot, highlight?: ReadonlySet<string>) => r.rerender(ui(n, highlight)) };
}
