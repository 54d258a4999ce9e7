'use client';
// The migration view: per extended resource name, which nodes serve it through a device plugin,
// which through DRA (a DeviceClass's `extendedResourceName`, KEP-5004) and which not at all; the
// pods asking for it each way with the special claims the scheduler generated; and what is left to
// move (pods still holding it through a device plugin). Live from the same cluster document as the
// overview (lib/migration-view.ts joins it); what the gateways did not observe is said, per node.
import { memo, useMemo, type ReactNode } from 'react';
import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
import type { ExtendedResourceServedBy, MigrationPod, MigrationResource } from '@plugboard/api';
import type { ClusterDocument } from '../../lib/cluster-types';
import { migrationView, type MigrationView } from '../../lib/migration-view';
import { clusterQuery, queryKeys } from '../../lib/queries';
import { useLiveQuery } from '../../lib/use-live-query';
import { LiveIndicator } from '../live-indicator';
import { LocalTime } from '../local-time';
import { ProblemNotice } from '../problem-notice';

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

const SERVED_BY: Record<ExtendedResourceServedBy, { cls: string; text: string }> = {
  'device-plugin': { cls: 'warn', text: '■ device plugin' },
  dra: { cls: 'ok', text: '◆ DRA' },
  none: { cls: 'info', text: '○ neither' },
};

const VIA: Record<MigrationPod['via'], { cls: string; text: string }> = {
  'device-plugin': { cls: 'warn', text: '■ device plugin: left to move' },
  dra: { cls: 'ok', text: '◆ DRA' },
  unknown: { cls: 'info', text: '○ neither yet (being admitted or Pending)' },
};

function NodeLink({ node }: { node: string }) {
  return <Link href={`/nodes/${encodeURIComponent(node)}`}>{node}</Link>;
}

/** "gpu-node-a, gpu-node-b" as links, or "no node". */
function NodeList({ nodes }: { nodes: readonly string[] }) {
  if (nodes.length === 0) return <span className="muted">no node</span>;
  return (
    <>
      {nodes.map((n, i) => (
        <span key={n}>
          {i > 0 && ', '}
          <NodeLink node={n} />
        </span>
      ))}
    </>
  );
}

/** The cluster's migration, live. */
export function MigrationOverview() {
  const query = useQuery(clusterQuery());
  const status = useLiveQuery<ClusterDocument>(queryKeys.cluster, '/api/cluster/stream');
  const doc = query.data?.data;
  const view = useMemo(() => (doc ? migrationView(doc) : null), [doc]);
  return (
    <>
      <div className="row">
        <h1>Migration to DRA</h1>
        <span className="spacer" />
        <LiveIndicator status={status} dataAt={query.data?.receivedAt ?? null} />
      </div>
      {query.isError && !doc && <ProblemNotice title="Cannot load the cluster" error={query.error} />}
      {query.isPending && <p role="status">Loading nodes…</p>}
      {view && <MigrationPanel view={view} />}
    </>
  );
}

