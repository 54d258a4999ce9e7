// A compact allocatable-vs-capacity sparkline for the overview's node cards (inline SVG: a
// hundred cards must not create a hundred canvases). Its text equivalent is a visually hidden
// sentence with the same numbers.
import { memo } from 'react';
import type { ResourcePoint } from '@plugboard/api';
import { historySummary } from '../../lib/history';

const W = 120;
const H = 24;

/** SVG path of a stepped series scaled to the sparkline's box. */
export function sparkPath(
  points: readonly ResourcePoint[],
  value: (p: ResourcePoint) => number,
  max: number,
): string {
  if (points.length === 0) return '';
  const t0 = points[0]!.t;
  const span = Math.max(1, points.at(-1)!.t + points.at(-1)!.step - t0);
  const x = (t: number) => ((t - t0) / span) * W;
  const y = (v: number) => H - 1 - (v / Math.max(1, max)) * (H - 2);
  let d = '';
  for (const p of points) {
    const vy = y(value(p)).toFixed(1);
    d += `${d ? 'L' : 'M'}${x(p.t).toFixed(1)},${vy}L${x(p.t + p.step).toFixed(1)},${vy}`;
  }
  return d;
}

export const Sparkline = memo(function Sparkline({
  resource,
  points,
  windowLabel,
}: {
  resource: string;
  points: readonly ResourcePoint[];
  windowLabel: string;
}) {
  const max = points.reduce((m, p) => Math.max(m, p.capacity), 0);
  return (
    <span className="sparkline">
      <svg width={W} height={H} viewBox={`0 0 ${W} ${H}`} aria-hidden="true" focusable="false">
        <path d={sparkPath(points, (p) => p.capacity, max)} className="spark-capacity" />
        <path d={sparkPath(points, (p) => p.minAllocatable, max)} className="spark-allocatable" />
      </svg>
      <span className="sr-only">
        {resource} {historySummary(points, windowLabel)}
      </span>
    </span>
  );
});
