'use client';
// The uPlot canvas of a series of counts over time: a resource's capacity / allocatable /
// allocated, or a DRA driver's published / usable / allocated / unhealthy. uPlot (~50 KB, canvas,
// built for streaming time series) is loaded on first use so pages without charts do not pay for
// it; the chart is created once and only its data is replaced as the stream extends it. The canvas
// is hidden from assistive technology: the figure around it carries the summary and a table with
// the same data (history-figure.tsx).
import { useEffect, useRef } from 'react';
import type uPlot from 'uplot';

/** x (seconds), then one column per series. */
export type ChartData = number[][];

/** The chart's height in CSS pixels, also kept while there is nothing to draw. */
export const PLOT_HEIGHT = 160;

/** One line of a chart; colours are CSS custom properties (with a fallback) so themes apply. */
export interface PlotSeries {
  label: string;
  stroke: readonly [cssVar: string, fallback: string];
  fill?: readonly [cssVar: string, fallback: string];
  dash?: number[];
  width: number;
}

export const RESOURCE_SERIES: readonly PlotSeries[] = [
  { label: 'capacity', stroke: ['--muted', '#4a505c'], dash: [6, 4], width: 1.5 },
  { label: 'allocatable', stroke: ['--accent', '#0b57d0'], width: 2 },
  { label: 'allocated', stroke: ['--ok-fg', '#0a5c2b'], fill: ['--ok-bg', '#e3f4e8'], width: 1.5 },
];

/** A DRA driver's own series: no capacity or allocatable, the counts snapshot.dra defines. */
export const DRA_SERIES: readonly PlotSeries[] = [
  { label: 'published', stroke: ['--muted', '#4a505c'], dash: [6, 4], width: 1.5 },
  { label: 'usable', stroke: ['--accent', '#0b57d0'], width: 2 },
  { label: 'allocated', stroke: ['--ok-fg', '#0a5c2b'], fill: ['--ok-bg', '#e3f4e8'], width: 1.5 },
  { label: 'unhealthy', stroke: ['--bar-bad', '#c2273a'], dash: [2, 2], width: 2 },
];

function cssVar(el: Element, [name, fallback]: readonly [string, string]): string {
  return getComputedStyle(el).getPropertyValue(name).trim() || fallback;
}

export function HistoryPlot({
  data,
  series,
  height = PLOT_HEIGHT,
}: {
  data: ChartData;
  series: readonly PlotSeries[];
  height?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const latest = useRef(data);
  latest.current = data;

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let cancelled = false;
    let resize: ResizeObserver | null = null;
    void import('uplot').then(({ default: UPlot }) => {
      if (cancelled) return;
      const text = cssVar(el, ['--muted', '#4a505c']);
      const grid = cssVar(el, ['--border', '#c9ced6']);
      const stepped = UPlot.paths.stepped?.({ align: 1 });
      // Buckets are dense and stepped: points would only add noise.
      const points = { show: false };
      const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
      plot.current = new UPlot(
        {
          width: Math.max(200, el.clientWidth),
          height,
          legend: { show: false },
          cursor: { show: false },
          scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
          // The y axis leaves room for half the first x tick's date label ("11/27/26 5:07pm"), centred on it.
          axes: [axis, { ...axis, size: 56 }],
          series: [
            {},
            ...series.map((s) => ({
              label: s.label,
              stroke: cssVar(el, s.stroke),
              ...(s.fill ? { fill: cssVar(el, s.fill) } : {}),
              ...(s.dash ? { dash: s.dash } : {}),
              width: s.width,
              paths: stepped,
              points,
            })),
          ],
        },
        latest.current as uPlot.AlignedData,
        el,
      );
      resize = new ResizeObserver(() => {
        plot.current?.setSize({ width: Math.max(200, el.clientWidth), height });
      });
      resize.observe(el);
    });
    return () => {
      cancelled = true;
      resize?.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [height, series]);

  useEffect(() => {
    plot.current?.setData(data as uPlot.AlignedData);
  }, [data]);

  return <div ref={box} className="history-plot" aria-hidden="true" style={{ minHeight: height }} />;
}
