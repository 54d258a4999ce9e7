// Capacity vs allocatable per resource with the "why": which devices are unhealthy, since when,
// why, whether a simulated fault holds them and which pods still hold them; plus registration.
import { memo, useMemo } from 'react';
import type { NodeSnapshot, RegistrationPhase, ResourceState } from '@plugboard/api';
import { explainAllocatable, servedByOf } from '../../lib/node-view';
import { formatAgo, formatTime } from '../../lib/format';
import { ResourceSummary } from '../resource-summary';
import { SimulatedBadge } from '../health-badge';

function registrationTone(phase: RegistrationPhase): 'ok' | 'warn' | 'bad' {
  switch (phase) {
    case 'registered':
      return 'ok';
    case 'starting':
    case 'registering':
    case 'waiting-for-kubelet':
      return 'warn';
    case 'failed':
    case 'stopped':
      return 'bad';
  }
}

function Registration({ r }: { r: ResourceState }) {
  const reg = r.registration;
  if (servedByOf(r) !== 'plugin') {
    // Register and ListAndWatch are between that plugin and the kubelet: only the phase shows.
    return (
      <p className="row" style={{ margin: '0.3rem 0', fontSize: '0.92em' }}>
        <span className={`badge ${registrationTone(reg.phase)}`}>
          {reg.phase === 'registered' ? '✓' : '!'} {reg.phase}
        </span>
        <span className="muted">
          registration and ListAndWatch are between that plugin and the kubelet: not reported
        </span>
        {reg.error && <span className={`badge ${registrationTone(reg.phase)}`}>{reg.error}</span>}
      </p>
    );
  }
  return (
    <p className="row" style={{ margin: '0.3rem 0', fontSize: '0.92em' }}>
      <span className={`badge ${registrationTone(reg.phase)}`}>
        {reg.phase === 'registered' ? '✓' : '!'} {reg.phase}
      </span>
      {reg.waitingSince && <span>not held by the kubelet since {formatTime(reg.waitingSince)}</span>}
      <span>registered {reg.registeredAt ? formatTime(reg.registeredAt) : 'never'}</span>
      <span>kubelet restarts seen {reg.kubeletRestartsSeen}</span>
      <span>
        last ListAndWatch update {reg.lastListAndWatchSend ? formatAgo(reg.lastListAndWatchSend) : 'never'}
      </span>
      {reg.error && <span className={`badge ${registrationTone(reg.phase)}`}>{reg.error}</span>}
    </p>
  );
}

function ResourceCard({ node, r }: { node: NodeSnapshot; r: ResourceState }) {
  const why = useMemo(() => explainAllocatable(node, r), [node, r]);
  return (
    <article className="card">
      <ResourceSummary
        name={r.name}
        counts={r.kubelet}
        apiServer={r.apiServer}
        registration={r.registration.phase}
        servedBy={servedByOf(r)}
        observedNote={r.observed?.note ?? null}
      />
      {r.replicas > 1 && <p className="muted">Shared: {r.replicas} replicas per physical device.</p>}
      <Registration r={r} />
      {why.length > 0 && (
        <details open>
          <summary>
            Why allocatable is {r.kubelet.allocatable} of {r.kubelet.capacity}: {why.length} unhealthy
          </summary>
          <ul>
            {why.map(({ device, fault, heldBy }) => (
              <li key={device.key}>
                <span className="mono">{device.id}</span> Unhealthy since {formatTime(device.since)}
                {device.reason ? ` — ${device.reason}` : ''} {fault && <SimulatedBadge />}
                {fault?.expiresAt && <span className="muted"> (expires {formatTime(fault.expiresAt)})</span>}
                {heldBy.length > 0 ? (
                  <span className="badge bad" style={{ marginLeft: '0.4em' }}>
                    still held by {heldBy.join(', ')}
                  </span>
                ) : (
                  <span className="muted"> — not allocated</span>
                )}
              </li>
            ))}
          </ul>
        </details>
      )}
    </article>
  );
}

export const ResourcePanel = memo(function ResourcePanel({ node }: { node: NodeSnapshot }) {
  const resources = Object.values(node.resources).sort((a, b) => a.name.localeCompare(b.name));
  if (resources.length === 0) {
    return (
      <p className="notice warn">
        No extended resources: no device plugin is configured or running on this gateway, and the kubelet
        reports none.
      </p>
    );
  }
  return (
    <div className="grid">
      {resources.map((r) => (
        <ResourceCard key={r.name} node={node} r={r} />
      ))}
    </div>
  );
});
