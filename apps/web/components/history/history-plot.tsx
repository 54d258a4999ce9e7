'use client';
// The uPlot canvas of a resource's capacity / allocatable / allocated over time. uPlot (~50 KB,
// canvas, built for streaming time series) is loaded on first use so pages without charts do not
// pay for it; the chart is created once and only its data is replaced as the stream extends it.
// The canvas is hidden from assistive technology: the figure around it carries the summary and a
// table with the same data (resource-history.tsx).
import { useEffect, useRef } from 'react';
import type uPlot from 'uplot';

export type ChartData = [number[], number[], number[], number[]];

function cssVar(el: Element, name: string, fallback: string): string {
  return getComputedStyle(el).getPropertyValue(name).trim() || fallback;
}

export function HistoryPlot({ data, height = 160 }: { data: ChartData; height?: number }) {
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
      const text = cssVar(el, '--muted', '#4a505c');
      const grid = cssVar(el, '--border', '#c9ced6');
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
          axes: [axis, { ...axis, size: 40 }],
          series: [
            {},
            {
              label: 'capacity',
              stroke: cssVar(el, '--muted', '#4a505c'),
              dash: [6, 4],
              width: 1.5,
              paths: stepped,
              points,
            },
            {
              label: 'allocatable',
              stroke: cssVar(el, '--accent', '#0b57d0'),
              width: 2,
              paths: stepped,
              points,
            },
            {
              label: 'allocated',
              stroke: cssVar(el, '--ok-fg', '#0a5c2b'),
              fill: cssVar(el, '--ok-bg', '#e3f4e8'),
              width: 1.5,
              paths: stepped,
              points,
            },
          ],
        },
        latest.current,
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
  }, [height]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  return <div ref={box} className="history-plot" aria-hidden="true" style={{ minHeight: height }} />;
}
