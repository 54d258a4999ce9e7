// A partitionable device on the NUMA map (KEP-4815): its counter set — the physical device, which
// the API publishes only as counters in a ResourceSlice of its own — with the counters its allocated
// partitions use and what is left, in words, and the partitions that consume it as DRA tiles inside.
// The API reports neither a counter set's usage (summed by the gateway from the claims'
// allocations) nor a health of its own (each partition carries the driver's), and the tile says so.
import type { ReactNode } from 'react';
import type { DraCounterSetState, DraDeviceState } from '@plugboard/api';
import { describeUsage } from '../../lib/dra-view';

export function DraCounterSetTile({
  set,
  devices,
  children,
}: {
  set: DraCounterSetState;
  /** The partitions on this NUMA node (the counter set's `deviceKeys` may list more). */
  devices: readonly DraDeviceState[];
  /** The partitions' tiles. */
  children: ReactNode;
}) {
  const allocated = devices.filter((d) => d.allocations.length > 0).length;
  const counters = Object.entries(set.counters);
  const exhausted = counters.some(([, u]) => u.left === '0' || u.left.startsWith('-'));
  return (
    <li className="tile dra counter-set" data-counter-set={set.name}>
      <div className="counter-set-head">
        <span className="id mono">{set.name}</span>
        <span className="pod">
          partitioned device: counter set in ResourceSlice <span className="mono">{set.slice}</span>
        </span>
        {counters.length === 0 ? (
          <span className="pod">no counters published</span>
        ) : (
          <ul className="counters" aria-label={`Counters of ${set.name}`}>
            {counters.map(([name, u]) => (
              <li key={name}>{describeUsage(name, u)}</li>
            ))}
          </ul>
        )}
        <span className="pod">
          {allocated} of {devices.length} partitions allocated
          {exhausted ? ' · no counters left: no other partition fits' : ''}
        </span>
        <span className="pod">
          Used is summed from the claims&apos; allocations; the API reports no usage or health of a counter
          set (each partition has the driver&apos;s health).
        </span>
      </div>
      <ul className="tiles partitions" aria-label={`Partitions of ${set.name}`}>
        {children}
      </ul>
    </li>
  );
}
