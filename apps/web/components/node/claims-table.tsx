// The node's ResourceClaims: claim, requests (class, count or All, CEL selectors), devices (with a
// shared device's share ID and consumed capacity), pods, phase (prepared by the kubelet or not yet)
// and health; a pending claim says why, in the scheduler's words, beside what this node's drivers
// have free now. A node with hundreds of claims shows the pending ones and the first CLAIMS_SHOWN
// others until asked for all (or filtered): the rows below the fold cost the first render as much
// as the NUMA map's tiles do.
import { memo, useMemo, useState } from 'react';
import type { DraClaimState, DraState, NodeSnapshot } from '@plugboard/api';
import { claimsInOrder, describeAmounts, describeRequest, draTileKey } from '../../lib/dra-view';
import { podStatus } from '../../lib/node-view';
import { HealthBadge } from '../health-badge';
import { DeviceStatusView } from './device-status';

/** Claims shown besides the pending ones until "Show all" (or a filter narrows them). */
export const CLAIMS_SHOWN = 100;

const PHASE: Record<DraClaimState['phase'], { cls: string; text: string }> = {
  pending: { cls: 'warn', text: '! pending: not allocated' },
  allocated: { cls: 'info', text: 'allocated, reserved for no pod' },
  reserved: { cls: 'info', text: 'reserved, not prepared yet' },
  prepared: { cls: 'ok', text: '✓ prepared by the kubelet' },
};

function Requests({ claim }: { claim: DraClaimState }) {
  return (
    <>
      {claim.requests.map((r) => (
        <div key={r.name}>
          <span className="mono">{r.name}</span>: {describeRequest(r)}
          {r.adminAccess ? ' (admin access)' : ''}
          {r.selectors.map((s) => (
            <div key={s} className="muted">
              where <code>{s}</code>
            </div>
          ))}
          {r.firstAvailable.flatMap((sub) =>
            sub.selectors.map((s) => (
              <div key={`${sub.name}:${s}`} className="muted">
                {sub.name} where <code>{s}</code>
              </div>
            )),
          )}
        </div>
      ))}
    </>
  );
}

/** What this node's drivers could give a new claim now, as context for a pending claim. */
function freeNow(dra: DraState): string {
  const drivers = Object.values(dra.drivers).sort((a, b) => a.name.localeCompare(b.name));
  if (drivers.length === 0) return 'no DRA driver publishes devices on this node';
  return drivers
    .map((d) => {
      const c = d.counts;
      const why = [
        c.allocated > 0 ? `${c.allocated} allocated` : null,
        c.unhealthy > 0 ? `${c.unhealthy} unhealthy` : null,
        c.tainted > 0 ? `${c.tainted} tainted` : null,
      ].filter((x) => x !== null);
      return `${d.name}: ${c.free} of ${c.published} free${why.length ? ` (${why.join(', ')})` : ''}`;
    })
    .join('; ');
}

