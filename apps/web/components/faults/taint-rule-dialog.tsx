'use client';
// A fault drill on a DRA device of a driver this gateway does not run: the fault is a
// DeviceTaintRule (cluster-wide). First a dry run (effect None); once kube-controller-manager has
// written what NoExecute would do into the rule's status, that message and the pods using the
// device are shown, and only then NoSchedule/NoExecute (a new POST on the same device: the newest
// fault's taint is the rule's) or deleting the rule (DELETE) are offered.
import { useMemo, useState } from 'react';
import type { DraTaintEffect } from '@plugboard/api';
import { podStatus } from '../../lib/node-view';
import { draDeviceKeyOf, draEvictionPreview, draFaultTarget, draTaintRuleView } from '../../lib/dra-view';
import { ConfirmDialog } from './confirm-dialog';
import { ReasonAndTtl, useFaultForm, type FaultDialogProps } from './fault-form';

type RuleChoice = 'clear' | 'NoSchedule' | 'NoExecute';

const STRENGTH: Record<DraTaintEffect, number> = { None: 0, NoSchedule: 1, NoExecute: 2 };

const ESCALATIONS: { value: 'NoSchedule' | 'NoExecute'; label: string; effect: string }[] = [
  {
    value: 'NoSchedule',
    label: 'Set the effect to NoSchedule',
    effect: 'The scheduler gives the device to no new claim; pods using it keep running.',
  },
  {
    value: 'NoExecute',
    label: 'Set the effect to NoExecute',
    effect: "kube-controller-manager's device taint eviction controller evicts the pods using the device.",
  },
];

