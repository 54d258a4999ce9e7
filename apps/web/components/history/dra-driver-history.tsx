'use client';
// One DRA driver's history as a figure (history-figure.tsx), marked DRA: its own counts as
// snapshot.dra defines them — published, usable (the bucket's fewest), allocated, unhealthy (the
// bucket's most), tainted — not the extended-resource capacity/allocatable shape.
import { memo, useMemo } from 'react';
import type { DraDeviceCounts, DraDriverPoint } from '@plugboard/api';
import { draHistoryRows, draHistorySummary, toDraChartData } from '../../lib/history';
import { CountsHistoryTable, HistoryFigure, type HistoryColumn } from './history-figure';
import { DRA_SERIES } from './history-plot';

const COLUMNS: readonly HistoryColumn<DraDriverPoint>[] = [
  { header: 'Published', value: (p) => p.published },
  { header: 'Usable', value: (p) => p.usable, extreme: { value: (p) => p.minUsable, words: 'dipped to' } },
  { header: 'Allocated', value: (p) => p.allocated },
  {
    header: 'Unhealthy',
    value: (p) => p.unhealthy,
    extreme: { value: (p) => p.maxUnhealthy, words: 'peaked at' },
  },
  { header: 'Tainted', value: (p) => p.tainted, extreme: { value: (p) => p.maxTainted, words: 'peaked at' } },
];

export const DraHistoryTable = memo(function DraHistoryTable({
  driver,
  points,
  live,
}: {
  driver: string;
  points: readonly DraDriverPoint[];
  live: DraDeviceCounts | null;
}) {
  const rows = useMemo(() => draHistoryRows(points), [points]);
  return (
    <CountsHistoryTable
      name={`DRA driver ${driver}`}
      rows={rows}
      columns={COLUMNS}
      live={live && [live.published, live.usable, live.allocated, live.unhealthy, live.tainted]}
    />
  );
});

export const DraDriverHistory = memo(function DraDriverHistory({
  driver,
  points,
  live,
  windowLabel,
  now,
}: {
  driver: string;
  points: readonly DraDriverPoint[];
  live: DraDeviceCounts | null;
  windowLabel: string;
  now: number;
}) {
  const data = useMemo(() => toDraChartData(points, live, now), [points, live, now]);
  return (
    <HistoryFigure
      title={
        <>
          <span className="mono">{driver}</span> <span className="badge info">DRA driver</span>
        </>
      }
      name={`DRA driver ${driver}`}
      summary={draHistorySummary(points, windowLabel)}
      data={data}
      series={DRA_SERIES}
      table={<DraHistoryTable driver={driver} points={points} live={live} />}
    />
  );
});
