'use client';
// One device's page-in-a-drawer: current state, active simulated faults, and its history of health
// transitions, faults and allocations from the node's event ring.
import { useMemo } from 'react';
import type { FaultState, NodeSnapshot } from '@plugboard/api';
import { blastRadius, deviceHistory, faultsForDevice, servedByOf, tileDevices } from '../../lib/node-view';
import { ServedByLabel } from '../served-by';
import { formatTime } from '../../lib/format';
import { HealthBadge, SimulatedBadge } from '../health-badge';
import { EventList } from './event-timeline';
import { DeviceHealthHistory } from '../history/node-history';
import { Drawer } from './drawer';

/** The simulated faults holding a device, each with where it stands (and its taint, for DRA). */
export function FaultList({ faults }: { faults: readonly FaultState[] }) {
  if (faults.length === 0) return <p className="muted">None.</p>;
  return (
    <ul>
      {faults.map((f) => (
        <li key={f.id}>
          <SimulatedBadge /> {f.reason} — since {formatTime(f.createdAt)}
          {f.expiresAt ? `, expires ${formatTime(f.expiresAt)}` : ', until cleared'}
          {f.taint ? `, taint ${f.taint}` : ''}
          {f.scenarioId ? ` (scenario ${f.scenarioId})` : ''}; {f.state}
          {f.stateReason ? ` (${f.stateReason})` : ''}
        </li>
      ))}
    </ul>
  );
}

export function DeviceDrawer({
  node,
  tileKey,
  onClose,
}: {
  node: NodeSnapshot;
  tileKey: string;
  onClose: () => void;
}) {
  const devices = useMemo(() => tileDevices(node, tileKey), [node, tileKey]);
  const first = devices[0];
  const history = useMemo(() => (first ? deviceHistory(node, first.key) : []), [node, first]);
  const faults = useMemo(() => (first ? faultsForDevice(node, first) : []), [node, first]);
  const pods = useMemo(
    () =>
      blastRadius(
        node,
        devices.map((d) => d.key),
      ),
    [node, devices],
  );
  const id = first ? (first.replicaOf ?? first.id) : tileKey;
  return (
    <Drawer
      title={
        <>
          Device <span className="mono">{id}</span>
        </>
      }
      onClose={onClose}
    >
      {!first ? (
        <p className="notice warn">This device is no longer advertised by the plugin.</p>
      ) : (
        <>
          <p>
            <span className="mono muted">{first.resource}</span> · served by{' '}
            <ServedByLabel servedBy={servedByOf(first)} />
          </p>
          {node.resources[first.resource]?.observed?.note && (
            <p className="notice info">{node.resources[first.resource]!.observed!.note}</p>
          )}
          <table>
            <tbody>
              {devices.map((d) => (
                <tr key={d.key}>
                  <th scope="row" className="mono">
                    {d.id}
                  </th>
                  <td>
                    <HealthBadge health={d.health} /> {d.faulted && <SimulatedBadge />}
                  </td>
                  <td>
                    since {formatTime(d.since)}
                    {d.reason ? ` — ${d.reason}` : ''}
                  </td>
                  <td>
                    {d.allocation
                      ? `${d.allocation.namespace}/${d.allocation.pod} (${d.allocation.container})`
                      : 'free'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <p>NUMA nodes: {first.numaNodes.length ? first.numaNodes.join(', ') : 'none reported'}</p>
          <h3>Active simulated faults</h3>
          <FaultList faults={faults} />
          <h3>Pods holding it</h3>
          {pods.length === 0 ? (
            <p className="muted">None.</p>
          ) : (
            <ul>
              {pods.map((p) => (
                <li key={p.key} className="mono">
                  {p.key}
                </li>
              ))}
            </ul>
          )}
          <h3>Health over the last hour</h3>
          <DeviceHealthHistory nodeName={node.nodeName} deviceKeys={devices.map((d) => d.key)} />
          <h3>History</h3>
          <EventList events={history} label={`History of ${id}, newest first`} />
        </>
      )}
    </Drawer>
  );
}
