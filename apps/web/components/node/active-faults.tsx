// The faults the gateway holds, as the node's stream reports them, each with where it stands
// against the kubelet (told Unhealthy, pending, device absent, failed) and why when not active.
import type { FaultState, NodeSnapshot } from '@plugboard/api';
import { formatTime } from '../../lib/format';

/**
 * What each fault's state means, in words: to the kubelet; for a DeviceTaintRule fault (a DRA driver
 * this gateway does not run) the kubelet is told nothing: 'active' is the rule observed with its effect.
 */
function faultStateText(f: FaultState): string {
  if (f.taintRule && f.state === 'active') return `DeviceTaintRule ${f.taintRule.name} observed`;
  return FAULT_STATE_TEXT[f.state];
}

/** What each fault's state means to the kubelet, in words. */
const FAULT_STATE_TEXT: Record<FaultState['state'], string> = {
  active: 'kubelet told Unhealthy',
  pending: 'pending',
  'device-absent': 'device absent',
  failed: 'failed',
};

export function ActiveFaults({ node }: { node: NodeSnapshot }) {
  const faults = Object.values(node.faults).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  return (
    <section aria-labelledby="active-faults" className="card" style={{ marginBottom: '0.75rem' }}>
      <h3 id="active-faults">Active simulated faults ({faults.length})</h3>
      {faults.length === 0 ? (
        <p className="muted">None.</p>
      ) : (
        <ul>
          {faults.map((f) => (
            <li key={f.id} data-fault-state={f.state}>
              <span className="badge warn">simulated</span> <span className="mono">{f.deviceId}</span> (
              {f.resource}) — {f.reason}; since {formatTime(f.createdAt)}
              {f.expiresAt ? `, expires ${formatTime(f.expiresAt)}` : ', until cleared'}
              {f.scenarioId ? `, scenario ${f.scenarioId}` : ''}
              {f.taint ? `, taint ${f.taint}` : ''}.{' '}
              <span className={`badge${f.state === 'active' ? '' : ' warn'}`}>{faultStateText(f)}</span>
              {f.stateReason ? ` ${f.stateReason}` : ''}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
