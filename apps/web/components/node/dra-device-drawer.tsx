'use client';
// One DRA device's page-in-a-drawer: where it is published (driver, pool, name), what the driver
// says about its health and what the kubelet was told, its taints with where they come from, the
// simulated fault's phase, a partition's counter set (what it takes, what is used and left, its
// sibling partitions), the claims allocated it and their pods — a shared device's shares with their
// share IDs and consumed capacity, and its capacity used and left —, its attributes and capacity,
// its health and taints over the last hour from the gateway's history, and its events.
import { useMemo } from 'react';
import type { DraAttributeValue, DraCounterSetState, DraDeviceState, NodeSnapshot } from '@plugboard/api';
import {
  describeAmounts,
  describeRequestPolicy,
  draCounterSetOf,
  draDeviceHistory,
  draFaultsForDevice,
  kubeletDisagrees,
} from '../../lib/dra-view';
import { formatTime } from '../../lib/format';
import { HealthBadge, SimulatedBadge } from '../health-badge';
import { EventList } from './event-timeline';
import { DeviceHealthHistory } from '../history/node-history';
import { Drawer } from './drawer';
import { FaultList } from './device-drawer';
import { DeviceStatusView } from './device-status';

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

function podsText(node: NodeSnapshot, pods: readonly string[]) {
  if (pods.length === 0) return <span className="muted">reserved for no pod</span>;
  return pods.map((p, i) => (
    <span key={p}>
      {i > 0 ? ', ' : ''}
      <span className="mono">{p}</span>
      {node.pods[p] ? ` (${node.pods[p].reason ?? node.pods[p].phase})` : ''}
    </span>
  ));
}

/** A partition: its counter set (the physical device) with its counters, and every partition of it. */
function PartitionSection({
  node,
  device: d,
  of,
}: {
  node: NodeSnapshot;
  device: DraDeviceState;
  of: { set: DraCounterSetState; consumes: Record<string, string> };
}) {
  const { set, consumes } = of;
  return (
    <>
      <h3>
        Partition of <span className="mono">{set.name}</span>
      </h3>
      <p className="muted">
        {d.name} takes {describeAmounts(consumes) || 'nothing'} of counter set{' '}
        <span className="mono">{set.name}</span> (ResourceSlice <span className="mono">{set.slice}</span>).
        The API reports no usage or health of a counter set: used is summed here from the claims&apos;
        allocations of its partitions, and each partition carries the driver&apos;s health.
      </p>
      <table>
        <caption className="sr-only">Counters of {set.name}</caption>
        <thead>
          <tr>
            <th scope="col">Counter</th>
            <th scope="col">Capacity</th>
            <th scope="col">Used</th>
            <th scope="col">Left</th>
            <th scope="col">{d.name} takes</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(set.counters).map(([name, u]) => (
            <tr key={name}>
              <th scope="row" className="mono">
                {name}
              </th>
              <td className="mono">{u.capacity}</td>
              <td className="mono">{u.used}</td>
              <td className="mono">{u.left}</td>
              <td className="mono">{consumes[name] ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <ul aria-label={`Partitions of ${set.name}`}>
        {set.deviceKeys.map((k) => {
          const p = node.dra?.devices[k];
          if (!p) return null;
          const takes = p.consumesCounters?.find((c) => c.counterSet === set.name)?.counters ?? {};
          return (
            <li key={k}>
              <span className="mono">{p.name}</span>
              {p.key === d.key ? ' (this device)' : ''}: takes {describeAmounts(takes) || 'nothing'} —{' '}
              {p.allocations.length === 0
                ? 'free'
                : `allocated to ${p.allocations.map((a) => `claim ${a.claim}`).join(', ')}`}
            </li>
          );
        })}
      </ul>
    </>
  );
}

/** A shared device: capacity used and left by name, and each claim's share. */
function SharesSection({ node, device: d }: { node: NodeSnapshot; device: DraDeviceState }) {
  const capacity = Object.entries(d.sharedCapacity ?? {});
  return (
    <>
      <p className="muted">
        Shared device (allowMultipleAllocations): several claims hold it at once, each with a share ID and the
        capacity it consumes, as the scheduler wrote them in the claim&apos;s allocation result. PodResources
        reports the share ID, not the capacity.
      </p>
      {capacity.length > 0 && (
        <table>
          <caption className="sr-only">Capacity of {d.name} used by its shares</caption>
          <thead>
            <tr>
              <th scope="col">Capacity</th>
              <th scope="col">Total</th>
              <th scope="col">Used</th>
              <th scope="col">Left</th>
              <th scope="col">Request policy</th>
            </tr>
          </thead>
          <tbody>
            {capacity.map(([name, u]) => {
              const policy = d.capacityRequestPolicy?.[name];
              return (
                <tr key={name}>
                  <th scope="row" className="mono">
                    {name}
                  </th>
                  <td className="mono">{u.capacity}</td>
                  <td className="mono">{u.used}</td>
                  <td className="mono">{u.left}</td>
                  <td>{policy ? describeRequestPolicy(policy) : 'none: a claim takes the whole capacity'}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {d.allocations.length === 0 ? (
        <p className="muted">Free: no claim holds a share of this device.</p>
      ) : (
        <table>
          <caption className="sr-only">Shares of {d.name}</caption>
          <thead>
            <tr>
              <th scope="col">Claim</th>
              <th scope="col">Share ID</th>
              <th scope="col">Consumed</th>
              <th scope="col">Pods</th>
              <th scope="col">Device status</th>
            </tr>
          </thead>
          <tbody>
            {d.allocations.map((a) => (
              <tr key={`${a.claim}/${a.request}/${a.shareID ?? ''}`}>
                <th scope="row">
                  <span className="mono">{a.claim}</span>
                  <span className="muted">, request {a.request}</span>
                  {a.adminAccess ? ' (admin access)' : ''}
                </th>
                <td className="mono">{a.shareID ?? <span className="muted">not reported</span>}</td>
                <td className="mono">
                  {a.consumedCapacity && Object.keys(a.consumedCapacity).length > 0 ? (
                    describeAmounts(a.consumedCapacity)
                  ) : (
                    <span className="muted">not reported</span>
                  )}
                </td>
                <td>{podsText(node, a.pods)}</td>
                <td>
                  <DeviceStatusView status={a.status} device={d.name} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
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
  const counterSet = useMemo(() => (d ? draCounterSetOf(node, d) : null), [node, d]);
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

          {counterSet && <PartitionSection node={node} device={d} of={counterSet} />}

          <h3>Allocated to</h3>
          {d.allowMultipleAllocations ? (
            <SharesSection node={node} device={d} />
          ) : d.allocations.length === 0 ? (
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
                  <div>
                    <DeviceStatusView status={a.status} device={d.name} />
                  </div>
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