function ClaimRows({
  claim,
  node,
  onOpenDevice,
}: {
  claim: DraClaimState;
  node: NodeSnapshot;
  onOpenDevice: (tileKey: string) => void;
}) {
  const phase = PHASE[claim.phase];
  const pending = claim.phase === 'pending';
  return (
    <>
      <tr data-claim={claim.key} className={pending ? 'pending' : undefined}>
        <th scope="row" rowSpan={pending ? 2 : 1}>
          <span className="mono">{claim.name}</span>
          <div className="muted">{claim.namespace}</div>
          {claim.owner && (
            <div className="muted">
              from a template for <span className="mono">{claim.owner.pod}</span>
            </div>
          )}
          {claim.deleting && <span className="badge warn">being deleted</span>}
        </th>
        <td>
          <Requests claim={claim} />
        </td>
        <td>
          {claim.devices.length === 0 ? (
            <span className="muted">none allocated</span>
          ) : (
            claim.devices.map((d) => (
              <div key={`${d.request}/${d.deviceKey}`}>
                <span className="muted">{d.request}:</span>{' '}
                {node.dra?.devices[d.deviceKey] ? (
                  <button
                    type="button"
                    className="link mono"
                    aria-haspopup="dialog"
                    aria-label={`Open DRA device ${d.device} (${d.driver})`}
                    onClick={() => onOpenDevice(draTileKey(d.deviceKey))}
                  >
                    {d.device}
                  </button>
                ) : (
                  <span className="mono">{d.device}</span>
                )}{' '}
                <span className="muted mono">
                  ({d.driver}/{d.pool})
                </span>
                {d.adminAccess ? ' (admin access)' : ''}
                {d.shareID !== undefined && (
                  <>
                    {' '}
                    <span className="muted">
                      share <span className="mono">{d.shareID}</span>
                      {d.consumedCapacity && Object.keys(d.consumedCapacity).length > 0
                        ? `, ${describeAmounts(d.consumedCapacity)}`
                        : ''}
                    </span>
                  </>
                )}
                <div>
                  <DeviceStatusView status={d.status} device={d.device} />
                </div>
              </div>
            ))
          )}
        </td>
        <td>
          {claim.reservedFor.length === 0 ? (
            <span className="muted">reserved for no pod</span>
          ) : (
            claim.reservedFor.map((p) => (
              <div key={p}>
                <span className="mono">{p}</span>
                {node.pods[p] && <span className="muted"> ({podStatus(node.pods[p])})</span>}
              </div>
            ))
          )}
        </td>
        <td>
          <span className={`badge ${phase.cls}`}>{phase.text}</span>
        </td>
        <td>
          {claim.health ? <HealthBadge health={claim.health} /> : <span className="muted">not reported</span>}
        </td>
      </tr>
      {pending && (
        <tr data-claim-why={claim.key}>
          <td colSpan={5}>
            <strong>Why pending:</strong>{' '}
            {claim.pendingReason ??
              'the scheduler has not said why yet (no PodScheduled message on its pod).'}
            {node.dra && <div className="muted">Free on this node now: {freeNow(node.dra)}.</div>}
          </td>
        </tr>
      )}
    </>
  );
}

export const ClaimsTable = memo(function ClaimsTable({
  node,
  onOpenDevice,
}: {
  node: NodeSnapshot;
  onOpenDevice: (tileKey: string) => void;
}) {
  const dra = node.dra;
  const [text, setText] = useState('');
  const [all, setAll] = useState(false);
  const claims = useMemo(() => (dra ? claimsInOrder(dra) : []), [dra]);
  const matching = useMemo(() => {
    const t = text.trim().toLowerCase();
    return t
      ? claims.filter(
          (c) => c.key.toLowerCase().includes(t) || c.reservedFor.some((p) => p.toLowerCase().includes(t)),
        )
      : claims;
  }, [claims, text]);
  if (!dra) return null;
  if (claims.length === 0) {
    return (
      <p className="notice info">No ResourceClaim is allocated on this node or referenced by its pods.</p>
    );
  }
  const pending = claims.filter((c) => c.phase === 'pending').length;
  // Pending claims sort first and are never hidden by the cap.
  const limit = matching.filter((c) => c.phase === 'pending').length + CLAIMS_SHOWN;
  const shown = all ? matching : matching.slice(0, limit);
  return (
    <>
      <div className="row" style={{ marginBottom: '0.5rem' }}>
        {claims.length > CLAIMS_SHOWN && (
          <label>
            Claim or pod
            <input
              type="search"
              value={text}
              onChange={(e) => setText(e.target.value)}
              placeholder="namespace/name contains…"
            />
          </label>
        )}
        <span className="muted" role="status">
          {claims.length} {claims.length === 1 ? 'claim' : 'claims'}
          {pending > 0 ? `, ${pending} pending` : ''}
          {shown.length < matching.length ? ` · ${shown.length} shown` : ''}
        </span>
        {shown.length < matching.length && (
          <button type="button" onClick={() => setAll(true)}>
            Show all {matching.length} claims
          </button>
        )}
      </div>
      <div className="table-wrap">
        <table className="claims-table">
          <caption className="sr-only">ResourceClaims on {node.nodeName}</caption>
          <thead>
            <tr>
              <th scope="col">Claim</th>
              <th scope="col">Requests</th>
              <th scope="col">Devices</th>
              <th scope="col">Pods</th>
              <th scope="col">Phase</th>
              <th scope="col">Health</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((c) => (
              <ClaimRows key={c.key} claim={c} node={node} onOpenDevice={onOpenDevice} />
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
});
