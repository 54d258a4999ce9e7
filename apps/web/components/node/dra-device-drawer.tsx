'use client';
// One DRA device's page-in-a-drawer: where it is published (driver, pool, name), what the driver
// says about its health and what the kubelet was told, its taints with where they come from, the
// simulated fault's phase, the claims allocated it and their pods, its attributes and capacity,
// its health and taints over the last hour from the gateway's history, and its events.
import { useMemo } from 'react';
import type { DraAttributeValue, DraDeviceState, NodeSnapshot } from '@plugboard/api';
import { draDeviceHistory, draFaultsForDevice, kubeletDisagrees } from '../../lib/dra-view';
import { formatTime } from '../../lib/format';
import { HealthBadge, SimulatedBadge } from '../health-badge';
import { EventList } from './event-timeline';
import { DeviceHealthHistory } from '../history/node-history';
import { Drawer } from './drawer';
import { FaultList } from './device-drawer';

function attributeText(v: DraAttributeValue): string {
  if ('string' in v) return `"${v.string}"`;
  if ('int' in v) return String(v.int);
  if ('bool' in v) return String(v.bool);
  return `version ${v.version}`;
}

function faultPhaseText(d: DraDeviceState): string {
  switch (d.fault) {
    case 'active':
      return 'active: the kubelet was told Unhealthy on the health stream';
    case 'pending':
      return 'pending: the driver holds it, the kubelet has not been told yet (no health stream open)';
    case null:
      return 'none';
  }
}

