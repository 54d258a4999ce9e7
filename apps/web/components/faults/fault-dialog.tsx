'use client';
// Inject or clear a simulated fault on one physical device: names the target, previews the pods
// that will be affected (blast radius), takes a reason and an optional TTL.
import { useMemo, useState } from 'react';
import type { NodeSnapshot } from '@plugboard/api';
import { blastRadius, faultsForDevice, podStatus, tileDevices } from '../../lib/node-view';
import { ConfirmDialog } from './confirm-dialog';

export interface FaultRequest {
  kind: 'inject' | 'clear';
  tileKey: string;
  resource: string;
  deviceId: string;
  reason: string;
  ttlSeconds: number | null;
}

export function FaultDialog({
  node,
  tileKey,
  pending,
  error,
  onSubmit,
  onCancel,
}: {
  node: NodeSnapshot;
  tileKey: string;
  pending: boolean;
  error: string | null;
  onSubmit: (req: FaultRequest) => void;
  onCancel: () => void;
}) {
  const devices = useMemo(() => tileDevices(node, tileKey), [node, tileKey]);
  const first = devices[0];
  const affected = useMemo(
    () =>
      blastRadius(
        node,
        devices.map((d) => d.key),
      ),
    [node, devices],
  );
  const faults = useMemo(() => (first ? faultsForDevice(node, first) : []), [node, first]);
  const [reason, setReason] = useState('simulated fault from the dashboard');
  const [ttl, setTtl] = useState('');
  if (!first) return null;
  const deviceId = first.replicaOf ?? first.id;
  const clearing = devices.some((d) => d.faulted) || faults.length > 0;
  const ttlNumber = ttl.trim() === '' ? null : Number(ttl);
  const ttlInvalid = ttlNumber !== null && (!Number.isInteger(ttlNumber) || ttlNumber < 1);

  return (
    <ConfirmDialog
      title={
        clearing ? `Clear the simulated fault on ${deviceId}?` : `Inject a simulated fault on ${deviceId}?`
      }
      confirmLabel={clearing ? 'Clear simulated fault' : 'Inject simulated fault'}
      danger={!clearing}
      pending={pending}
      error={error ?? (ttlInvalid ? 'TTL must be a whole number of seconds (1 or more), or empty.' : null)}
      onCancel={onCancel}
      onConfirm={() => {
        if (ttlInvalid) return;
        onSubmit({
          kind: clearing ? 'clear' : 'inject',
          tileKey,
          resource: first.resource,
          deviceId,
          reason: reason.trim() || 'simulated fault from the dashboard',
          ttlSeconds: ttlNumber,
        });
      }}
    >
      <p>
        Node <strong>{node.nodeName}</strong>, resource <span className="mono">{first.resource}</span>, device{' '}
        <span className="mono">{deviceId}</span>
        {devices.length > 1 ? ` (${devices.length} replicas)` : ''}.
      </p>
      <p className="notice warn">
        {clearing
          ? 'The plugin stops overriding this device; the kubelet sees it Healthy again through ListAndWatch and allocatable recovers.'
          : 'This is a simulated fault: the plugin reports the device Unhealthy through ListAndWatch, the kubelet lowers allocatable, and pods holding it are flagged. The hardware is not touched.'}
      </p>
      {!clearing && (
        <div className="form-grid">
          <label htmlFor="fault-reason">Reason</label>
          <input
            id="fault-reason"
            value={reason}
            maxLength={512}
            onChange={(e) => setReason(e.target.value)}
          />
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
      )}
      <h3>{clearing ? 'Pods holding this device' : 'Pods that will be affected'}</h3>
      {affected.length === 0 ? (
        <p>No pod holds this device.</p>
      ) : (
        <ul aria-label="Affected pods">
          {affected.map((p) => (
            <li key={p.key}>
              <span className="mono">{p.key}</span> <span className="muted">({podStatus(p)})</span>
            </li>
          ))}
        </ul>
      )}
    </ConfirmDialog>
  );
}
