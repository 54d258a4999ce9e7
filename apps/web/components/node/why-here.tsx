// "Why here?" for one pod: where its devices, exclusive CPUs and memory sit, the Topology Manager
// policy and scope in force, every hint each manager gave, the merged hint and the verdict, and
// the plugin's own reason for its preferred allocation. Also renders a dry-run decision for the
// "try to place" form, so a preview reads exactly like an admitted pod.
import type { AdmissionView, NodeSnapshot, PodState } from '@plugboard/api';
import { admissionSummary, hintLabel, hintsLabel } from '../../lib/placement-view';
import { formatBytes, formatIdRanges } from '../../lib/format';

const PROVIDER: Record<string, string> = {
  devices: 'Device manager',
  cpu: 'CPU Manager',
  memory: 'Memory Manager',
};

export function AdmissionDetails({ admission, headingId }: { admission: AdmissionView; headingId: string }) {
  return (
    <>
      <p>
        <span className={`badge ${admission.result === 'admitted' ? 'ok' : 'bad'}`}>
          {admission.result === 'admitted' ? '✓' : '✕'} {admissionSummary(admission)}
        </span>
      </p>
      {admission.steps.length === 0 && (
        <p className="muted">Topology Manager policy none: no hints are merged and nothing is aligned.</p>
      )}
      {admission.steps.map((s, i) => (
        <div key={i} className="table-wrap">
          <table aria-describedby={headingId}>
            <caption>
              Hints for {s.container === null ? 'the whole pod (scope pod)' : `container ${s.container}`}
            </caption>
            <thead>
              <tr>
                <th scope="col">Manager</th>
                <th scope="col">Resource</th>
                <th scope="col">Hints (★ preferred)</th>
              </tr>
            </thead>
            <tbody>
              {s.hints.map((h, j) => (
                <tr key={j}>
                  <td>{PROVIDER[h.provider] ?? h.provider}</td>
                  <td className="mono">{h.resource ?? '—'}</td>
                  <td className="mono">{hintsLabel(h.hints)}</td>
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr>
                <th scope="row" colSpan={2}>
                  Merged ({admission.policy})
                </th>
                <td>
                  {hintLabel(s.merged)} — {s.admit ? 'admit' : 'reject'}
                </td>
              </tr>
            </tfoot>
          </table>
        </div>
      ))}
      {admission.containers.length > 0 && (
        <ul>
          {admission.containers.map((c) => (
            <li key={c.container}>
              <span className="mono">{c.container}</span>: affinity{' '}
              {c.affinity ? `NUMA ${c.affinity.join('+')}` : 'none'}
              {c.devices.map((d) => (
                <span key={d.resource}>
                  {' '}
                  · {d.resource}{' '}
                  <span className="mono">
                    {d.deviceIds
                      .map((id) => `${id} (NUMA ${(d.numaNodes[id] ?? []).join('+') || '–'})`)
                      .join(', ')}
                  </span>
                </span>
              ))}
              {c.cpuIds.length > 0 && (
                <span>
                  {' '}
                  · CPUs <span className="mono">{formatIdRanges(c.cpuIds)}</span>
                </span>
              )}
              {c.memory.map((m) => (
                <span key={m.type}>
                  {' '}
                  · {m.type} {formatBytes(m.bytes)} on NUMA {m.numaNodes.join('+')}
                </span>
              ))}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

export function WhyHere({ node, pod }: { node: NodeSnapshot; pod: PodState }) {
  const t = pod.topology;
  const k = node.topology?.kubelet ?? null;
  const headingId = `why-${pod.key.replace(/[^a-z0-9-]/gi, '-')}`;
  return (
    <section className="card why-here" aria-labelledby={headingId} data-pod={pod.key}>
      <h3 id={headingId}>
        Why here? <span className="mono">{pod.key}</span>
      </h3>
      <p>
        <span
          className={`badge ${pod.numaAlignment.verdict === 'aligned' ? 'ok' : pod.numaAlignment.verdict === 'spread' ? 'warn' : 'info'}`}
        >
          {pod.numaAlignment.verdict}
        </span>{' '}
        {pod.numaAlignment.reason}
      </p>
      <p className="muted">
        {k
          ? `Topology Manager ${k.topologyManagerPolicy} (scope ${k.topologyManagerScope}) · CPU Manager ${k.cpuManagerPolicy} · Memory Manager ${k.memoryManagerPolicy} (from ${k.source === 'configz' ? "the kubelet's configz" : "kubelet-sim's control API"})`
          : `Topology Manager policy unknown: ${node.topology?.kubeletReason ?? 'this gateway does not report it'}.`}
      </p>
      {t?.admission ? (
        <AdmissionDetails admission={t.admission} headingId={headingId} />
      ) : (
        <p className="muted">
          The kubelet&apos;s hints for this pod are not available (a real kubelet only logs them; kubelet-sim
          reports them).
        </p>
      )}
      <h4>Plugin preferred allocation</h4>
      {t && t.preferredAllocations.length > 0 ? (
        <ul>
          {t.preferredAllocations.map((p) => (
            <li key={`${p.container}/${p.resource}`}>
              <span className="mono">{p.container}</span> · {p.resource}:{' '}
              <span className="mono">{p.deviceIds.join(', ')}</span> — {p.reason}
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">
          No GetPreferredAllocation answer seen for this pod&apos;s devices (the kubelet asks only when more
          aligned devices are free than requested, and only plugins that offer it).
        </p>
      )}
    </section>
  );
}
