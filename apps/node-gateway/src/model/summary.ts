// The counts-only view of a snapshot (GET /api/v1/summary, stream `?view=summary`) for cluster views.
import type { NodeSnapshot, NodeSummary } from '@plugboard/api';
import { summarizeDra } from './dra.js';

export function summarize(s: NodeSnapshot): NodeSummary {
  const resources: NodeSummary['resources'] = {};
  let unhealthyDevices = 0;
  for (const r of Object.values(s.resources)) {
    resources[r.name] = {
      ...r.kubelet,
      ...(r.servedBy ? { servedBy: r.servedBy } : {}),
      ...(r.observed ? { observed: r.observed } : {}),
      apiServer: r.apiServer,
      registered: r.registration.phase === 'registered',
      registration: r.registration.phase,
    };
    unhealthyDevices += r.kubelet.unhealthy;
  }
  return {
    schema: 1,
    nodeName: s.nodeName,
    updatedAt: s.updatedAt,
    resources,
    unhealthyDevices,
    activeFaults: Object.keys(s.faults).length,
    faultsEnabled: s.gateway.faultsEnabled,
    sources: s.sources,
    ...(s.dra ? { dra: summarizeDra(s.dra) } : {}),
    ...(s.extendedResources ? { extendedResources: s.extendedResources } : {}),
  };
}
