// One extended resource's numbers as text (capacity, allocatable, allocated, free, unhealthy) and
// a bar. The text carries everything; the bar is a picture of the same numbers.
import { memo } from 'react';
import type { ApiServerView, RegistrationPhase, ResourceCounts, ResourceServedBy } from '@plugboard/api';
import { ServedByLabel } from './served-by';
import { formatTime, shortResource } from '../lib/format';

export interface ResourceSummaryProps {
  name: string;
  counts: ResourceCounts;
  apiServer?: ApiServerView | null;
  registration?: RegistrationPhase;
  headingLevel?: 3 | 4;
  /** Who serves it, shown beside the name (absent: not said, e.g. cluster totals). */
  servedBy?: ResourceServedBy;
  /** An observed resource's `observed.note`: what the kubelet does not say about these counts. */
  observedNote?: string | null;
}

export const ResourceSummary = memo(function ResourceSummary({
  name,
  counts,
  apiServer,
  registration,
  headingLevel = 3,
  servedBy,
  observedNote,
}: ResourceSummaryProps) {
  const total = Math.max(counts.capacity, 1);
  const pct = (n: number) => `${(Math.max(0, n) / total) * 100}%`;
  const Heading = `h${headingLevel}` as const;
  // Shown when it differs from the kubelet's numbers, or when it is only the kubelet's last report.
  const showApiServer =
    apiServer != null &&
    (apiServer.staleSince !== null ||
      apiServer.capacity !== counts.capacity ||
      apiServer.allocatable !== counts.allocatable);
  return (
    <section
      className="resource"
      aria-label={`${name} capacity ${counts.capacity} allocatable ${counts.allocatable}`}
    >
      <Heading className="name" style={{ margin: 0, fontSize: '1em' }} title={name}>
        <span className="mono">{name}</span>{' '}
        {servedBy && (
          <>
            <ServedByLabel servedBy={servedBy} />{' '}
          </>
        )}
        {counts.unhealthy > 0 && <span className="badge bad">{counts.unhealthy} unhealthy</span>}
        {registration === 'waiting-for-kubelet' ? (
          <span className="badge warn">plugin waiting for the kubelet</span>
        ) : (
          registration !== undefined &&
          registration !== 'registered' && <span className="badge warn">plugin not registered</span>
        )}
      </Heading>
      <div className="numbers">
        <span>capacity {counts.capacity}</span>
        <span>allocatable {counts.allocatable}</span>
        <span>allocated {counts.allocated}</span>
        <span>free {counts.free}</span>
        {showApiServer &&
          (apiServer.staleSince !== null ? (
            <span
              className="muted"
              title="The kubelet is gone: the API server keeps the Node's last status (until the node goes NotReady, and the numbers even then)"
            >
              API server (the kubelet's last report, stale since {formatTime(apiServer.staleSince)}): capacity{' '}
              {apiServer.capacity}, allocatable {apiServer.allocatable}
            </span>
          ) : (
            <span
              className="muted"
              title="The API server's Node object lags the kubelet until the next node status update"
            >
              API server: capacity {apiServer.capacity}, allocatable {apiServer.allocatable}
            </span>
          ))}
      </div>
      {observedNote && <p className="observed-note muted">{observedNote}</p>}
      <div
        className="bar"
        role="img"
        aria-label={`${shortResource(name)}: ${counts.allocated} allocated, ${counts.free} free, ${counts.unhealthy} unhealthy of ${counts.capacity}`}
      >
        <span className="alloc" style={{ width: pct(counts.allocated) }} />
        <span className="free" style={{ width: pct(counts.free) }} />
        <span className="bad" style={{ width: pct(counts.unhealthy) }} />
      </div>
    </section>
  );
});