export function DraDeviceDrawer({
  node,
  deviceKey,
  onClose,
}: {
  node: NodeSnapshot;
  deviceKey: string;
  onClose: () => void;
}) {
  const d = node.dra?.devices[deviceKey];
  const driver = d ? node.dra?.drivers[d.driver] : undefined;
  const history = useMemo(() => (d ? draDeviceHistory(node, d) : []), [node, d]);
  const faults = useMemo(() => (d ? draFaultsForDevice(node, d) : []), [node, d]);
  const name = d?.name ?? deviceKey.slice(deviceKey.lastIndexOf('/') + 1);
  return (
    <Drawer
      title={
        <>
          DRA device <span className="mono">{name}</span>
        </>
      }
      onClose={onClose}
    >
      {!d ? (
        <p className="notice warn">This device is no longer in the driver&apos;s ResourceSlices.</p>
      ) : (
        <>
          <table>
            <caption className="sr-only">Where {d.name} is published</caption>
            <tbody>
              <tr>
                <th scope="row">API</th>
                <td>DRA (resource.k8s.io ResourceSlice), not a device plugin</td>
              </tr>
              <tr>
                <th scope="row">Driver</th>
                <td>
                  <span className="mono">{d.driver}</span>
                  {driver && !driver.inProcess && (
                    <span className="muted">
                      {' '}
                      — seen through its ResourceSlices; this gateway does not run it
                    </span>
                  )}
                </td>
              </tr>
              <tr>
                <th scope="row">Pool</th>
                <td className="mono">{d.pool}</td>
              </tr>
              <tr>
                <th scope="row">Device</th>
                <td>
                  <span className="mono">{d.name}</span>
                  {d.sourceId && d.sourceId !== d.name && (
                    <span className="muted">
                      {' '}
                      (source ID <span className="mono">{d.sourceId}</span>)
                    </span>
                  )}
                </td>
              </tr>
              <tr>
                <th scope="row">Published</th>
                <td>{d.published ? 'yes' : 'not yet: the driver has it, the API server does not'}</td>
              </tr>
              <tr>
                <th scope="row">NUMA nodes</th>
                <td>{d.numaNodes.length ? d.numaNodes.join(', ') : 'none reported'}</td>
              </tr>
            </tbody>
          </table>

          <h3>Health</h3>
          <table>
            <caption className="sr-only">Health of {d.name}</caption>
            <tbody>
              <tr>
                <th scope="row">The driver says</th>
                <td>
                  <HealthBadge health={d.health} /> since {formatTime(d.since)}
                  {d.reason ? ` — ${d.reason}` : ''}
                </td>
              </tr>
              <tr>
                <th scope="row">The kubelet was told</th>
                <td>
                  {d.kubeletHealth === null ? (
                    'nothing: no health stream (NodeWatchResources) is open'
                  ) : (
                    <HealthBadge health={d.kubeletHealth} />
                  )}
                  {kubeletDisagrees(d) && (
                    <p className="notice info">
                      The kubelet was last told {d.kubeletHealth}; the driver says {d.health}. Pods&apos;
                      allocatedResourcesStatus follows what the kubelet was told.
                    </p>
                  )}
                </td>
              </tr>
              <tr>
                <th scope="row">Simulated fault</th>
                <td>
                  {d.fault !== null && <SimulatedBadge />} {faultPhaseText(d)}
                </td>
              </tr>
            </tbody>
          </table>

          <h3>Taints</h3>
          {d.taints.length === 0 ? (
            <p className="muted">None.</p>
          ) : (
            <table>
              <caption className="sr-only">Taints on {d.name}</caption>
              <thead>
                <tr>
                  <th scope="col">Effect</th>
                  <th scope="col">Key = value</th>
                  <th scope="col">From</th>
                  <th scope="col">Added</th>
                </tr>
              </thead>
              <tbody>
                {d.taints.map((t) => (
                  <tr key={`${t.key}:${t.effect}:${t.source}`}>
                    <td>
                      <span
                        className={`badge ${t.effect === 'NoExecute' ? 'bad' : t.effect === 'NoSchedule' ? 'warn' : 'info'}`}
                      >
                        {t.effect}
                      </span>
                    </td>
                    <td className="mono">
                      {t.key}
                      {t.value !== null ? `=${t.value}` : ''}
                    </td>
                    <td>{t.source}</td>
                    <td>{formatTime(t.timeAdded)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}

          <h3>Allocated to</h3>
          {d.allocations.length === 0 ? (
            <p className="muted">Free: no claim is allocated this device.</p>
          ) : (
            <ul aria-label={`Claims allocated ${d.name}`}>
              {d.allocations.map((a) => (
                <li key={`${a.claim}/${a.request}`}>
                  claim <span className="mono">{a.claim}</span>, request{' '}
                  <span className="mono">{a.request}</span>
                  {a.adminAccess ? ' (admin access)' : ''} →{' '}
                  {a.pods.length === 0 ? (
                    <span className="muted">reserved for no pod</span>
                  ) : (
                    a.pods.map((p, i) => (
                      <span key={p}>
                        {i > 0 ? ', ' : ''}pod <span className="mono">{p}</span>
                        {node.pods[p] ? ` (${node.pods[p].reason ?? node.pods[p].phase})` : ''}
                      </span>
                    ))
                  )}
                </li>
              ))}
            </ul>
          )}

          <h3>Attributes and capacity</h3>
          <table>
            <caption className="sr-only">Attributes and capacity of {d.name}</caption>
            <tbody>
              {Object.entries(d.attributes).map(([k, v]) => (
                <tr key={`a:${k}`}>
                  <th scope="row" className="mono">
                    {k}
                  </th>
                  <td className="mono">{attributeText(v)}</td>
                </tr>
              ))}
              {Object.entries(d.capacity).map(([k, v]) => (
                <tr key={`c:${k}`}>
                  <th scope="row" className="mono">
                    capacity {k}
                  </th>
                  <td className="mono">{v}</td>
                </tr>
              ))}
            </tbody>
          </table>

          <h3>Active simulated faults</h3>
          <FaultList faults={faults} />
          <h3>Health over the last hour</h3>
          <DeviceHealthHistory nodeName={node.nodeName} deviceKeys={[d.key]} api="dra" />
          <h3>History</h3>
          <EventList events={history} label={`History of ${d.name}, newest first`} />
        </>
      )}
    </Drawer>
  );
}