export const MigrationPanel = memo(function MigrationPanel({ view }: { view: MigrationView }) {
  const moving = view.resources.filter((r) => r.mapped && !r.implicit);
  const pluginOnly = view.resources.filter((r) => !r.mapped);
  const implicit = view.resources.filter((r) => r.implicit);
  return (
    <>
      <p className="muted">
        A DeviceClass with <code>extendedResourceName</code> lets pods keep asking for an extended resource by
        name; wherever no device plugin serves it, the scheduler gives such a pod a claim of its own. Per
        name: the nodes serving it each way, the pods and their generated claims, and the pods still on a
        device plugin.
      </p>
      <Unobserved view={view} />
      {moving.length === 0 ? (
        <p className="notice info" role="status">
          No extended resource is moving: no observed node serves one through DRA and no DeviceClass maps one
          a device plugin serves.
        </p>
      ) : (
        moving.map((r) => <ResourceMigration key={r.name} r={r} />)
      )}
      {pluginOnly.length > 0 && (
        <section className="card" aria-labelledby="migration-plugin-only" style={{ margin: '0.5rem 0' }}>
          <h2 id="migration-plugin-only" style={{ marginTop: 0 }}>
            Only device plugins ({pluginOnly.length})
          </h2>
          <p className="muted">No DeviceClass maps these names on any node whose DeviceClasses were read.</p>
          <ResourceTable
            resources={pluginOnly}
            caption="Extended resources only device plugins serve, with the nodes and pods"
          />
        </section>
      )}
      {implicit.length > 0 && (
        <details className="card" style={{ margin: '0.5rem 0' }}>
          <summary>DeviceClasses&apos; implicit names ({implicit.length})</summary>
          <p className="muted">
            Every DeviceClass also answers <code>deviceclass.resource.kubernetes.io/&lt;class&gt;</code>,
            which no device plugin can serve.
          </p>
          <ResourceTable resources={implicit} caption="Implicit extended resource names of DeviceClasses" />
        </details>
      )}
    </>
  );
});

