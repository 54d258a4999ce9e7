// The cluster's DRA at a glance, from the nodes' summaries (`NodeSummary.dra`): per driver the
// devices published, usable, allocated, free, unhealthy and tainted summed over the nodes; per
// DeviceClass the devices allocated and the claims pending; and every pending claim with its node.
// Stale nodes count with their last summary, as the per-resource totals do.
import { memo } from 'react';
import Link from 'next/link';
import type { DraDeviceCounts, DraSummary } from '@plugboard/api';
import type { ClusterDocument } from '../../lib/cluster-types';
import { DraCountsSummary } from '../dra-counts';

export interface ClusterDraTotals {
  drivers: Record<string, DraDeviceCounts & { nodes: number }>;
  deviceClasses: Record<string, { allocated: number; pendingClaims: number }>;
  /** Sorted by node, then claim. */
  pendingClaims: { node: string; claim: string }[];
}

/**
 * null when no node reports a DRA driver, DeviceClass or pending claim (older gateways, or none
 * with DRA): the overview then shows nothing DRA.
 */
export function clusterDraTotals(doc: ClusterDocument): ClusterDraTotals | null {
  const summaries = Object.values(doc.nodes).flatMap((n) => {
    const dra = n.summary?.dra;
    const any =
      dra &&
      (Object.keys(dra.drivers).length > 0 ||
        Object.keys(dra.deviceClasses).length > 0 ||
        dra.pendingClaims.length > 0);
    return any ? [[n.name, dra] as [string, DraSummary]] : [];
  });
  if (summaries.length === 0) return null;
  const totals: ClusterDraTotals = { drivers: {}, deviceClasses: {}, pendingClaims: [] };
  for (const [node, dra] of summaries) {
    for (const [name, c] of Object.entries(dra.drivers)) {
      const t = (totals.drivers[name] ??= {
        published: 0,
        usable: 0,
        allocated: 0,
        free: 0,
        unhealthy: 0,
        tainted: 0,
        nodes: 0,
      });
      t.published += c.published;
      t.usable += c.usable;
      t.allocated += c.allocated;
      t.free += c.free;
      t.unhealthy += c.unhealthy;
      t.tainted += c.tainted;
      t.nodes += 1;
    }
    for (const [name, c] of Object.entries(dra.deviceClasses)) {
      const t = (totals.deviceClasses[name] ??= { allocated: 0, pendingClaims: 0 });
      t.allocated += c.allocated;
      t.pendingClaims += c.pendingClaims;
    }
    for (const claim of dra.pendingClaims) totals.pendingClaims.push({ node, claim });
  }
  totals.pendingClaims.sort((a, b) => a.node.localeCompare(b.node) || a.claim.localeCompare(b.claim));
  return totals;
}

/** Unhealthy DRA devices of one node's summary (0 without DRA). */
export function draUnhealthy(dra: DraSummary | undefined): number {
  return dra ? Object.values(dra.drivers).reduce((n, c) => n + c.unhealthy, 0) : 0;
}

export const DraClusterPanel = memo(function DraClusterPanel({ totals }: { totals: ClusterDraTotals }) {
  const drivers = Object.entries(totals.drivers).sort(([a], [b]) => a.localeCompare(b));
  const classes = Object.entries(totals.deviceClasses).sort(([a], [b]) => a.localeCompare(b));
  return (
    <section className="card" aria-labelledby="dra-cluster" style={{ margin: '0.5rem 0' }}>
      <h2 id="dra-cluster" style={{ marginTop: 0 }}>
        DRA across the cluster
      </h2>
      {drivers.length === 0 ? (
        <p className="muted">No DRA driver publishes devices on any node.</p>
      ) : (
        <div className="grid">
          {drivers.map(([name, c]) => (
            <DraCountsSummary key={name} name={name} counts={c}>
              <span className="muted" style={{ fontWeight: 400 }}>
                on {c.nodes} {c.nodes === 1 ? 'node' : 'nodes'}
              </span>
            </DraCountsSummary>
          ))}
        </div>
      )}
      {classes.length > 0 && (
        <div className="table-wrap" style={{ marginTop: '0.5rem' }}>
          <table>
            <caption className="sr-only">DRA devices allocated and claims pending per DeviceClass</caption>
            <thead>
              <tr>
                <th scope="col">DeviceClass</th>
                <th scope="col">Devices allocated</th>
                <th scope="col">Claims pending</th>
              </tr>
            </thead>
            <tbody>
              {classes.map(([name, c]) => (
                <tr key={name}>
                  <th scope="row" className="mono">
                    {name}
                  </th>
                  <td>{c.allocated}</td>
                  <td>{c.pendingClaims > 0 ? <span className="badge warn">! {c.pendingClaims}</span> : 0}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h3>Pending claims ({totals.pendingClaims.length})</h3>
      {totals.pendingClaims.length === 0 ? (
        <p className="muted">None: every claim of the nodes&apos; pods is allocated.</p>
      ) : (
        <ul aria-label="Pending claims, cluster-wide">
          {totals.pendingClaims.map(({ node, claim }) => (
            <li key={`${node}/${claim}`}>
              <span className="mono">{claim}</span> on{' '}
              <Link href={`/nodes/${encodeURIComponent(node)}#dra-claims`}>{node}</Link>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
});
