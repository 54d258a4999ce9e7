// The node's event timeline (health changes, faults, allocations with the preferred-allocation
// reason, kubelet restarts, DRA device taints and claims), newest first, filterable by kind.
import { memo, useMemo, useState } from 'react';
import type { NodeEvent, NodeEventKind } from '@plugboard/api';
import { formatTime } from '../../lib/format';

const KIND_CLASS: Record<NodeEventKind, string> = {
  health: 'bad',
  'fault-injected': 'warn',
  'fault-cleared': 'ok',
  allocation: 'info',
  'preferred-allocation': 'info',
  'kubelet-restart': 'warn',
  registration: 'info',
  'admission-rejected': 'bad',
  source: 'warn',
  taint: 'warn',
  claim: 'info',
};

export function EventList({ events, label }: { events: readonly NodeEvent[]; label: string }) {
  if (events.length === 0) return <p className="muted">No events recorded yet.</p>;
  return (
    <ol className="timeline" aria-label={label}>
      {events.map((e) => (
        <li key={e.seq}>
          <time dateTime={e.at} className="muted">
            {formatTime(e.at)}
          </time>
          <span>
            <span className={`badge ${KIND_CLASS[e.kind]}`}>{e.kind}</span>
          </span>
          <span>
            {e.message}
            {e.deviceIds.length > 0 && <span className="muted mono"> [{e.deviceIds.join(', ')}]</span>}
            {e.pod && (
              <span className="muted">
                {' '}
                pod {e.pod.namespace}/{e.pod.name}
                {e.pod.container ? `/${e.pod.container}` : ''}
              </span>
            )}
          </span>
        </li>
      ))}
    </ol>
  );
}

export const EventTimeline = memo(function EventTimeline({ events }: { events: readonly NodeEvent[] }) {
  const [kind, setKind] = useState<NodeEventKind | ''>('');
  const shown = useMemo(
    () =>
      events
        .filter((e) => !kind || e.kind === kind)
        .slice()
        .reverse(),
    [events, kind],
  );
  return (
    <>
      <label style={{ marginBottom: '0.5rem' }}>
        Kind
        <select value={kind} onChange={(e) => setKind(e.target.value as NodeEventKind | '')}>
          <option value="">All events</option>
          {(Object.keys(KIND_CLASS) as NodeEventKind[]).map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </label>
      <EventList events={shown} label="Node events, newest first" />
    </>
  );
});
