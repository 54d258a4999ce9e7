'use client';
// The overview's history per node card: over the last hour, allocatable vs capacity per resource
// and usable vs published per DRA driver (marked DRA), as sparklines. The cluster view holds one
// summary stream per gateway on the server and none per node in the browser, so this reads REST
// once a minute — cheap (one small request per visible card) and enough for a trend at this size.
import { useMemo } from 'react';
import { useQuery } from '@tanstack/react-query';
import { draHistorySummary, HISTORY_WINDOWS, historySummary } from '../../lib/history';
import { historyQuery } from '../../lib/queries';
import { Sparkline, type SparkPoint } from './sparkline';

const REFRESH_MS = 60_000;

interface SparkRow {
  key: string;
  label: string;
  points: SparkPoint[];
  text: string;
}

export function NodeSparklines({
  nodeName,
  resources,
  draDrivers = [],
}: {
  nodeName: string;
  resources: string[];
  draDrivers?: string[];
}) {
  const win = HISTORY_WINDOWS[1];
  const q = useQuery(historyQuery(nodeName, win, { refetchMs: REFRESH_MS }));
  const rows = useMemo((): SparkRow[] => {
    const h = q.data;
    if (!h) return [];
    return [
      ...resources.map((r) => {
        const points = h.resources[r] ?? [];
        return {
          key: r,
          label: r.slice(r.lastIndexOf('/') + 1),
          points: points.map((p) => ({ t: p.t, step: p.step, top: p.capacity, line: p.minAllocatable })),
          text: `${r} ${historySummary(points, win.label)}`,
        };
      }),
      ...draDrivers.map((d) => {
        const points = h.draDrivers[d] ?? [];
        return {
          key: `dra:${d}`,
          label: `${d} (DRA)`,
          points: points.map((p) => ({ t: p.t, step: p.step, top: p.published, line: p.minUsable })),
          text: `DRA driver ${d} ${draHistorySummary(points, win.label)}`,
        };
      }),
    ];
  }, [q.data, resources, draDrivers, win.label]);
  if (rows.length === 0) return null;
  return (
    <div className="sparklines">
      {rows.map((r) => (
        <p key={r.key} className="row" style={{ margin: '0.2rem 0' }}>
          <span className="muted" aria-hidden="true">
            {r.label}, last hour
          </span>
          <Sparkline points={r.points} text={r.text} />
        </p>
      ))}
    </div>
  );
}