/** Nodes the view has no data of, and nodes whose data is their last summary. */
function Unobserved({ view }: { view: MigrationView }) {
  if (view.notObserved.length === 0 && view.stale.length === 0) return null;
  return (
    <div className="notice warn" role="status" aria-label="Not observed">
      {view.notObserved.length > 0 && (
        <>
          <p>
            <strong>Not observed: {plural(view.notObserved.length, 'node')}.</strong> Their pods and what they
            serve are not in the numbers below.
          </p>
          <ul aria-label="Nodes not observed">
            {view.notObserved.map((n) => (
              <li key={n.node}>
                <NodeLink node={n.node} />:{' '}
                {n.why === 'predates-view'
                  ? 'its gateway predates the migration view (no extendedResources in its summary)'
                  : `no summary from its gateway (${n.status}${n.error ? `: ${n.error}` : ''})`}
              </li>
            ))}
          </ul>
        </>
      )}
      {view.stale.length > 0 && (
        <ul aria-label="Nodes with stale data">
          {view.stale.map((n) => (
            <li key={n.node}>
              <NodeLink node={n.node} />: its last summary, stale since <LocalTime iso={n.since} />
              {n.error ? ` (${n.error})` : ''}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function LeftToMove({ r }: { r: MigrationResource }) {
  if (r.leftToMovePods.length === 0)
    return <span className="badge ok">✓ Nothing left to move: no pod holds it through a device plugin</span>;
  return (
    <span className="badge warn">
      ! Left to move: {plural(r.leftToMovePods.length, 'pod')} on {plural(r.leftToMoveNodes.length, 'node')}
    </span>
  );
}

const ResourceMigration = memo(function ResourceMigration({ r }: { r: MigrationResource }) {
  const id = `migration-${r.name.replace(/[^a-zA-Z0-9-]/g, '-')}`;
  return (
    <section className="card migration" aria-labelledby={id} style={{ margin: '0.5rem 0' }}>
      <div className="row">
        <h2 id={id} className="mono" style={{ margin: 0, fontSize: '1.15rem' }}>
          {r.name}
        </h2>
        <LeftToMove r={r} />
      </div>
      <dl className="migration-served">
        <dt>Device plugin on</dt>
        <dd>
          <NodeList nodes={r.servedBy['device-plugin']} />
        </dd>
        <dt>DRA on</dt>
        <dd>
          <NodeList nodes={r.servedBy.dra} />
        </dd>
        <dt>Neither on</dt>
        <dd>
          <NodeList nodes={r.servedBy.none} />
        </dd>
      </dl>
      {r.deviceClassesUnknown.length > 0 && (
        <p className="notice warn">
          DeviceClasses unknown on <NodeList nodes={r.deviceClassesUnknown} />: the gateway there cannot read
          them, so whether DRA could serve {r.name} there is not observed.
        </p>
      )}
      <div className="table-wrap">
        <table>
          <caption>Nodes serving {r.name}</caption>
          <thead>
            <tr>
              <th scope="col">Node</th>
              <th scope="col">Served by</th>
              <th scope="col">Node status</th>
              <th scope="col">DeviceClass</th>
              <th scope="col">DRA drivers</th>
              <th scope="col">Pods</th>
            </tr>
          </thead>
          <tbody>
            {r.nodes.map((n) => (
              <tr key={n.node}>
                <th scope="row">
                  <NodeLink node={n.node} />
                </th>
                <td>
                  <span className={`badge ${SERVED_BY[n.servedBy].cls}`}>{SERVED_BY[n.servedBy].text}</span>
                </td>
                <td>
                  {n.nodeStatus
                    ? `capacity ${n.nodeStatus.capacity}, allocatable ${n.nodeStatus.allocatable}`
                    : 'not listed'}
                </td>
                <td className="mono">
                  {n.deviceClasses === null ? (
                    <span className="badge warn">? unknown: not readable</span>
                  ) : (
                    (n.deviceClass ?? <span className="muted">none</span>)
                  )}
                </td>
                <td className="mono">
                  {n.drivers.length ? n.drivers.join(', ') : <span className="muted">none</span>}
                </td>
                <td>{new Set(r.pods.filter((p) => p.node === n.node).map((p) => p.pod)).size}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <PodTable r={r} />
    </section>
  );
});

function PodTable({ r }: { r: MigrationResource }) {
  if (r.pods.length === 0) return <p className="muted">No pod asks for {r.name}.</p>;
  return (
    <div className="table-wrap">
      <table>
        <caption>Pods asking for {r.name}</caption>
        <thead>
          <tr>
            <th scope="col">Pod</th>
            <th scope="col">Container</th>
            <th scope="col">Node</th>
            <th scope="col">Asks</th>
            <th scope="col">Holds it through</th>
            <th scope="col">Generated claim</th>
            <th scope="col">Devices</th>
          </tr>
        </thead>
        <tbody>
          {r.pods.map((p) => (
            <tr key={`${p.node}/${p.pod}/${p.container}`}>
              <th scope="row" className="mono">
                {p.pod}
              </th>
              <td className="mono">{p.container}</td>
              <td>
                <NodeLink node={p.node} />
              </td>
              <td>{p.count}</td>
              <td>
                <span className={`badge ${VIA[p.via].cls}`}>{VIA[p.via].text}</span>
              </td>
              <td className="mono">
                {p.claim ? (
                  <>
                    {p.claim}
                    {p.request && <span className="muted"> ({p.request})</span>}
                  </>
                ) : (
                  <span className="muted">none</span>
                )}
              </td>
              <td className="mono">
                {p.devices.length ? p.devices.join(', ') : <span className="muted">none</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** One row per name: the nodes each way and the pods (names not moving, and implicit names). */
function ResourceTable({ resources, caption }: { resources: MigrationResource[]; caption: string }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Extended resource</th>
            <th scope="col">Device plugin on</th>
            <th scope="col">DRA on</th>
            <th scope="col">Pods</th>
            <th scope="col">DeviceClasses unknown on</th>
          </tr>
        </thead>
        <tbody>
          {resources.map((r) => (
            <tr key={r.name}>
              <th scope="row" className="mono">
                {r.name}
              </th>
              <td>
                <NodeList nodes={r.servedBy['device-plugin']} />
              </td>
              <td>
                <NodeList nodes={r.servedBy.dra} />
              </td>
              <td>{podWords(r)}</td>
              <td>
                <NodeList nodes={r.deviceClassesUnknown} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function podWords(r: MigrationResource): ReactNode {
  const pods = new Set(r.pods.map((p) => p.pod)).size;
  if (pods === 0) return <span className="muted">none</span>;
  return `${plural(pods, 'pod')}, ${r.leftToMovePods.length} through a device plugin`;
}
