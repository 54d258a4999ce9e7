// What the node model's tests build their inputs from: the instant they start at, a plugin
// registered then, a gateway's ModelInputs with nothing in them yet, PodResources' NUMA topology and
// a Running pod as the API server lists it. Test-only (tsconfig.build.json leaves it out of dist/).
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { RegistrationState } from '@plugboard/api';
import { gatewayInfo, pluginRegisteredAt } from '@plugboard/api/testing';
import type { ModelInputs } from './build.js';

export const T0 = '2026-01-01T00:00:00.000Z';

/** A plugin registered with its kubelet at T0, its ListAndWatch sent to at T0. */
export const registeredAtT0: RegistrationState = pluginRegisteredAt(T0);

/** Node n1's gateway at T0 with no resources, PodResources ok and the Kubernetes API off; `over` wins. */
export function modelInputs(over: Partial<ModelInputs> = {}): ModelInputs {
  return {
    nodeName: 'n1',
    updatedAt: T0,
    gateway: gatewayInfo(T0, { version: 't' }),
    resources: [],
    podResources: null,
    kube: null,
    faults: [],
    events: [],
    sources: {
      podResources: { status: 'ok', lastSuccess: T0, reason: null },
      kubernetes: { status: 'disabled', lastSuccess: null, reason: 'off' },
    },
    ...over,
  };
}

/** PodResources' topology of a device (or memory) on NUMA node `n`. */
export const numaTopology = (n: number) => ({ nodes: [{ ID: n }] });

/**
 * A Running pod `namespace/name` on n1 with one container, `main`: ready, no restarts, unless
 * `status` (that container's status) says otherwise.
 */
export function runningPod(name: string, namespace: string, status: Partial<V1ContainerStatus> = {}): V1Pod {
  return {
    metadata: { name, namespace },
    spec: { nodeName: 'n1', containers: [{ name: 'main' }] },
    status: {
      phase: 'Running',
      containerStatuses: [{ name: 'main', image: 'x', imageID: '', ready: true, restartCount: 0, ...status }],
    },
  };
}
