'use client';
// One series of counts over time as a figure: a one-sentence summary (the caption, also the
// figure's accessible name), the uPlot chart with its legend, and the text equivalent — a
// change-only table in a <details> that screen readers and keyboard users can open. Resources and
// DRA drivers use it with their own columns and series (resource-history.tsx,
// dra-driver-history.tsx).
import { useId, type ReactNode } from 'react';
import type { HistoryRow } from '../../lib/history';
import { HistoryPlot, PLOT_HEIGHT, type ChartData, type PlotSeries } from './history-plot';

const clock = (ms: number) =>
  new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** A column of a history table: the value at the bucket's end, and the extreme within it. */
export interface HistoryColumn<P> {
  header: string;
  value: (p: P) => number;
  /** The bucket's minimum or maximum, said when it differs from the end value ("dipped to 6"). */
  extreme?: { value: (p: P) => number; words: string };
}

export function CountsHistoryTable<P extends { t: number; step: number }>({
  name,
  rows,
  columns,
  live,
}: {
  name: string;
  rows: readonly HistoryRow<P>[];
  columns: readonly HistoryColumn<P>[];
  /** The live counts, in column order (the table's first row). */
  live: readonly number[] | null;
}) {
  return (
    <table className="history-table">
      <caption className="sr-only">History of {name}, newest first, one row per change</caption>
      <thead>
        <tr>
          <th scope="col">From</th>
          <th scope="col">To</th>
          {columns.map((c) => (
            <th key={c.header} scope="col">
              {c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {live && (
          <tr>
            <td colSpan={2}>now (live)</td>
            {live.map((v, i) => (
              <td key={columns[i]?.header ?? i}>{v}</td>
            ))}
          </tr>
        )}
        {rows.map((r) => (
          <tr key={r.from}>
            <td>{clock(r.from)}</td>
            <td>{clock(r.to)}</td>
            {columns.map((c) => {
              const v = c.value(r);
              const x = c.extreme?.value(r);
              return (
                <td key={c.header}>
                  {v}
                  {x !== undefined && x !== v && ` (${c.extreme!.words} ${x})`}
                </td>
              );
            })}
          </tr>
        ))}
        {rows.length === 0 && (
          <tr>
            <td colSpan={columns.length + 2}>No history recorded yet.</td>
          </tr>
        )}
      </tbody>
    </table>
  );
}

const glyph = (s: PlotSeries): string => (s.fill ? '▆' : s.dash ? '┄' : '━');

export function HistoryFigure({
  title,
  name,
  summary,
  data,
  series,
  table,
}: {
  /** What the chart is of, as shown at the start of the caption. */
  title: ReactNode;
  /** The same in words, for the table's summary. */
  name: string;
  summary: string;
  data: ChartData;
  series: readonly PlotSeries[];
  table: ReactNode;
}) {
  const id = useId();
  return (
    <figure className="history-figure" aria-labelledby={`${id}-cap`}>
      <figcaption id={`${id}-cap`}>
        {title} — {summary}
      </figcaption>
      {/* One time alone (no bucket closed yet) is nothing to draw, and uPlot would pad it to years. */}
      {(data[0]?.length ?? 0) >= 2 ? (
        <HistoryPlot data={data} series={series} />
      ) : (
        <div className="history-plot" aria-hidden="true" style={{ minHeight: PLOT_HEIGHT }} />
      )}
      <p className="history-legend" aria-hidden="true">
        {series.map((s, i) => (
          <span key={s.label}>
            {i > 0 && ' '}
            <span className={`key ${s.label}`}>
              {glyph(s)} {s.label}
            </span>
          </span>
        ))}
      </p>
      <details>
        <summary>Table: history of {name}</summary>
        {table}
      </details>
    </figure>
  );
}
