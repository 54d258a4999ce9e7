// Why data may be missing or old: PodResources / Kubernetes API stale or disabled, plugins not
// registered or waiting for their kubelet. Shown above the node view so a 0 is never silent.
import type { NodeSnapshot, SourceState } from '@plugboard/api';
import { formatTime } from '../../lib/format';

function sourceText(label: string, s: SourceState): { cls: string; text: string } | null {
  switch (s.status) {
    case 'ok':
      return null;
    case 'stale':
      return {
        cls: 'warn',
        text: `${label} unavailable — showing data from ${formatTime(s.lastSuccess)}${s.reason ? `: ${s.reason}` : ''}`,
      };
    case 'connecting':
      return { cls: 'info', text: `${label}: connecting${s.reason ? ` (${s.reason})` : ''}` };
    case 'disabled':
      return { cls: 'info', text: `${label} disabled${s.reason ? `: ${s.reason}` : ''}` };
  }
}

export function SourceNotices({ node }: { node: NodeSnapshot }) {
  const notices = [
    sourceText('PodResources (pod assignments)', node.sources.podResources),
    sourceText('Kubernetes API (pod status, API server capacity)', node.sources.kubernetes),
  ].filter((n) => n !== null);
  const unregistered = Object.values(node.resources).filter((r) => r.registration.phase !== 'registered');
  return (
    <>
      {notices.map((n) => (
        <p key={n.text} className={`notice ${n.cls}`}>
          {n.text}
        </p>
      ))}
      {unregistered.map((r) =>
        r.registration.phase === 'waiting-for-kubelet' ? (
          <p key={r.name} className="notice warn">
            Plugin for <span className="mono">{r.name}</span> is waiting for the kubelet (since{' '}
            {formatTime(r.registration.waitingSince)})
            {r.registration.error ? `: ${r.registration.error}` : ''}. It registers again when the kubelet is
            back; until then the API server shows the kubelet&apos;s last report.
          </p>
        ) : (
          <p key={r.name} className={`notice ${r.registration.phase === 'failed' ? 'bad' : 'warn'}`}>
            Plugin for <span className="mono">{r.name}</span> is not registered with the kubelet (
            {r.registration.phase}){r.registration.error ? `: ${r.registration.error}` : ''}. The kubelet
            advertises none of its devices until it registers.
          </p>
        ),
      )}
    </>
  );
}
