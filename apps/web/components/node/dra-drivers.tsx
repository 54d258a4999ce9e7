// The node's DRA drivers beside its device-plugin resources: the honest DRA counts, whether the
// gateway runs the driver, its registration with the kubelet, whether the kubelet receives its
// health (open NodeWatchResources streams) and its ResourceSlice publication.
import { memo } from 'react';
import type { DraDriverState, DraState } from '@plugboard/api';
import { formatTime } from '../../lib/format';
import { DraCountsSummary } from '../dra-counts';

function DriverDetails({ driver }: { driver: DraDriverState }) {
  const reg = driver.registration;
  const pub = driver.publication;
  return (
    <ul className="muted" style={{ margin: '0.25rem 0 0', paddingLeft: '1.2rem' }}>
      <li>
        {driver.inProcess
          ? 'Run by this gateway: faults on its devices go through it.'
          : 'Seen through its ResourceSlices only: this gateway does not run it (no registration or health shown); a fault on its device is a DeviceTaintRule.'}
      </li>
      {reg && (
        <li>
          Kubelet registration: {reg.phase}
          {reg.registeredAt ? ` since ${formatTime(reg.registeredAt)}` : ''}
          {reg.error ? ` — ${reg.error}` : ''}
        </li>
      )}
      {driver.healthStreams !== null && (
        <li>
          {driver.healthStreams === 0
            ? 'No health stream open: the kubelet does not receive this driver’s device health.'
            : `Health streams open to the kubelet: ${driver.healthStreams}.`}
        </li>
      )}
      {pub && (
        <li>
          ResourceSlices: {pub.slices} (generation {pub.generation}), last published{' '}
          {formatTime(pub.lastPublishedAt)}
          {pub.error ? ` — publication failing: ${pub.error}` : ''}
        </li>
      )}
    </ul>
  );
}

export const DraDrivers = memo(function DraDrivers({ dra }: { dra: DraState }) {
  const drivers = Object.values(dra.drivers).sort((a, b) => a.name.localeCompare(b.name));
  if (drivers.length === 0) {
    return <p className="muted">No DRA driver publishes devices on this node.</p>;
  }
  return (
    <div className="grid">
      {drivers.map((d) => (
        <div key={d.name} className="card">
          <DraCountsSummary name={d.name} counts={d.counts}>
            {d.registration && d.registration.phase !== 'registered' && (
              <span className="badge warn">driver {d.registration.phase}</span>
            )}
            {d.healthStreams === 0 && <span className="badge warn">no health stream</span>}
            {d.publication?.error && <span className="badge bad">publication failing</span>}
          </DraCountsSummary>
          <DriverDetails driver={d} />
        </div>
      ))}
    </div>
  );
});
