// Cluster overview route.
import { ClusterOverview } from '../components/overview/cluster-overview';

export default function OverviewPage() {
  return <ClusterOverview />;
}
