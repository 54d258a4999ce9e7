// What a scenario observes of a node at an `observe` step, read the same way on both kinds: the real
// kubectl (objects as JSON and `kubectl get` tables), PodResources v1 and nothing else. The result is
// shaped for comparison: maps keyed by what names a thing (pod, condition type, resource, claim),
// not lists in an order either side happens to use; device-plugin device IDs a pod holds are
// counted rather than named, as the kubelet picks them from a Go map (docs/KUBELET-SIM.md).
import type { PodResourcesClient } from '../pod-resources.js';
import type { ClusterNode, TestCluster } from '../test-node.js';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface NodeJson {
  status: {
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
    conditions?: Condition[];
  };
}
interface ContainerStatusJson {
  name: string;
  restartCount?: number;
  state?: Record<string, { reason?: string; exitCode?: number }>;
  allocatedResourcesStatus?: { name: string; resources?: { resourceID: string; health?: string }[] }[];
}
interface PodJson {
  metadata: { name: string; deletionTimestamp?: string };
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    conditions?: Condition[];
    containerStatuses?: ContainerStatusJson[];
    resourceClaimStatuses?: { name: string; resourceClaimName?: string }[];
    extendedResourceClaimStatus?: unknown;
  };
}
interface ClaimJson {
  metadata: {
    name: string;
    annotations?: Record<string, string>;
    finalizers?: string[];
    ownerReferences?: { kind: string; name: string }[];
    deletionTimestamp?: string;
  };
  status?: {
    allocation?: {
      devices?: {
        results?: {
          request: string;
          driver: string;
          pool: string;
          device: string;
          shareID?: string;
          consumedCapacity?: Record<string, string>;
          adminAccess?: boolean;
        }[];
      };
    };
    reservedFor?: { resource: string; name: string }[];
    devices?: unknown[];
  };
}
interface SliceJson {
  spec: {
    driver: string;
    pool: { name: string; generation: number; resourceSliceCount: number };
    nodeName?: string;
    sharedCounters?: unknown[];
    devices?: { name: string; [k: string]: unknown }[];
  };
}
interface EventJson {
  involvedObject: { kind: string; name: string };
  reason?: string;
  type?: string;
}

export interface ObserveTarget {
  cluster: TestCluster;
  node: ClusterNode;
  namespace: string;
  podResources: PodResourcesClient;
  /** The extended resources and DRA drivers of the scenario (others on the Node are the machine's). */
  resources: readonly string[];
  drivers: readonly string[];
}

const byKey = <T, V>(items: readonly T[] | undefined, key: (t: T) => string, value: (t: T) => V) =>
  Object.fromEntries((items ?? []).map((t) => [key(t), value(t)]));

const condition = (c: Condition, withMessage: boolean) =>
  withMessage && c.message ? `${c.status}/${c.reason ?? ''}: ${c.message}` : `${c.status}/${c.reason ?? ''}`;

/** A `kubectl get` table as rows of `COLUMN=value`, without AGE (a time). */
export function tableRows(text: string): Record<string, string>[] {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) return [];
  const header = lines[0]!;
  // Columns start where the header's words start; values are cut at the same offsets.
  const starts = [...header.matchAll(/\S+/g)].map((m) => ({ name: m[0], at: m.index }));
  return lines
    .slice(1)
    .map((line) =>
      Object.fromEntries(
        starts
          .map((c, i) => [c.name, line.slice(c.at, starts[i + 1]?.at ?? line.length).trim()] as const)
          .filter(([name]) => name !== 'AGE'),
      ),
    );
}

/** The node's quantities the scenario is about, and the machine's own (cpu, pods). */
function quantities(all: Record<string, string> | undefined, resources: readonly string[]) {
  return byKey(
    Object.entries(all ?? {}).filter(([k]) => resources.includes(k) || k === 'cpu' || k === 'pods'),
    ([k]) => k,
    ([, v]) => v,
  );
}

