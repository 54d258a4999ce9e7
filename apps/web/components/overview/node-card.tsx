// One node of the cluster overview: device-plugin resources and DRA drivers, each marked, and the
// node's pending claims. Memoised on its ClusterNode object: a summary patch for one node
// re-renders only that card.
import { memo } from 'react';
import Link from 'next/link';
import type { ClusterNode } from '../../lib/cluster-types';
import { LocalTime } from '../local-time';
import { ResourceSummary } from '../resource-summary';
import { servedByOf } from '../../lib/node-view';
import { resourcesServed, servedWords } from './served-counts';
import { DraCountsSummary } from '../dra-counts';
import { draUnhealthy } from './dra-overview';
import { NodeSparklines } from '../history/node-sparklines';

function LinkBadge({ node }: { node: ClusterNode }) {
  switch (node.status) {
    case 'live':
      return <span className="badge ok">● Live</span>;
    case 'connecting':
      return <span className="badge info">◌ Connecting</span>;
    case 'reconnecting':
      return (
        <span className="badge warn">
          ◌ Stale since <LocalTime iso={node.since} />
        </span>
      );
    case 'unreachable':
      return <span className="badge bad">■ Gateway unreachable</span>;
  }
}

export const NodeCard = memo(function NodeCard({
  node,
  resourceFilter,
  showHistory = false,
}: {
  node: ClusterNode;
  resourceFilter: string;
  /** Sparklines of the last hour from the node's history (needs a QueryClient). */
  showHistory?: boolean;
}) {
  const s = node.summary;
  const resources = s
    ? Object.entries(s.resources).filter(([name]) => !resourceFilter || name === resourceFilter)
    : [];
  resources.sort(([a], [b]) => a.localeCompare(b));
  const draDrivers = s?.dra
    ? Object.entries(s.dra.drivers)
        .filter(([name]) => !resourceFilter || name === resourceFilter)
        .sort(([a], [b]) => a.localeCompare(b))
    : [];
  const draBad = draUnhealthy(s?.dra);
  const pendingClaims = s?.dra?.pendingClaims.length ?? 0;
  const sourceIssues = s
    ? (
        [
          ['PodResources', s.sources.podResources],
          ['Kubernetes API', s.sources.kubernetes],
        ] as const
      ).filter(([, st]) => st.status === 'stale')
    : [];
  return (
    <article className="card" aria-labelledby={`node-${node.name}`}>
      <div className="row">
        <h2 id={`node-${node.name}`} style={{ margin: 0, fontSize: '1.1rem' }}>
          <Link href={`/nodes/${encodeURIComponent(node.name)}`}>{node.name}</Link>
        </h2>
        <span className="spacer" />
        <LinkBadge node={node} />
      </div>
      {node.status !== 'live' && node.error && <p className="muted">{node.error}</p>}
      {s && (
        <p className="row" style={{ margin: '0.3rem 0' }}>
          {s.unhealthyDevices > 0 && (
            <span className="badge bad">
              ✕ {s.unhealthyDevices} unhealthy {s.unhealthyDevices === 1 ? 'device' : 'devices'}
            </span>
          )}
          {draBad > 0 && (
            <span className="badge bad">
              ✕ {draBad} unhealthy DRA {draBad === 1 ? 'device' : 'devices'}
            </span>
          )}
          {s.unhealthyDevices === 0 && draBad === 0 && (
            <span className="badge ok">✓ all devices healthy</span>
          )}
          {pendingClaims > 0 && (
            <Link
              href={`/nodes/${encodeURIComponent(node.name)}#dra-claims`}
              className="badge warn"
              aria-label={`${pendingClaims} pending ${pendingClaims === 1 ? 'claim' : 'claims'} on ${node.name}`}
            >
              ! {pendingClaims} pending {pendingClaims === 1 ? 'claim' : 'claims'}
            </Link>
          )}
          {s.activeFaults > 0 && (
            <span className="badge warn">
              {s.activeFaults} simulated {s.activeFaults === 1 ? 'fault' : 'faults'}
            </span>
          )}
          {sourceIssues.map(([label, st]) => (
            <span key={label} className="badge warn" title={st.reason ?? undefined}>
              {label} stale since <LocalTime iso={st.lastSuccess} />
            </span>
          ))}
        </p>
      )}
      {s && Object.keys(s.resources).length > 0 && (
        <p className="muted served-counts" style={{ margin: '0.2rem 0' }}>
          {servedWords(resourcesServed([s]))}
        </p>
      )}
      {!s && node.status !== 'connecting' && <p>No data received from this node yet.</p>}
      {s && resources.length === 0 && draDrivers.length === 0 && (
        <p className="muted">
          {resourceFilter
            ? `No ${resourceFilter} on this node.`
            : 'No extended resources advertised by this gateway.'}
        </p>
      )}
      {resources.map(([name, r]) => (
        <ResourceSummary
          key={name}
          name={name}
          counts={r}
          apiServer={r.apiServer}
          registration={r.registration}
          servedBy={servedByOf(r)}
          observedNote={r.observed?.note ?? null}
        />
      ))}
      {draDrivers.map(([name, c]) => (
        <DraCountsSummary key={`dra:${name}`} name={name} counts={c} />
      ))}
      {showHistory && s && (resources.length > 0 || draDrivers.length > 0) && (
        <NodeSparklines
          nodeName={node.name}
          resources={resources.map(([name]) => name)}
          draDrivers={draDrivers.map(([name]) => name)}
        />
      )}
    </article>
  );
});
