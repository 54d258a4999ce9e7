'use client';
// "Try to place": describe a pod — devices per resource, whole CPUs, memory — and see where the
// kubelet would put it or why it would refuse it: the gateway's prediction, made with the kubelet's
// own rules from sysfs, the kubelet's configz and PodResources, on any node. With kubelet-sim behind
// the gateway the pod can then be admitted for real; it appears through the stream like any other,
// and nothing here changes the map optimistically.
import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import type { AdmissionView, NodeSnapshot } from '@plugboard/api';
import { apiFetch, ApiError, nodeApiPath } from '../../lib/api';
import { podFromRequest, type PodRequest } from '../../lib/placement-view';
import { AdmissionDetails } from './why-here';

const POLICIES = ['none', 'best-effort', 'restricted', 'single-numa-node'] as const;

function errorText(err: unknown): string {
  if (err instanceof ApiError) return `${err.title}: ${err.detail}`;
  return err instanceof Error ? err.message : String(err);
}

export function TryPlace({ node, token }: { node: NodeSnapshot; token: string | null }) {
  const resources = Object.keys(node.resources).sort();
  const [req, setReq] = useState<PodRequest>({
    namespace: 'default',
    name: 'try-1',
    devices: Object.fromEntries(resources.map((r, i) => [r, i === 0 ? 1 : 0])),
    cpus: 2,
    memoryGiB: 1,
  });
  const [previewFor, setPreviewFor] = useState<string | null>(null);
  // "" = the node's own policy; anything else is a what-if for the preview only.
  const [whatIf, setWhatIf] = useState('');
  const body = () => JSON.stringify(podFromRequest(req)) + whatIf;
  const preview = useMutation({
    mutationFn: () =>
      apiFetch<AdmissionView>(
        nodeApiPath(
          node.nodeName,
          whatIf ? `placement?${new URLSearchParams({ topologyManagerPolicy: whatIf })}` : 'placement',
        ),
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(podFromRequest(req)),
          token,
        },
      ),
    onSuccess: () => setPreviewFor(body()),
  });
  const admit = useMutation({
    mutationFn: () =>
      apiFetch<unknown>(nodeApiPath(node.nodeName, 'pods'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(podFromRequest(req)),
        token,
      }),
  });
  const stale = previewFor !== null && previewFor !== body();
  const placement = node.topology?.placement;
  if (!placement?.available) {
    return (
      <p className="notice info">
        Try to place is unavailable: {placement?.reason ?? 'this gateway does not support it'}.
      </p>
    );
  }
  // Gateways older than the prediction admit whenever they preview.
  const admitPath = placement.admit ?? { available: true, reason: null };
  const num = (v: string) => Math.max(0, Math.floor(Number(v) || 0));
  return (
    <section className="card" aria-labelledby="try-place">
      <h3 id="try-place">Try to place a pod</h3>
      <form
        className="try-place"
        onSubmit={(e) => {
          e.preventDefault();
          admit.reset();
          preview.mutate();
        }}
      >
        <label>
          Namespace
          <input
            value={req.namespace}
            onChange={(e) => setReq({ ...req, namespace: e.target.value.trim() })}
          />
        </label>
        <label>
          Name
          <input value={req.name} onChange={(e) => setReq({ ...req, name: e.target.value.trim() })} />
        </label>
        {resources.map((r) => (
          <label key={r}>
            <span className="mono">{r}</span>
            <input
              type="number"
              min={0}
              value={req.devices[r] ?? 0}
              onChange={(e) => setReq({ ...req, devices: { ...req.devices, [r]: num(e.target.value) } })}
            />
          </label>
        ))}
        <label>
          Whole CPUs
          <input
            type="number"
            min={0}
            value={req.cpus}
            onChange={(e) => setReq({ ...req, cpus: num(e.target.value) })}
          />
        </label>
        <label>
          Memory (GiB)
          <input
            type="number"
            min={0}
            value={req.memoryGiB}
            onChange={(e) => setReq({ ...req, memoryGiB: num(e.target.value) })}
          />
        </label>
        <label>
          Preview under policy
          <select value={whatIf} onChange={(e) => setWhatIf(e.target.value)}>
            <option value="">
              the node&apos;s ({node.topology?.kubelet?.topologyManagerPolicy ?? 'unknown'})
            </option>
            {POLICIES.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <div className="row">
          <button type="submit" disabled={preview.isPending}>
            {preview.isPending ? 'Checking…' : 'Preview placement'}
          </button>
          <button
            type="button"
            disabled={
              !admitPath.available ||
              !preview.data ||
              stale ||
              whatIf !== '' ||
              preview.data.result !== 'admitted' ||
              admit.isPending
            }
            onClick={() => admit.mutate()}
          >
            {admit.isPending ? 'Admitting…' : 'Admit pod'}
          </button>
        </div>
        <p className="muted">
          CPUs and memory together make the pod Guaranteed, so it gets exclusive CPUs and pinned memory.
          Another policy only changes the preview: admitting always uses the node&apos;s.
          {node.gateway.authRequired && !token ? ' Admitting needs the gateway token (enter it above).' : ''}
        </p>
        {!admitPath.available && (
          <p className="muted" data-testid="admit-unavailable">
            Admitting is unavailable: {admitPath.reason ?? 'this gateway cannot admit pods'}.
          </p>
        )}
      </form>
      <div role="status" aria-live="polite" data-testid="placement-result">
        {preview.isError && <p className="notice warn">{errorText(preview.error)}</p>}
        {preview.data && !stale && (
          <>
            <h4>
              {preview.data.source === 'prediction' ? 'Predicted placement' : 'Preview'} for{' '}
              <span className="mono">{`${req.namespace}/${req.name}`}</span>
            </h4>
            {preview.data.source === 'prediction' && (
              <p className="notice info" data-testid="prediction-label">
                A prediction: the gateway applied the kubelet&apos;s Topology, CPU and Memory Manager rules to
                the node as it reads it (sysfs, the kubelet&apos;s configz, PodResources, the plugins&apos;
                preferred allocation). The kubelet decides when the pod arrives.
                {preview.data.notes && preview.data.notes.length > 0 && (
                  <> Not taken into account: {preview.data.notes.join('; ')}.</>
                )}
              </p>
            )}
            <AdmissionDetails admission={preview.data} headingId="try-place" />
          </>
        )}
        {stale && (
          <p className="muted">The form changed since the preview: preview again before admitting.</p>
        )}
        {admit.isSuccess && (
          <p className="notice info">
            Admitted <span className="mono">{`${req.namespace}/${req.name}`}</span>; it appears on the map
            once the stream reports it.
          </p>
        )}
        {admit.isError && <p className="notice warn">{errorText(admit.error)}</p>}
      </div>
    </section>
  );
}
