// Who serves the resources of one node or of the cluster, counted from summaries: resources (one
// per node and resource) and their devices (the kubelet's capacity) served by the gateways' own
// plugins, and those the gateways only observe (another device plugin's, or the Node status alone).
import type { NodeSummary } from '@plugboard/api';
import { servedByOf } from '../../lib/node-view';

export interface ServedCounts {
  here: { resources: number; devices: number };
  observed: { resources: number; devices: number };
}

export function resourcesServed(summaries: readonly NodeSummary[]): ServedCounts {
  const out: ServedCounts = { here: { resources: 0, devices: 0 }, observed: { resources: 0, devices: 0 } };
  for (const s of summaries) {
    for (const r of Object.values(s.resources)) {
      const t = servedByOf(r) === 'plugin' ? out.here : out.observed;
      t.resources += 1;
      t.devices += r.capacity;
    }
  }
  return out;
}

const n = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/** "3 resources served here (12 devices), 1 observed (4 devices)". */
export function servedWords(c: ServedCounts): string {
  return (
    `${n(c.here.resources, 'resource', 'resources')} served here (${n(c.here.devices, 'device', 'devices')}), ` +
    `${c.observed.resources} observed (${n(c.observed.devices, 'device', 'devices')})`
  );
}
