// The NUMA map: each NUMA node as a group with its CPU IDs, memory and device tiles — device-plugin
// resources and DRA drivers side by side, each headed and each tile marked with the API serving
// it —, its CPUs (exclusive, reserved, shared) and pinned memory beside the devices; the misaligned
// pods are listed and their tiles marked; one pod's footprint (devices + CPUs + memory) is
// highlighted. A partitioned DRA device is one tile of its counter set holding its partitions' tiles.
import { memo, useMemo } from 'react';
import type { DraDeviceState, NodeSnapshot } from '@plugboard/api';
import { groupByNuma, servedByOf } from '../../lib/node-view';
import { ServedByLabel } from '../served-by';
import {
  cpuOwners,
  misalignedPods,
  misalignedTiles,
  numaResources,
  podCpuSet,
} from '../../lib/placement-view';
import { draMapEntries, draTaintRulePhase, draTileKey } from '../../lib/dra-view';
import { formatBytes, formatIdRanges } from '../../lib/format';
import { DeviceTile, type FaultControl } from './device-tile';
import { DraCounterSetTile } from './dra-counter-set';
import { DraDeviceTile } from './dra-device-tile';
import { NumaResourcesView } from './numa-resources';

export interface NumaMapProps {
  node: NodeSnapshot;
  faultControl: FaultControl;
  pendingTiles: ReadonlySet<string>;
  /** Tiles of the selected pod (its footprint), highlighted in the map. */
  highlightTiles?: ReadonlySet<string>;
  /** The pod whose CPUs and memory are highlighted with its tiles. */
  highlightPod?: string | null;
  /** Select a pod (from the misaligned list). */
  onSelectPod?: (podKey: string) => void;
  onOpen: (tileKey: string) => void;
  onToggleFault: (tileKey: string) => void;
  onTileRender?: (tileKey: string) => void;
}

export const NumaMap = memo(function NumaMap({
  node,
  faultControl,
  pendingTiles,
  highlightTiles,
  highlightPod = null,
  onSelectPod,
  onOpen,
  onToggleFault,
  onTileRender,
}: NumaMapProps) {
  const groups = useMemo(() => groupByNuma(node), [node]);
  const owners = useMemo(() => cpuOwners(node), [node]);
  const misaligned = useMemo(() => misalignedPods(node), [node]);
  const misalignedSet = useMemo(() => misalignedTiles(node), [node]);
  const podCpus = useMemo(
    () => (highlightPod ? podCpuSet(node, highlightPod) : new Set<number>()),
    [node, highlightPod],
  );
  const draTile = (d: DraDeviceState) => {
    const tileKey = draTileKey(d.key);
    return (
      <DraDeviceTile
        key={tileKey}
        tileKey={tileKey}
        device={d}
        taintRule={node.dra?.drivers[d.driver]?.inProcess ? null : { phase: draTaintRulePhase(node, d) }}
        faultControl={faultControl}
        pending={pendingTiles.has(tileKey)}
        highlighted={highlightTiles?.has(tileKey) ?? false}
        onOpen={onOpen}
        onToggleFault={onToggleFault}
        {...(onTileRender ? { onRender: onTileRender } : {})}
      />
    );
  };
  if (groups.length === 0) {
    return (
      <p className="notice info">
        This gateway advertises no devices yet (no plugin has reported a device list).
      </p>
    );
  }
  return (
    <>
      {misaligned.length > 0 && (
        <div className="notice warn" style={{ marginBottom: '0.5rem' }}>
          <strong>Misaligned pods</strong> (devices, exclusive CPUs or memory on more than one NUMA node):
          <ul aria-label="Misaligned pods">
            {misaligned.map((p) => (
              <li key={p.key} data-pod={p.key}>
                <span className="badge warn">! spread</span> <span className="mono">{p.key}</span> —{' '}
                {p.numaAlignment.reason}
                {onSelectPod && (
                  <>
                    {' '}
                    <button
                      type="button"
                      onClick={() => onSelectPod(p.key)}
                      aria-label={`Highlight ${p.key}`}
                    >
                      Highlight
                    </button>
                  </>
                )}
              </li>
            ))}
          </ul>
        </div>
      )}
      <div className="numa-map">
        {groups.map((g) => (
          <section key={g.key} className="numa-node" aria-labelledby={`numa-${g.key}`} data-numa={g.key}>
            <h3 id={`numa-${g.key}`}>
              {g.label}{' '}
              <span className="muted" style={{ fontWeight: 400 }}>
                {g.deviceCount} devices
                {g.draDeviceCount > 0 ? ` (${g.draDeviceCount} DRA)` : ''}
                {g.unhealthyCount > 0 ? `, ${g.unhealthyCount} unhealthy` : ''}
              </span>
            </h3>
            <p className="muted" style={{ margin: '0 0 0.4rem' }}>
              {g.cpuIds.length > 0 ? (
                <>
                  CPUs <span className="mono">{formatIdRanges(g.cpuIds)}</span>
                </>
              ) : (
                'CPU IDs not known (no sysfs topology)'
              )}
              {Object.entries(g.memory).map(([type, bytes]) => (
                <span key={type}>
                  {' '}
                  · {type} {formatBytes(bytes)}
                </span>
              ))}
            </p>
            {g.key !== 'none' && (
              <NumaResourcesView
                numaKey={g.key}
                model={numaResources(node, g.key, owners)}
                podKey={highlightPod}
                podCpus={podCpus}
              />
            )}
            {g.resources.map((r) => (
              <div key={r.resource}>
                <h4 style={{ margin: '0.4rem 0 0.3rem', fontSize: '0.92em' }}>
                  <span className="mono">{r.resource}</span>{' '}
                  <span className="muted" style={{ fontWeight: 400 }}>
                    · device plugin ·{' '}
                  </span>
                  <ServedByLabel servedBy={servedByOf(node.resources[r.resource] ?? {})} />
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
                      misaligned={misalignedSet.has(t.key)}
                      onOpen={onOpen}
                      onToggleFault={onToggleFault}
                      {...(onTileRender ? { onRender: onTileRender } : {})}
                    />
                  ))}
                </ul>
              </div>
            ))}
            {g.draDrivers.map((b) => (
              <div key={`dra:${b.driver}`}>
                <h4 style={{ margin: '0.4rem 0 0.3rem', fontSize: '0.92em' }}>
                  <span className="mono">{b.driver}</span>{' '}
                  <span className="muted" style={{ fontWeight: 400 }}>
                    · DRA driver
                  </span>
                </h4>
                <ul className="tiles" aria-label={`${b.driver} DRA devices on ${g.label}`}>
                  {draMapEntries(node, b.devices).map((e) =>
                    e.kind === 'device' ? (
                      draTile(e.device)
                    ) : (
                      <DraCounterSetTile key={e.key} set={e.set} devices={e.devices}>
                        {e.devices.map(draTile)}
                      </DraCounterSetTile>
                    ),
                  )}
                </ul>
              </div>
            ))}
          </section>
        ))}
      </div>
    </>
  );
});
