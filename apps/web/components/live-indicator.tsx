'use client';
// Live / reconnecting / paused / stale indicator for a stream, as text with a role=status region.
import type { LinkStatus } from '../lib/live-stream';
import { formatTime } from '../lib/format';

export function LiveIndicator({ status, dataAt }: { status: LinkStatus; dataAt: number | null }) {
  const at = dataAt ? formatTime(new Date(dataAt).toISOString()) : null;
  let cls = 'info';
  let text: string;
  switch (status.state) {
    case 'live':
      cls = 'ok';
      text = 'Live';
      break;
    case 'connecting':
      text = 'Connecting…';
      break;
    case 'paused':
      text = at ? `Paused while the tab is hidden (data from ${at})` : 'Paused while the tab is hidden';
      break;
    case 'reconnecting':
      cls = 'warn';
      text = at ? `Reconnecting… stale since ${at}` : 'Reconnecting…';
      break;
    case 'failed':
      cls = 'bad';
      text = at ? `Stale since ${at}` : 'Not connected';
      break;
  }
  return (
    <span className="live" role="status" aria-live="polite">
      <span className={`badge ${cls}`}>
        <span aria-hidden="true">
          {status.state === 'live' ? '●' : status.state === 'failed' ? '■' : '◌'}
        </span>
        {text}
      </span>
      {status.error && status.state !== 'live' && <span className="muted">{status.error}</span>}
    </span>
  );
}
