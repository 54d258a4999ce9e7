// The parts both fault dialogs share: the request they hand to the page, their props, and the
// reason and TTL fields with their validation.
import { useState } from 'react';
import type { DraTaintEffect, FaultBody, NodeSnapshot } from '@plugboard/api';

export interface FaultRequest {
  kind: 'inject' | 'clear';
  tileKey: string;
  resource: string;
  deviceId: string;
  reason: string;
  ttlSeconds: number | null;
  /** DRA devices only: the taint to add with the fault (null: health only). Absent for device plugins. */
  taint?: FaultBody['taint'];
  /**
   * A fault that is a DeviceTaintRule (a driver this gateway does not run): the effect the stream
   * must show the rule with before the tile stops "waiting…".
   */
  ruleEffect?: DraTaintEffect;
}

export interface FaultDialogProps {
  node: NodeSnapshot;
  tileKey: string;
  pending: boolean;
  error: string | null;
  onSubmit: (req: FaultRequest) => void;
  onCancel: () => void;
}

const TTL_ERROR = 'TTL must be a whole number of seconds (1 or more), or empty.';
const DEFAULT_REASON = 'simulated fault from the dashboard';

interface ReasonAndTtlProps {
  reason: string;
  setReason: (v: string) => void;
  ttl: string;
  setTtl: (v: string) => void;
  ttlInvalid: boolean;
}

/**
 * The reason and TTL fields both dialogs share: `fields` for <ReasonAndTtl>, the TTL's error, and
 * `request(target)` — the request with reason and TTL filled in, or null while the TTL is invalid.
 */
export function useFaultForm() {
  const [reason, setReason] = useState(DEFAULT_REASON);
  const [ttl, setTtl] = useState('');
  const ttlNumber = ttl.trim() === '' ? null : Number(ttl);
  const ttlInvalid = ttlNumber !== null && (!Number.isInteger(ttlNumber) || ttlNumber < 1);
  return {
    fields: { reason, setReason, ttl, setTtl, ttlInvalid } satisfies ReasonAndTtlProps,
    error: ttlInvalid ? TTL_ERROR : null,
    request: (target: Omit<FaultRequest, 'reason' | 'ttlSeconds'>): FaultRequest | null =>
      ttlInvalid ? null : { ...target, reason: reason.trim() || DEFAULT_REASON, ttlSeconds: ttlNumber },
  };
}

export function ReasonAndTtl({ reason, setReason, ttl, setTtl, ttlInvalid }: ReasonAndTtlProps) {
  return (
    <div className="form-grid">
      <label htmlFor="fault-reason">Reason</label>
      <input id="fault-reason" value={reason} maxLength={512} onChange={(e) => setReason(e.target.value)} />
      <label htmlFor="fault-ttl">TTL (seconds, optional)</label>
      <input
        id="fault-ttl"
        inputMode="numeric"
        value={ttl}
        placeholder="until cleared"
        aria-invalid={ttlInvalid}
        onChange={(e) => setTtl(e.target.value)}
      />
    </div>
  );
}
