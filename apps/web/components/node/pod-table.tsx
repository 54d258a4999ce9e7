// Pod assignments: pod / namespace / container → device IDs, NUMA alignment, status, blast radius
// (flagged when a device it uses is unhealthy) and DRA claims beside device-plugin devices.
import { memo, useMemo, useState } from 'react';
import type { NodeSnapshot, PodState } from '@plugboard/api';
import { podStatus } from '../../lib/node-view';

function shortDevice(key: string): string {
  const i = key.lastIndexOf('/');
  return i < 0 ? key : key.slice(i + 1);
}

interface PodRowProps {
  pod: PodState;
  selected: boolean;
  onSelect: (podKey: string | null) => void;
  onHover?: ((podKey: string | null) => void) | undefined;
}

const PodRow = memo(function PodRow({ pod, selected, onSelect, onHover }: PodRowProps) {
  const status = podStatus(pod);
  const statusCls = pod.phase === 'Running' && !pod.reason ? 'ok' : pod.phase === 'Pending' ? 'info' : 'bad';
  const a = pod.numaAlignment;
  const rows = pod.containers.length > 0 ? pod.containers : [null];
  return (
    <>
      {rows.map((c, i) => (
        <tr
          key={c?.name ?? i}
          data-pod={pod.key}
          className={pod.affectedByUnhealthyDevice ? 'affected' : undefined}
          onMouseEnter={onHover && (() => onHover(pod.key))}
          onMouseLeave={onHover && (() => onHover(null))}
        >
          {i === 0 && (
            <>
              <th scope="row" rowSpan={rows.length}>
                <span className="mono">{pod.name}</span>
                <div className="muted">{pod.namespace}</div>
                <button
                  type="button"
                  aria-pressed={selected}
                  style={{ marginTop: '0.25rem', fontSize: '0.85em', fontWeight: 400 }}
                  onClick={() => onSelect(selected ? null : pod.key)}
                >
                  Show {pod.key} on the map
                </button>
              </th>
              <td rowSpan={rows.length}>
                <span className={`badge ${statusCls}`}>{status}</span>
                {pod.affectedByUnhealthyDevice && (
                  <div>
                    <span className="badge bad">✕ affected: uses an unhealthy device</span>
                  </div>
                )}
              </td>
              <td rowSpan={rows.length}>
                <span
                  className={`badge ${a.verdict === 'aligned' ? 'ok' : a.verdict === 'spread' ? 'warn' : 'info'}`}
                  title={a.reason}
                >
                  {a.verdict === 'aligned'
                    ? '✓ NUMA-aligned'
                    : a.verdict === 'spread'
                      ? `! spread over ${a.numaNodes.length} NUMA nodes`
                      : 'no NUMA preference'}
                </span>
                {a.numaNodes.length > 0 && <div className="muted">NUMA {a.numaNodes.join(', ')}</div>}
              </td>
            </>
          )}
          <td className="mono">{c?.name ?? '—'}</td>
          <td>
            {c && Object.keys(c.devices).length === 0 && c.dynamicResources.length === 0 && (
              <span className="muted">none</span>
            )}
            {c &&
              Object.entries(c.devices).map(([res, keys]) => (
                <div key={res}>
                  <span className="muted">{res}:</span>{' '}
                  <span className="mono">{keys.map(shortDevice).join(', ')}</span>
                </div>
              ))}
            {c?.dynamicResources.map((claim) => (
              <div key={`${claim.claimNamespace}/${claim.claimName}`}>
                <span className="badge info">DRA claim</span> <span className="mono">{claim.claimName}</span>:{' '}
                <span className="mono">
                  {claim.devices.map((d) => `${d.driver}/${d.pool}/${d.device}`).join(', ')}
                </span>
              </div>
            ))}
          </td>
          <td>
            {c ? (
              <>
                {c.state}
                {c.stateReason ? ` (${c.stateReason})` : ''}
                {c.restartCount > 0 && <div className="muted">{c.restartCount} restarts</div>}
              </>
            ) : (
              '—'
            )}
          </td>
        </tr>
      ))}
    </>
  );
});

export interface PodTableProps {
  node: NodeSnapshot;
  selectedPod: string | null;
  onSelectPod: (podKey: string | null) => void;
  /** Hovering a row previews the pod's footprint on the NUMA map. */
  onHoverPod?: (podKey: string | null) => void;
}

export const PodTable = memo(function PodTable({
  node,
  selectedPod,
  onSelectPod,
  onHoverPod,
}: PodTableProps) {
  const [onlyAffected, setOnlyAffected] = useState(false);
  const [text, setText] = useState('');
  const pods = useMemo(() => {
    const t = text.trim().toLowerCase();
    return Object.values(node.pods)
      .filter(
        (p) => (!onlyAffected || p.affectedByUnhealthyDevice) && (!t || p.key.toLowerCase().includes(t)),
      )
      .sort(
        (a, b) =>
          Number(b.affectedByUnhealthyDevice) - Number(a.affectedByUnhealthyDevice) ||
          a.key.localeCompare(b.key),
      );
  }, [node.pods, onlyAffected, text]);
  const affected = useMemo(
    () => Object.values(node.pods).filter((p) => p.affectedByUnhealthyDevice).length,
    [node.pods],
  );
  const total = Object.keys(node.pods).length;
  if (total === 0) {
    return (
      <p className="notice info">
        No pods hold devices on this node
        {node.sources.podResources.status !== 'ok'
          ? ` (PodResources is ${node.sources.podResources.status}, so assignments may be missing)`
          : ''}
        .
      </p>
    );
  }
  return (
    <>
      <div className="row" style={{ marginBottom: '0.5rem' }}>
        <label>
          Pod
          <input
            type="search"
            value={text}
            onChange={(e) => setText(e.target.value)}
            placeholder="namespace/name contains…"
          />
        </label>
        <label>
          <input type="checkbox" checked={onlyAffected} onChange={(e) => setOnlyAffected(e.target.checked)} />
          Only affected pods ({affected})
        </label>
        <span className="muted" role="status">
          {pods.length} of {total} pods
        </span>
      </div>
      <div className="table-wrap">
        <table>
          <caption className="sr-only">Pods holding devices on {node.nodeName}</caption>
          <thead>
            <tr>
              <th scope="col">Pod</th>
              <th scope="col">Status</th>
              <th scope="col">NUMA</th>
              <th scope="col">Container</th>
              <th scope="col">Devices</th>
              <th scope="col">Container state</th>
            </tr>
          </thead>
          <tbody>
            {pods.map((p) => (
              <PodRow
                key={p.key}
                pod={p}
                selected={selectedPod === p.key}
                onSelect={onSelectPod}
                onHover={onHoverPod}
              />
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
});
