'use client';
// One device-plugin resource's history as a figure (history-figure.tsx): capacity, allocatable
// (the bucket's dip) and allocated, with a change-only table as its text equivalent.
import { memo, useMemo } from 'react';
import type { ResourceCounts, ResourcePoint, ResourceServedBy } from '@plugboard/api';
import { ServedByLabel } from '../served-by';
import { historyRows, historySummary, toChartData } from '../../lib/history';
import { CountsHistoryTable, HistoryFigure, type HistoryColumn } from './history-figure';
import { RESOURCE_SERIES } from './history-plot';

type LiveCounts = Pick<ResourceCounts, 'capacity' | 'allocatable' | 'allocated' | 'unhealthy'>;

const COLUMNS: readonly HistoryColumn<ResourcePoint>[] = [
  { header: 'Capacity', value: (p) => p.capacity },
  {
    header: 'Allocatable',
    value: (p) => p.allocatable,
    extreme: { value: (p) => p.minAllocatable, words: 'dipped to' },
  },
  { header: 'Allocated', value: (p) => p.allocated },
  { header: 'Unhealthy', value: (p) => p.unhealthy },
];

export const HistoryTable = memo(function HistoryTable({
  resource,
  points,
  live,
}: {
  resource: string;
  points: readonly ResourcePoint[];
  live: LiveCounts | null;
}) {
  const rows = useMemo(() => historyRows(points), [points]);
  return (
    <CountsHistoryTable
      name={resource}
      rows={rows}
      columns={COLUMNS}
      live={live && [live.capacity, live.allocatable, live.allocated, live.unhealthy]}
    />
  );
});

export const ResourceHistory = memo(function ResourceHistory({
  resource,
  points,
  live,
  windowLabel,
  now,
  servedBy = 'plugin',
}: {
  resource: string;
  /** Who serves it (absent: this gateway's plugin). */
  servedBy?: ResourceServedBy;
  points: readonly ResourcePoint[];
  live: LiveCounts | null;
  windowLabel: string;
  now: number;
}) {
  const data = useMemo(() => toChartData(points, live, now), [points, live, now]);
  return (
    <HistoryFigure
      title={
        <>
          <span className="mono">{resource}</span> <ServedByLabel servedBy={servedBy} />
        </>
      }
      name={resource}
      summary={historySummary(points, windowLabel)}
      data={data}
      series={RESOURCE_SERIES}
      table={<HistoryTable resource={resource} points={points} live={live} />}
    />
  );
});