export async function observe(t: ObserveTarget): Promise<Record<string, unknown>> {
  const { cluster, node, namespace: ns } = t;
  const json = <T>(args: string[]) => cluster.kubectlJson<T>(args);
  const [nodeJson, pods, claims, slices, nsEvents, nodeEvents] = await Promise.all([
    json<NodeJson>(['get', 'node', node.name]),
    json<{ items: PodJson[] }>(['get', 'pods', '-n', ns]),
    json<{ items: ClaimJson[] }>(['get', 'resourceclaims', '-n', ns]),
    json<{ items: SliceJson[] }>(['get', 'resourceslices', '--field-selector', `spec.nodeName=${node.name}`]),
    json<{ items: EventJson[] }>(['get', 'events', '-n', ns]),
    json<{ items: EventJson[] }>(['get', 'events', '-n', 'default']),
  ]);
  const tables = {
    pods: tableRows((await cluster.kubectl(['get', 'pods', '-n', ns])).stdout),
    node: tableRows((await cluster.kubectl(['get', 'node', node.name])).stdout),
    resourceclaims: tableRows((await cluster.kubectl(['get', 'resourceclaims', '-n', ns])).stdout),
  };

  const events: Record<string, Record<string, string>> = {};
  for (const e of [
    ...nsEvents.items,
    ...nodeEvents.items.filter((e) => e.involvedObject.name === node.name),
  ]) {
    const key = `${e.involvedObject.kind}/${e.involvedObject.name}`;
    (events[key] ??= {})[e.reason ?? ''] = e.type ?? '';
  }

  const [list, allocatable] = await Promise.all([t.podResources.list(), t.podResources.allocatable()]);
  const podResources = {
    allocatable: byKey(
      t.resources.map((r) => ({
        r,
        ids: allocatable.devices.filter((d) => d.resourceName === r).flatMap((d) => d.deviceIds),
      })),
      (x) => x.r,
      (x) => x.ids,
    ),
    pods: byKey(
      list.podResources.filter((p) => p.namespace === ns),
      (p) => p.name,
      (p) =>
        byKey(
          p.containers,
          (c) => c.name,
          (c) => ({
            // A pod's device IDs, per resource, counted: which IDs the kubelet picks is not defined.
            devices: byKey(
              [...new Set(c.devices.map((d) => d.resourceName))],
              (r) => r,
              (r) => c.devices.filter((d) => d.resourceName === r).flatMap((d) => d.deviceIds).length,
            ),
            dynamic: byKey(
              c.dynamicResources,
              (d) => `${d.claimNamespace}/${d.claimName}`,
              (d) =>
                d.claimResources.map((r) => ({
                  device: `${r.driverName}/${r.poolName}/${r.deviceName}`,
                  shareId: r.shareId ? 'set' : 'unset',
                  cdiDevices: r.cdiDevices.map((x) => x.name),
                })),
            ),
          }),
        ),
    ),
  };

  return {
    node: {
      capacity: quantities(nodeJson.status.capacity, t.resources),
      allocatable: quantities(nodeJson.status.allocatable, t.resources),
      conditions: byKey(
        nodeJson.status.conditions,
        (c) => c.type,
        (c) => condition(c, false),
      ),
    },
    pods: byKey(
      pods.items,
      (p) => p.metadata.name,
      (p) => ({
        phase: p.status?.phase ?? '',
        reason: p.status?.reason,
        message: p.status?.message,
        terminating: p.metadata.deletionTimestamp !== undefined,
        conditions: byKey(
          p.status?.conditions,
          (c) => c.type,
          // The scheduler's and the eviction's messages say why; the others are the kubelet's reasons.
          (c) => condition(c, c.type === 'PodScheduled' || c.type === 'DisruptionTarget'),
        ),
        containers: byKey(
          p.status?.containerStatuses,
          (c) => c.name,
          (c) => ({
            state:
              Object.entries(c.state ?? {}).map(([k, v]) => (v.reason ? `${k}/${v.reason}` : k))[0] ?? '',
            allocatedResourcesStatus: byKey(
              c.allocatedResourcesStatus,
              (s) => s.name,
              (s) =>
                s.name.startsWith('claim:')
                  ? byKey(
                      s.resources,
                      (r) => r.resourceID,
                      (r) => r.health ?? '',
                    )
                  : (s.resources ?? []).map((r) => r.health ?? ''),
            ),
          }),
        ),
        resourceClaimStatuses: byKey(
          p.status?.resourceClaimStatuses,
          (s) => s.name,
          (s) => s.resourceClaimName ?? '',
        ),
        extendedResourceClaimStatus: p.status?.extendedResourceClaimStatus,
      }),
    ),
    claims: byKey(
      claims.items,
      (c) => c.metadata.name,
      (c) => ({
        annotations: c.metadata.annotations ?? {},
        finalizers: c.metadata.finalizers ?? [],
        owners: (c.metadata.ownerReferences ?? []).map((o) => `${o.kind}/${o.name}`),
        terminating: c.metadata.deletionTimestamp !== undefined,
        allocation: (c.status?.allocation?.devices?.results ?? []).map((r) => ({
          request: r.request,
          device: `${r.driver}/${r.pool}/${r.device}`,
          shareID: r.shareID ? 'set' : 'unset',
          consumedCapacity: r.consumedCapacity,
          adminAccess: r.adminAccess,
        })),
        reservedFor: (c.status?.reservedFor ?? []).map((r) => `${r.resource}/${r.name}`),
        devices: c.status?.devices,
      }),
    ),
    slices: byKey(
      t.drivers,
      (d) => d,
      (d) => {
        const mine = slices.items.filter((s) => s.spec.driver === d);
        return {
          pools: mine.map((s) => `${s.spec.pool.name} (${s.spec.pool.resourceSliceCount} slices)`),
          sharedCounters: mine.flatMap((s) => s.spec.sharedCounters ?? []),
          devices: byKey(
            mine.flatMap((s) => s.spec.devices ?? []),
            (x) => x.name,
            ({ name: _name, ...rest }) => rest,
          ),
        };
      },
    ),
    podResources,
    events,
    tables,
  };
}
