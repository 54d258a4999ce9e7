// Adds a resource this gateway only observes (another device plugin's, or one only the Node status
// names) to a makeSnapshot() node, as an observer gateway reports it: `servedBy` on the resource and
// its devices, the kubelet's counts, and `observed` with the note of what the kubelet does not say.
import type { NodeSnapshot, ResourceServedBy } from '@plugboard/api';
import { makeSnapshot } from './make-snapshot';

export const OBSERVED_RESOURCE = 'nvidia.com/gpu';

export interface ObservedShape {
  resource?: string;
  servedBy?: Exclude<ResourceServedBy, 'plugin'>;
  /** Devices the kubelet names (healthy ones, from GetAllocatableResources). */
  devices: number;
  /** Devices the kubelet counts unhealthy without naming them (capacity − allocatable). */
  unhealthy?: number;
  /** Pods holding one device each. */
  pods?: number;
}

export function withObserved(input: NodeSnapshot, shape: ObservedShape): NodeSnapshot {
  const resource = shape.resource ?? OBSERVED_RESOURCE;
  const servedBy = shape.servedBy ?? 'device-plugin';
  const unhealthy = shape.unhealthy ?? 0;
  const numaCount = Object.keys(input.numa.nodes).length || 1;
  const other = makeSnapshot({
    nodeName: input.nodeName,
    resource,
    devices: shape.devices,
    numaNodes: numaCount,
    pods: shape.pods ?? 0,
  });
  const r = other.resources[resource]!;
  const capacity = shape.devices + unhealthy;
  // Its pods are named apart from the input's: `<namespace>/observed-pod-<i>`.
  const rename = (pod: string) => `observed-${pod}`;
  const devices = Object.fromEntries(
    Object.entries(other.devices).map(([k, d]) => [
      k,
      { ...d, servedBy, allocation: d.allocation && { ...d.allocation, pod: rename(d.allocation.pod) } },
    ]),
  );
  const pods = Object.fromEntries(
    Object.values(other.pods).map((p) => {
      const name = rename(p.name);
      return [`${p.namespace}/${name}`, { ...p, name, key: `${p.namespace}/${name}` }];
    }),
  );
  const numa: NodeSnapshot['numa']['nodes'] = {};
  for (const [k, n] of Object.entries(input.numa.nodes)) {
    numa[k] = { ...n, deviceKeys: [...n.deviceKeys, ...(other.numa.nodes[k]?.deviceKeys ?? [])] };
  }
  return {
    ...input,
    resources: {
      ...input.resources,
      [resource]: {
        ...r,
        servedBy,
        observed: {
          unhealthy,
          unhealthyNamed: 0,
          note:
            unhealthy > 0
              ? `${unhealthy} of ${capacity} unhealthy — the kubelet does not say which unless a pod holds them`
              : null,
        },
        kubelet: { ...r.kubelet, capacity, unhealthy },
        apiServer: { capacity, allocatable: shape.devices, staleSince: null },
        registration: { ...r.registration, registeredAt: null, lastListAndWatchSend: null },
      },
    },
    devices: { ...input.devices, ...devices },
    numa: { nodes: numa },
    pods: { ...input.pods, ...pods },
  };
}
