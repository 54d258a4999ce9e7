// Events for the resources this gateway observes (another device plugin's, model/observed.ts):
// what the kubelet shows changing, worded as it shows it. A resource appearing, or its capacity or
// allocatable moving (a device unhealthy, the plugin gone, its capacity set to 0 after the kubelet's
// grace period): a `registration` ring event and an ObservedResourceChanged Event on the Node. A
// device the kubelet names changing health (one a pod holds): the same `health` ring event and
// DeviceHealthy/DeviceUnhealthy Event as for the gateway's own devices. Nothing is said while a
// source is still connecting: its first answer is not a change.
import type { NodeSnapshot, ResourceState, SourceState } from '@plugboard/api';
import type { NodeModel } from '../model/node-model.js';
import { isOwnResource } from '../model/observed.js';
import { deviceHealthEvent, type GatewayEvents } from './gateway-events.js';

const settled = (s: SourceState): boolean => s.status === 'ok' || s.status === 'disabled';

function describe(r: ResourceState): string {
  const k = r.kubelet;
  const note = r.observed?.note ? `: ${r.observed.note}` : '';
  return `${r.name} (served by another ${r.servedBy === 'node-status' ? 'party: only the Node status names it' : 'device plugin'}, observed): capacity ${k.capacity}, allocatable ${k.allocatable}${note}`;
}

export function attachObservedEvents(
  model: Pick<NodeModel, 'on' | 'off'>,
  events: GatewayEvents,
): () => void {
  let prev: NodeSnapshot | null = null;
  const onChange = ({ snapshot: s }: { snapshot: NodeSnapshot }): void => {
    if (!settled(s.sources.podResources) || !settled(s.sources.kubernetes)) return;
    const before = prev;
    prev = s;
    if (!before) return;
    for (const r of Object.values(s.resources)) {
      if (isOwnResource(r)) continue;
      const was = before.resources[r.name];
      if (
        !was ||
        was.kubelet.capacity !== r.kubelet.capacity ||
        was.kubelet.allocatable !== r.kubelet.allocatable
      ) {
        const message = was
          ? `${describe(r)} (was capacity ${was.kubelet.capacity}, allocatable ${was.kubelet.allocatable})`
          : describe(r);
        events.ring({ kind: 'registration', resource: r.name, message });
        const warn = r.kubelet.capacity === 0 || r.kubelet.allocatable < r.kubelet.capacity;
        events.node(warn ? 'Warning' : 'Normal', 'ObservedResourceChanged', message);
      }
    }
    if (s.devices === before.devices) return;
    for (const d of Object.values(s.devices)) {
      if (isOwnResource(d)) continue;
      const was = before.devices[d.key];
      if (!was || was.health === d.health) continue;
      deviceHealthEvent(events, {
        resource: d.resource,
        deviceIds: [d.id],
        pod: d.allocation
          ? { namespace: d.allocation.namespace, name: d.allocation.pod, container: d.allocation.container }
          : null,
        health: d.health,
        at: d.since,
        message: `${d.key} (another device plugin's, observed) is ${d.health}${d.reason ? `: ${d.reason}` : ''}`,
      });
    }
  };
  model.on('change', onChange);
  return () => model.off('change', onChange);
}
