// A device's health over the history window as a strip: healthy, unhealthy and unknown spans drawn
// to scale (unhealthy also hatched, unknown dotted, a DRA device's tainted span marked along its
// top, so colour is not the only cue), with the same spans as a list for screen readers.
import { memo, useMemo } from 'react';
import type { DraHealthTransition, HealthTransition } from '@plugboard/api';
import { healthSegments, type HealthSegment } from '../../lib/history';

const clock = (ms: number) =>
  new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

const HEALTH_CLASS: Record<HealthSegment['health'], string> = {
  Healthy: 'ok',
  Unhealthy: 'bad',
  Unknown: 'unknown',
};

const stateText = (s: HealthSegment): string => `${s.health}${s.taint ? `, tainted ${s.taint}` : ''}`;

const times = (n: number): string => `${n} ${n === 1 ? 'time' : 'times'}`;

export const HealthStrip = memo(function HealthStrip({
  device,
  transitions,
  from,
  to,
}: {
  device: string;
  transitions: readonly (HealthTransition | DraHealthTransition)[];
  from: number;
  to: number;
}) {
  const segments = useMemo(() => healthSegments(transitions, from, to), [transitions, from, to]);
  const span = Math.max(1, to - from);
  // Spans, not merged runs: a taint added while unhealthy is not a second time unhealthy.
  const count = (pred: (s: HealthSegment) => boolean) =>
    segments.filter((s, i) => pred(s) && !(i > 0 && pred(segments[i - 1]!))).length;
  const unhealthy = count((s) => s.health === 'Unhealthy');
  const tainted = count((s) => s.taint !== null);
  return (
    <div className="health-strip-row">
      <p className="health-strip-label">
        <span className="mono">{device}</span>:{' '}
        {segments.length === 0
          ? 'no history recorded yet'
          : unhealthy === 0
            ? 'healthy throughout'
            : `unhealthy ${times(unhealthy)}`}
        {tainted > 0 && `, tainted ${times(tainted)}`}
      </p>
      <div className="health-strip" aria-hidden="true">
        {segments.map((s) => (
          <span
            key={s.from}
            className={`seg ${HEALTH_CLASS[s.health]}${s.taint ? ' tainted' : ''}`}
            style={{
              left: `${((s.from - from) / span) * 100}%`,
              width: `${((s.to - s.from) / span) * 100}%`,
            }}
            title={`${stateText(s)} ${clock(s.from)}–${clock(s.to)}${s.reason ? `: ${s.reason}` : ''}`}
          />
        ))}
      </div>
      <p className="health-strip-axis" aria-hidden="true">
        <span>{clock(from)}</span>
        <span>now</span>
      </p>
      <ul className="sr-only" aria-label={`Health history of ${device}`}>
        {segments.map((s, i) => (
          <li key={s.from}>
            {stateText(s)} from {clock(s.from)} to{' '}
            {i === segments.length - 1 && s.to >= to ? 'now' : clock(s.to)}
            {s.reason ? ` (${s.reason})` : ''}
          </li>
        ))}
      </ul>
    </div>
  );
});
