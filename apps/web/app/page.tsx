// Cluster overview route, rendered per request with the cluster hub's document (ClusterHydration).
import { ClusterOverview } from '../components/overview/cluster-overview';
import { ClusterHydration } from './cluster-hydration';

export default function OverviewPage() {
  return (
    <ClusterHydration>
      <ClusterOverview />
    </ClusterHydration>
  );
}
