'use client';
// One resource's history as a figure: a one-sentence summary (the caption, also the figure's
// accessible name), the uPlot chart, and its text equivalent — a change-only table in a
// <details> that screen readers and keyboard users can open.
import { memo, useId, useMemo } from 'react';
import type { ResourceCounts, ResourcePoint } from '@plugboard/api';
import { historyRows, historySummary, toChartData } from '../../lib/history';
import { HistoryPlot } from './history-plot';

const clock = (ms: number) =>
  new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

export const HistoryTable = memo(function HistoryTable({
  resource,
  points,
  live,
}: {
  resource: string;
  points: readonly ResourcePoint[];
  live: Pick<ResourceCounts, 'capacity' | 'allocatable' | 'allocated' | 'unhealthy'> | null;
}) {
  const rows = useMemo(() => historyRows(points), [points]);
  return (
    <table className="history-table">
      <caption className="sr-only">History of {resource}, newest first, one row per change</caption>
      <thead>
        <tr>
          <th scope="col">From</th>
          <th scope="col">To</th>
          <th scope="col">Capacity</th>
          <th scope="col">Allocatable</th>
          <th scope="col">Allocated</th>
          <th scope="col">Unhealthy</th>
        </tr>
      </thead>
      <tbody>
        {live && (
          <tr>
            <td colSpan={2}>now (live)</td>
            <td>{live.capacity}</td>
            <td>{live.allocatable}</td>
            <td>{live.allocated}</td>
            <td>{live.unhealthy}</td>
          </tr>
        )}
        {rows.map((r) => (
          <tr key={r.from}>
            <td>{clock(r.from)}</td>
            <td>{clock(r.to)}</td>
            <td>{r.capacity}</td>
            <td>
              {r.allocatable}
              {r.minAllocatable < r.allocatable && ` (dipped to ${r.minAllocatable})`}
            </td>
            <td>{r.allocated}</td>
            <td>{r.unhealthy}</td>
          </tr>
        ))}
        {rows.length === 0 && (
          <tr>
            <td colSpan={6}>No history recorded yet.</td>
          </tr>
        )}
      </tbody>
    </table>
  );
});

export const ResourceHistory = memo(function ResourceHistory({
  resource,
  points,
  live,
  windowLabel,
  now,
}: {
  resource: string;
  points: readonly ResourcePoint[];
  live: Pick<ResourceCounts, 'capacity' | 'allocatable' | 'allocated' | 'unhealthy'> | null;
  windowLabel: string;
  now: number;
}) {
  const id = useId();
  const data = useMemo(() => toChartData(points, live, now), [points, live, now]);
  const summary = historySummary(points, windowLabel);
  return (
    <figure className="history-figure" aria-labelledby={`${id}-cap`}>
      <figcaption id={`${id}-cap`}>
        <span className="mono">{resource}</span> — {summary}
      </figcaption>
      <HistoryPlot data={data} />
      <p className="history-legend" aria-hidden="true">
        <span className="key capacity">┄ capacity</span>{' '}
        <span className="key allocatable">━ allocatable</span>{' '}
        <span className="key allocated">▆ allocated</span>
      </p>
      <details>
        <summary>Table: history of {resource}</summary>
        <HistoryTable resource={resource} points={points} live={live} />
      </details>
    </figure>
  );
});
