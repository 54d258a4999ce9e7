// The NUMA map: each NUMA node as a group with its CPU IDs, memory and device tiles.
import { memo, useMemo } from 'react';
import type { NodeSnapshot } from '@plugboard/node-gateway/model';
import { groupByNuma } from '../../lib/node-view';
import { formatBytes, formatIdRanges } from '../../lib/format';
import { DeviceTile, type FaultControl } from './device-tile';

export interface NumaMapProps {
  node: NodeSnapshot;
  faultControl: FaultControl;
  pendingTiles: ReadonlySet<string>;
  /** Tiles of the selected pod (its footprint), highlighted in the map. */
  highlightTiles?: ReadonlySet<string>;
  onOpen: (tileKey: string) => void;
  onToggleFault: (tileKey: string) => void;
  onTileRender?: (tileKey: string) => void;
}

export const NumaMap = memo(function NumaMap({
  node,
  faultControl,
  pendingTiles,
  highlightTiles,
  onOpen,
  onToggleFault,
  onTileRender,
}: NumaMapProps) {
  const groups = useMemo(() => groupByNuma(node), [node]);
  if (groups.length === 0) {
    return (
      <p className="notice info">
        This gateway advertises no devices yet (no plugin has reported a device list).
      </p>
    );
  }
  return (
    <div className="numa-map">
      {groups.map((g) => (
        <section key={g.key} className="numa-node" aria-labelledby={`numa-${g.key}`} data-numa={g.key}>
          <h3 id={`numa-${g.key}`}>
            {g.label}{' '}
            <span className="muted" style={{ fontWeight: 400 }}>
              {g.deviceCount} devices{g.unhealthyCount > 0 ? `, ${g.unhealthyCount} unhealthy` : ''}
            </span>
          </h3>
          <p className="muted" style={{ margin: '0 0 0.4rem' }}>
            {g.cpuIds.length > 0 ? (
              <>
                CPUs <span className="mono">{formatIdRanges(g.cpuIds)}</span>
              </>
            ) : (
              'CPU IDs not reported by the kubelet'
            )}
            {Object.entries(g.memory).map(([type, bytes]) => (
              <span key={type}>
                {' '}
                · {type} {formatBytes(bytes)}
              </span>
            ))}
          </p>
          {g.resources.map((r) => (
            <div key={r.resource}>
              <h4 style={{ margin: '0.4rem 0 0.3rem', fontSize: '0.92em' }} className="mono">
                {r.resource}
              </h4>
              <ul className="tiles" aria-label={`${r.resource} devices on ${g.label}`}>
                {r.tiles.map((t) => (
                  <DeviceTile
                    key={t.key}
                    tileKey={t.key}
                    id={t.id}
                    devices={t.deviceKeys.map((k) => node.devices[k]!)}
                    faultControl={faultControl}
                    pending={pendingTiles.has(t.key)}
                    highlighted={highlightTiles?.has(t.key) ?? false}
                    onOpen={onOpen}
                    onToggleFault={onToggleFault}
                    {...(onTileRender ? { onRender: onTileRender } : {})}
                  />
                ))}
              </ul>
            </div>
          ))}
        </section>
      ))}
    </div>
  );
});
