// The migration view of the cluster document: @plugboard/api's clusterMigration over the nodes'
// summaries (`NodeSummary.extendedResources`), with what the join cannot see said per node — a
// gateway never reached (no summary), one older than the view (no `extendedResources`), and one
// whose stream is down (its last summary, stale since when). Served by GET /api/migration and
// drawn by the /migration page from the same cluster document.
import { clusterMigration, type ClusterMigration } from '@plugboard/api';
import type { ClusterDocument, GatewayLinkStatus } from './cluster-types';

export interface UnobservedNode {
  node: string;
  status: GatewayLinkStatus;
  /** 'no-summary': the gateway has not answered (yet); 'predates-view': it answers without `extendedResources`. */
  why: 'no-summary' | 'predates-view';
  /** The link's error when not live. */
  error: string | null;
}

export interface StaleNode {
  node: string;
  status: GatewayLinkStatus;
  /** Since when the stream is down: the node's rows are its last summary's. */
  since: string;
  error: string | null;
}

export interface MigrationView {
  resources: ClusterMigration['resources'];
  notObserved: UnobservedNode[];
  stale: StaleNode[];
}

export function migrationView(doc: ClusterDocument): MigrationView {
  const nodes = Object.values(doc.nodes).sort((a, b) => a.name.localeCompare(b.name));
  const m = clusterMigration(
    nodes.map((n) => ({ node: n.name, extendedResources: n.summary?.extendedResources })),
  );
  const unobserved = new Set(m.notObserved);
  return {
    resources: m.resources,
    notObserved: nodes
      .filter((n) => unobserved.has(n.name))
      .map((n) => ({
        node: n.name,
        status: n.status,
        why: n.summary ? 'predates-view' : 'no-summary',
        error: n.error,
      })),
    stale: nodes
      .filter((n) => n.status !== 'live' && !unobserved.has(n.name))
      .map((n) => ({ node: n.name, status: n.status, since: n.since, error: n.error })),
  };
}