export function TaintRuleFaultDialog({
  node,
  tileKey,
  pending,
  error,
  onSubmit,
  onCancel,
}: FaultDialogProps) {
  const d = node.dra?.devices[draDeviceKeyOf(tileKey) ?? ''];
  const view = useMemo(() => (d ? draTaintRuleView(node, d) : null), [node, d]);
  const preview = useMemo(() => (d ? draEvictionPreview(node, d) : []), [node, d]);
  const form = useFaultForm();
  const [choice, setChoice] = useState<RuleChoice>('clear');
  if (!d || !node.dra) return null;
  const target = draFaultTarget(node.dra, d);
  const where = (
    <p>
      Node <strong>{node.nodeName}</strong>, DRA driver <span className="mono">{d.driver}</span> (not run by
      this gateway), pool <span className="mono">{d.pool}</span>, device{' '}
      <span className="mono">{d.name}</span>.
    </p>
  );

  if (!view) {
    return (
      <ConfirmDialog
        title={`Dry-run a DeviceTaintRule on ${d.name} (DRA, ${d.driver})?`}
        confirmLabel="Create the rule as a dry run (effect None)"
        pending={pending}
        error={error ?? form.error}
        onCancel={onCancel}
        onConfirm={() => {
          const req = form.request({
            kind: 'inject',
            tileKey,
            resource: target.resource,
            deviceId: target.deviceId,
            taint: 'None',
            ruleEffect: 'None',
          });
          if (req) onSubmit(req);
        }}
      >
        {where}
        <p className="notice warn">
          This gateway does not run the driver, so it cannot report the device unhealthy. The simulated fault
          is a <strong>DeviceTaintRule</strong> — a cluster-wide API object (resource.k8s.io) — named{' '}
          <span className="mono">plugboard-fault-…</span> (a hash of driver, pool and device), selecting only
          this device. It starts as a <strong>dry run</strong> (effect None): nothing is scheduled differently
          and nothing is evicted; kube-controller-manager writes in the rule&apos;s status what NoExecute
          would do. NoSchedule and NoExecute are offered once that status is shown.
        </p>
        <ReasonAndTtl {...form.fields} />
        <h3>Pods using this device now</h3>
        <PodList pods={preview.map((p) => ({ key: p.key, status: p.pod ? podStatus(p.pod) : null }))} />
      </ConfirmDialog>
    );
  }

  const status = view.status;
  const effect = view.fault.taint ?? 'None';
  const condition = status?.condition ?? null;
  // Stronger effects only once the dry run's (or the current effect's) status was written.
  const escalations = condition ? ESCALATIONS.filter((e) => STRENGTH[e.value] > STRENGTH[effect]) : [];
  const chosen: RuleChoice = escalations.some((e) => e.value === choice) ? choice : 'clear';
  const pods = status?.podsUsingDevice ?? [];
  const evicting = chosen === 'NoExecute' ? pods.length : 0;
  return (
    <ConfirmDialog
      title={`DeviceTaintRule ${view.name} on ${d.name} (DRA, ${d.driver})`}
      confirmLabel={
        chosen === 'clear'
          ? 'Delete the DeviceTaintRule'
          : chosen === 'NoExecute' && evicting > 0
            ? `Set NoExecute and evict ${evicting} ${evicting === 1 ? 'pod' : 'pods'}`
            : `Set ${chosen}`
      }
      danger={chosen !== 'clear'}
      pending={pending}
      error={error ?? form.error}
      onCancel={onCancel}
      onConfirm={() => {
        if (chosen === 'clear') {
          onSubmit({
            kind: 'clear',
            tileKey,
            resource: view.fault.resource,
            deviceId: view.fault.deviceId,
            reason: view.fault.reason,
            ttlSeconds: null,
          });
          return;
        }
        const req = form.request({
          kind: 'inject',
          tileKey,
          resource: target.resource,
          deviceId: target.deviceId,
          taint: chosen,
          ruleEffect: chosen,
        });
        if (req) onSubmit(req);
      }}
    >
      {where}
      <p>
        The simulated fault is a <strong>DeviceTaintRule</strong> (a cluster-wide API object) named{' '}
        <span className="mono">{view.name}</span>. Effect as the API server reports it:{' '}
        <strong>{status?.observed ? (status.effect ?? 'unknown') : 'not observed yet'}</strong>
        {status?.observed && status.effect !== effect ? ` (asked for ${effect})` : ''}.
      </p>
      <h3>Status written by kube-controller-manager</h3>
      {condition ? (
        <p className="notice info" data-testid="taint-rule-status">
          <span className="mono">EvictionInProgress={condition.status}</span> ({condition.reason}
          {condition.current ? '' : ', computed for an earlier spec'}): {condition.message}
        </p>
      ) : (
        <p className="notice info" data-testid="taint-rule-status">
          Not written yet: kube-controller-manager&apos;s device taint eviction controller has not reported on
          this rule.
        </p>
      )}
      <h3>Pods using this device</h3>
      <PodList
        pods={pods.map((key) => {
          const pod = node.pods[key];
          return { key, status: pod ? podStatus(pod) : null };
        })}
      />
      <fieldset style={{ marginTop: '0.75rem' }}>
        <legend>Next step</legend>
        {escalations.map((c) => (
          <Choice
            key={c.value}
            value={c.value}
            label={c.label}
            effect={c.effect}
            chosen={chosen}
            onChoose={setChoice}
          />
        ))}
        <Choice
          value="clear"
          label="Delete the DeviceTaintRule (clear the fault)"
          effect="Pods already evicted do not come back by themselves."
          chosen={chosen}
          onChoose={setChoice}
        />
        {!condition && (
          <p className="muted">NoSchedule and NoExecute are offered once the status is written.</p>
        )}
      </fieldset>
      {chosen !== 'clear' && <ReasonAndTtl {...form.fields} />}
    </ConfirmDialog>
  );
}

function Choice({
  value,
  label,
  effect,
  chosen,
  onChoose,
}: {
  value: RuleChoice;
  label: string;
  effect: string;
  chosen: RuleChoice;
  onChoose: (v: RuleChoice) => void;
}) {
  return (
    <div style={{ margin: '0.25rem 0' }}>
      <label>
        <input
          type="radio"
          name="taint-rule-step"
          value={value}
          checked={chosen === value}
          aria-describedby={`taint-rule-step-${value}`}
          onChange={() => onChoose(value)}
        />
        {label}
      </label>
      <div id={`taint-rule-step-${value}`} className="muted" style={{ marginLeft: '1.6rem' }}>
        {effect}
      </div>
    </div>
  );
}

function PodList({ pods }: { pods: { key: string; status: string | null }[] }) {
  if (pods.length === 0) return <p>No pod uses this device.</p>;
  return (
    <ul aria-label="Pods using this device">
      {pods.map((p) => (
        <li key={p.key}>
          <span className="mono">{p.key}</span>{' '}
          <span className="muted">({p.status ?? 'not listed on this node'})</span>
        </li>
      ))}
    </ul>
  );
}
