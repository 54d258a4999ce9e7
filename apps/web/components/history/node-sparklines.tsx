'use client';
// The overview's history per node card: allocatable vs capacity over the last hour as sparklines.
// The cluster view holds one summary stream per gateway on the server and none per node in the
// browser, so this reads REST once a minute — cheap (one small request per visible card) and
// enough for a trend at this size.
import { useQuery } from '@tanstack/react-query';
import { HISTORY_WINDOWS } from '../../lib/history';
import { historyQuery } from '../../lib/queries';
import { Sparkline } from './sparkline';

const REFRESH_MS = 60_000;

export function NodeSparklines({ nodeName, resources }: { nodeName: string; resources: string[] }) {
  const win = HISTORY_WINDOWS[1];
  const q = useQuery(historyQuery(nodeName, win, { refetchMs: REFRESH_MS }));
  if (!q.data || resources.length === 0) return null;
  return (
    <div className="sparklines">
      {resources.map((r) => (
        <p key={r} className="row" style={{ margin: '0.2rem 0' }}>
          <span className="muted" aria-hidden="true">
            {r.slice(r.lastIndexOf('/') + 1)}, last hour
          </span>
          <Sparkline resource={r} points={q.data.resources[r] ?? []} windowLabel={win.label} />
        </p>
      ))}
    </div>
  );
}
