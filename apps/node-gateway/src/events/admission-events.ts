// Pods the kubelet refused at admission (it fails them with "Pod was rejected: …"): one ring event
// and one log line per pod, the first time the Kubernetes API shows it rejected.
import type { Logger } from 'pino';
import { newAdmissionRejections } from '../model/topology.js';
import type { GatewayEvents } from './gateway-events.js';

type Pods = Parameters<typeof newAdmissionRejections>[0];

/** Returns the function to call with every pod list the Kubernetes API delivers. */
export function admissionRejectionEvents(events: GatewayEvents, logger: Logger): (pods: Pods) => void {
  const seen = new Set<string>();
  return (pods) => {
    for (const r of newAdmissionRejections(pods, seen)) {
      events.ring({
        kind: 'admission-rejected',
        pod: { namespace: r.namespace, name: r.name, container: null },
        message: `${r.reason}: ${r.message}`,
      });
      logger.info({ pod: `${r.namespace}/${r.name}`, reason: r.reason }, 'pod rejected at admission');
    }
  };
}
