// Migration view route (/migration): per extended resource name, device plugin vs DRA across the
// nodes; rendered per request with the cluster hub's document (ClusterHydration), then live.
import type { Metadata } from 'next';
import { MigrationOverview } from '../../components/migration/migration-view';
import { ClusterHydration } from '../cluster-hydration';

export const metadata: Metadata = { title: 'Migration to DRA' };

export default function MigrationPage() {
  return (
    <ClusterHydration>
      <MigrationOverview />
    </ClusterHydration>
  );
}
