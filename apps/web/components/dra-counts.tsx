// One DRA driver's (or DeviceClass's) device counts as text and a bar, the DRA twin of
// ResourceSummary. DRA has no capacity/allocatable: the numbers are what the contract counts —
// published, usable, allocated, free, unhealthy, tainted — and the text carries all of them.
import { memo, type ReactNode } from 'react';
import type { DraDeviceCounts } from '@plugboard/api';

export const DraCountsSummary = memo(function DraCountsSummary({
  name,
  counts,
  headingLevel = 3,
  children,
}: {
  name: string;
  counts: DraDeviceCounts;
  headingLevel?: 3 | 4;
  /** Extra badges beside the name (registration, health streams, …). */
  children?: ReactNode;
}) {
  const total = Math.max(counts.published, 1);
  const pct = (n: number) => `${(Math.max(0, n) / total) * 100}%`;
  // Published devices neither allocated nor free: unhealthy or tainted and not in use.
  const unusableFree = Math.max(0, counts.published - counts.allocated - counts.free);
  const Heading = `h${headingLevel}` as const;
  return (
    <section
      className="resource dra-counts"
      aria-label={`${name} DRA devices published ${counts.published} allocated ${counts.allocated}`}
    >
      <Heading className="name" style={{ margin: 0, fontSize: '1em' }} title={name}>
        <span className="mono">{name}</span> <span className="badge info">DRA</span>{' '}
        {counts.unhealthy > 0 && <span className="badge bad">{counts.unhealthy} unhealthy</span>}{' '}
        {counts.tainted > 0 && <span className="badge warn">{counts.tainted} tainted</span>} {children}
      </Heading>
      <div className="numbers">
        <span>published {counts.published}</span>
        <span>usable {counts.usable}</span>
        <span>allocated {counts.allocated}</span>
        <span>free {counts.free}</span>
        <span>unhealthy {counts.unhealthy}</span>
        <span>tainted {counts.tainted}</span>
      </div>
      <div
        className="bar"
        role="img"
        aria-label={`${name}: ${counts.allocated} allocated, ${counts.free} free, ${unusableFree} unusable and not allocated, of ${counts.published} published`}
      >
        <span className="alloc" style={{ width: pct(counts.allocated) }} />
        <span className="free" style={{ width: pct(counts.free) }} />
        <span className="bad" style={{ width: pct(unusableFree) }} />
      </div>
    </section>
  );
});
