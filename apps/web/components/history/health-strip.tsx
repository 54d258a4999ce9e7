// A device's health over the history window as a strip: healthy and unhealthy spans drawn to
// scale (unhealthy also hatched, so colour is not the only cue), with the same spans as a list
// for screen readers.
import { memo, useMemo } from 'react';
import type { HealthTransition } from '@plugboard/api';
import { healthSegments } from '../../lib/history';

const clock = (ms: number) =>
  new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

export const HealthStrip = memo(function HealthStrip({
  device,
  transitions,
  from,
  to,
}: {
  device: string;
  transitions: readonly HealthTransition[];
  from: number;
  to: number;
}) {
  const segments = useMemo(() => healthSegments(transitions, from, to), [transitions, from, to]);
  const span = Math.max(1, to - from);
  const unhealthy = segments.filter((s) => s.health === 'Unhealthy').length;
  return (
    <div className="health-strip-row">
      <p className="health-strip-label">
        <span className="mono">{device}</span>:{' '}
        {segments.length === 0
          ? 'no history recorded yet'
          : unhealthy === 0
            ? 'healthy throughout'
            : `unhealthy ${unhealthy} ${unhealthy === 1 ? 'time' : 'times'}`}
      </p>
      <div className="health-strip" aria-hidden="true">
        {segments.map((s) => (
          <span
            key={s.from}
            className={`seg ${s.health === 'Healthy' ? 'ok' : 'bad'}`}
            style={{
              left: `${((s.from - from) / span) * 100}%`,
              width: `${((s.to - s.from) / span) * 100}%`,
            }}
            title={`${s.health} ${clock(s.from)}–${clock(s.to)}${s.reason ? `: ${s.reason}` : ''}`}
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
            {s.health} from {clock(s.from)} to {i === segments.length - 1 && s.to >= to ? 'now' : clock(s.to)}
            {s.reason ? ` (${s.reason})` : ''}
          </li>
        ))}
      </ul>
    </div>
  );
});
