// A compact sparkline for the overview's node cards (inline SVG: a hundred cards must not create a
// hundred canvases): a line (allocatable, or a DRA driver's usable) under its ceiling (capacity, or
// published). Its text equivalent is a visually hidden sentence with the same numbers.
import { memo } from 'react';

const W = 120;
const H = 24;

/** One bucket as the sparkline draws it. */
export interface SparkPoint {
  t: number;
  step: number;
  /** The ceiling, drawn dashed. */
  top: number;
  /** The value, drawn solid (the bucket's dip, so a short fault shows). */
  line: number;
}

/** SVG path of a stepped series scaled to the sparkline's box. */
export function sparkPath<P extends { t: number; step: number }>(
  points: readonly P[],
  value: (p: P) => number,
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
  points,
  text,
}: {
  points: readonly SparkPoint[];
  /** The text equivalent: what it is of and the sentence with its numbers. */
  text: string;
}) {
  const max = points.reduce((m, p) => Math.max(m, p.top), 0);
  return (
    <span className="sparkline">
      <svg width={W} height={H} viewBox={`0 0 ${W} ${H}`} aria-hidden="true" focusable="false">
        <path d={sparkPath(points, (p) => p.top, max)} className="spark-capacity" />
        <path d={sparkPath(points, (p) => p.line, max)} className="spark-allocatable" />
      </svg>
      <span className="sr-only">{text}</span>
    </span>
  );
});
