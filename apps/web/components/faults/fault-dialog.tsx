'use client';
// Inject or clear a simulated fault on one physical device: names the target, previews the pods
// that will be affected (blast radius), takes a reason and an optional TTL. For a DRA device it also
// offers the taint the driver puts on the faulted device and, for NoExecute, names the pods that
// would be evicted before anything is sent.
import { useMemo, useState } from 'react';
import { blastRadius, faultsForDevice, podStatus, tileDevices } from '../../lib/node-view';
import { draDeviceKeyOf, draEvictionPreview, draFaultsForDevice, draFaultTarget } from '../../lib/dra-view';
import { ConfirmDialog } from './confirm-dialog';
import { ReasonAndTtl, useFaultForm, type FaultDialogProps } from './fault-form';
import { TaintRuleFaultDialog } from './taint-rule-dialog';

export type { FaultDialogProps, FaultRequest } from './fault-form';

export function FaultDialog(props: FaultDialogProps) {
  return draDeviceKeyOf(props.tileKey) !== null ? (
    <DraFaultDialog {...props} />
  ) : (
    <DevicePluginFaultDialog {...props} />
  );
}

function DevicePluginFaultDialog({ node, tileKey, pending, error, onSubmit, onCancel }: FaultDialogProps) {
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
  const form = useFaultForm();
  if (!first) return null;
  const deviceId = first.replicaOf ?? first.id;
  const clearing = devices.some((d) => d.faulted) || faults.length > 0;

  return (
    <ConfirmDialog
      title={
        clearing ? `Clear the simulated fault on ${deviceId}?` : `Inject a simulated fault on ${deviceId}?`
      }
      confirmLabel={clearing ? 'Clear simulated fault' : 'Inject simulated fault'}
      danger={!clearing}
      pending={pending}
      error={error ?? form.error}
      onCancel={onCancel}
      onConfirm={() => {
        const req = form.request({
          kind: clearing ? 'clear' : 'inject',
          tileKey,
          resource: first.resource,
          deviceId,
        });
        if (req) onSubmit(req);
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
      {!clearing && <ReasonAndTtl {...form.fields} />}
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

type TaintChoice = 'none' | 'NoSchedule' | 'NoExecute';

const TAINT_CHOICES: { value: TaintChoice; label: string; effect: string }[] = [
  {
    value: 'none',
    label: 'No taint (health only)',
    effect:
      'The kubelet is told Unhealthy on the health stream and the pods using the device show it in their status; nothing is evicted.',
  },
  {
    value: 'NoSchedule',
    label: 'NoSchedule',
    effect:
      'Also taints the device in its ResourceSlice: no new claim is allocated it; pods using it keep running.',
  },
  {
    value: 'NoExecute',
    label: 'NoExecute',
    effect:
      'Also taints the device in its ResourceSlice: no new claim is allocated it, and the pods using it are evicted.',
  },
];

function DraFaultDialog({ node, tileKey, pending, error, onSubmit, onCancel }: FaultDialogProps) {
  const d = node.dra?.devices[draDeviceKeyOf(tileKey) ?? ''];
  const faults = useMemo(() => (d ? draFaultsForDevice(node, d) : []), [node, d]);
  const pods = useMemo(() => (d ? draEvictionPreview(node, d) : []), [node, d]);
  const form = useFaultForm();
  const [taint, setTaint] = useState<TaintChoice>('none');
  const target = d && node.dra ? draFaultTarget(node.dra, d) : null;
  if (!d || !target) return null;
  if (target.via === 'taint-rule')
    return (
      <TaintRuleFaultDialog
        node={node}
        tileKey={tileKey}
        pending={pending}
        error={error}
        onSubmit={onSubmit}
        onCancel={onCancel}
      />
    );
  const clearing = d.fault !== null || faults.length > 0;
  const evicting = !clearing && taint === 'NoExecute';
  const n = pods.length;
  return (
    <ConfirmDialog
      title={
        clearing
          ? `Clear the simulated fault on ${d.name} (DRA, ${d.driver})?`
          : `Inject a simulated fault on ${d.name} (DRA, ${d.driver})?`
      }
      confirmLabel={
        clearing
          ? 'Clear simulated fault'
          : evicting && n > 0
            ? `Inject simulated fault and evict ${n} ${n === 1 ? 'pod' : 'pods'}`
            : 'Inject simulated fault'
      }
      danger={!clearing}
      pending={pending}
      error={error ?? form.error}
      onCancel={onCancel}
      onConfirm={() => {
        const req = form.request({
          kind: clearing ? 'clear' : 'inject',
          tileKey,
          resource: target.resource,
          deviceId: target.deviceId,
          taint: taint === 'none' ? null : taint,
        });
        if (req) onSubmit(req);
      }}
    >
      <p>
        Node <strong>{node.nodeName}</strong>, DRA driver <span className="mono">{d.driver}</span>, pool{' '}
        <span className="mono">{d.pool}</span>, device <span className="mono">{d.name}</span>.
      </p>
      <p className="notice warn">
        {clearing
          ? 'The driver stops overriding this device: the kubelet is told Healthy on the health stream and the taint the fault added leaves the ResourceSlice. Pods already evicted do not come back by themselves.'
          : "This is a simulated fault: the driver reports the device Unhealthy on the kubelet's health stream (and taints it if you choose so below). The hardware is not touched."}
      </p>
      {!clearing && (
        <>
          <ReasonAndTtl {...form.fields} />
          <fieldset style={{ marginTop: '0.75rem' }}>
            <legend>Taint the device</legend>
            {TAINT_CHOICES.map((c) => (
              <div key={c.value} style={{ margin: '0.25rem 0' }}>
                <label>
                  <input
                    type="radio"
                    name="fault-taint"
                    value={c.value}
                    checked={taint === c.value}
                    aria-describedby={`fault-taint-${c.value}`}
                    onChange={() => setTaint(c.value)}
                  />
                  {c.label}
                </label>
                <div id={`fault-taint-${c.value}`} className="muted" style={{ marginLeft: '1.6rem' }}>
                  {c.effect}
                </div>
              </div>
            ))}
          </fieldset>
        </>
      )}
      <h3>
        {evicting
          ? 'Pods that will be evicted'
          : clearing
            ? 'Pods using this device'
            : 'Pods that will be affected'}
      </h3>
      {n === 0 ? (
        <p>{evicting ? 'No pod uses this device: nothing is evicted.' : 'No pod uses this device.'}</p>
      ) : (
        <ul aria-label={evicting ? 'Pods that will be evicted' : 'Affected pods'}>
          {pods.map((p) => (
            <li key={p.key}>
              <span className="mono">{p.key}</span>{' '}
              <span className="muted">({p.pod ? podStatus(p.pod) : 'not listed on this node'})</span>
            </li>
          ))}
        </ul>
      )}
    </ConfirmDialog>
  );
}
