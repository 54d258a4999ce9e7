// Read-only views: `nodes` (per-resource counts of each node), `devices` (every device with health,
// NUMA and holder) and `pods` (pod → devices with their NUMA nodes and the NUMA alignment verdict).
import type { DeviceState, NodeSnapshot, NodeSummary } from '@plugboard/api';
import { CliError } from '../errors.js';
import { age, registeredText } from '../output.js';
import { fanOut, printList, selectGateways, type CommandContext } from '../context.js';

export async function nodesCommand(ctx: CommandContext, o: { node: string | null }): Promise<void> {
  const answers = await fanOut(ctx, await selectGateways(ctx, o.node), (g) =>
    g.request<NodeSummary>('/api/v1/summary'),
  );
  const summaries = answers
    .map(({ gateway, value }) => ({ ...value, gateway: gateway.label }))
    .sort((a, b) => a.nodeName.localeCompare(b.nodeName));
  type Row = { s: (typeof summaries)[number]; resource: string | null };
  const rows: Row[] = summaries.flatMap((s) => {
    const names = Object.keys(s.resources).sort();
    return names.length ? names.map((resource): Row => ({ s, resource })) : [{ s, resource: null }];
  });
  const count = (r: Row, key: 'capacity' | 'allocatable' | 'allocated' | 'unhealthy') =>
    r.resource === null ? null : r.s.resources[r.resource]![key];
  printList(
    ctx,
    rows,
    [
      { header: 'node', value: (r) => r.s.nodeName },
      { header: 'resource', value: (r) => r.resource },
      { header: 'capacity', value: (r) => count(r, 'capacity') },
      { header: 'allocatable', value: (r) => count(r, 'allocatable') },
      { header: 'allocated', value: (r) => count(r, 'allocated') },
      { header: 'unhealthy', value: (r) => count(r, 'unhealthy') },
      {
        header: 'registered',
        value: (r) => (r.resource === null ? null : registeredText(r.s.resources[r.resource]!)),
      },
      { header: 'faults', value: (r) => r.s.activeFaults },
      {
        header: 'sources',
        value: (r) =>
          `podresources:${r.s.sources.podResources.status} kubernetes:${r.s.sources.kubernetes.status}`,
      },
      { header: 'gateway', value: (r) => r.s.gateway },
    ],
    summaries,
    'No nodes found.',
  );
}

async function snapshots(ctx: CommandContext, node: string | null): Promise<NodeSnapshot[]> {
  const answers = await fanOut(ctx, await selectGateways(ctx, node), (g) =>
    g.request<NodeSnapshot>('/api/v1/node'),
  );
  return answers.map((a) => a.value).sort((a, b) => a.nodeName.localeCompare(b.nodeName));
}

const numaText = (nodes: number[]) => (nodes.length ? nodes.join(',') : '-');

export async function devicesCommand(
  ctx: CommandContext,
  o: { node: string | null; resource: string | null; unhealthy: boolean },
): Promise<void> {
  const snaps = await snapshots(ctx, o.node);
  if (o.resource !== null && !snaps.some((s) => s.resources[o.resource!])) {
    const served = [...new Set(snaps.flatMap((s) => Object.keys(s.resources)))].sort();
    throw new CliError(
      'not-found',
      `no node serves resource "${o.resource}"; resources: ${served.join(', ') || 'none'}`,
    );
  }
  const now = ctx.io.now();
  const rows = snaps.flatMap((s) =>
    Object.values(s.resources)
      .filter((r) => o.resource === null || r.name === o.resource)
      .sort((a, b) => a.name.localeCompare(b.name))
      .flatMap((r) => r.deviceKeys.map((k) => s.devices[k]!))
      .filter((d) => !o.unhealthy || d.health === 'Unhealthy')
      .map((d) => ({ node: s.nodeName, d })),
  );
  printList(
    ctx,
    rows,
    [
      { header: 'node', value: (r) => r.node },
      { header: 'resource', value: (r) => r.d.resource },
      { header: 'device', value: (r) => r.d.id },
      { header: 'health', value: (r) => r.d.health },
      // What the kubelet was told on ListAndWatch ("-" while no stream is open).
      { header: 'kubelet', value: (r) => r.d.kubeletHealth ?? '-' },
      { header: 'numa', value: (r) => numaText(r.d.numaNodes) },
      { header: 'fault', value: (r) => (r.d.fault === null ? '-' : `simulated (${r.d.fault})`) },
      { header: 'pod', value: (r) => holder(r.d) },
      { header: 'since', value: (r) => age(r.d.since, now) },
      { header: 'reason', value: (r) => r.d.reason ?? '-' },
    ],
    rows.map((r) => ({ node: r.node, ...r.d })),
    o.unhealthy ? 'No unhealthy devices.' : 'No devices found.',
  );
}

function holder(d: DeviceState): string {
  const a = d.allocation;
  return a ? `${a.namespace}/${a.pod}/${a.container}` : '-';
}

export async function podsCommand(ctx: CommandContext, o: { node: string | null }): Promise<void> {
  const snaps = await snapshots(ctx, o.node);
  const pods = snaps.flatMap((s) =>
    Object.values(s.pods)
      .map((p) => ({
        node: s.nodeName,
        namespace: p.namespace,
        name: p.name,
        phase: p.phase,
        reason: p.reason,
        affectedByUnhealthyDevice: p.affectedByUnhealthyDevice,
        numaAlignment: p.numaAlignment,
        containers: p.containers.map((c) => ({
          name: c.name,
          cpuIds: c.cpuIds,
          devices: Object.entries(c.devices).flatMap(([resource, keys]) =>
            keys.map((k) => {
              const d = s.devices[k];
              return {
                resource,
                id: d?.id ?? k.slice(resource.length + 1),
                numaNodes: d?.numaNodes ?? [],
                health: d?.health ?? 'Unknown',
              };
            }),
          ),
        })),
      }))
      .filter((p) => p.containers.some((c) => c.devices.length > 0))
      .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`)),
  );
  type Pod = (typeof pods)[number];
  type Row = { p: Pod; container: Pod['containers'][number]; resource: string };
  const rows: Row[] = pods.flatMap((p) =>
    p.containers.flatMap((container) =>
      [...new Set(container.devices.map((d) => d.resource))]
        .sort()
        .map((resource) => ({ p, container, resource })),
    ),
  );
  printList(
    ctx,
    rows,
    [
      { header: 'node', value: (r) => r.p.node },
      { header: 'namespace', value: (r) => r.p.namespace },
      { header: 'pod', value: (r) => r.p.name },
      { header: 'container', value: (r) => r.container.name },
      { header: 'resource', value: (r) => r.resource },
      {
        header: 'devices (numa)',
        value: (r) =>
          r.container.devices
            .filter((d) => d.resource === r.resource)
            .map((d) => `${d.id}(${numaText(d.numaNodes)})${d.health === 'Unhealthy' ? '!' : ''}`)
            .join(' '),
      },
      {
        header: 'alignment',
        value: (r) =>
          r.p.numaAlignment.verdict === 'no-preference'
            ? 'no-preference'
            : `${r.p.numaAlignment.verdict}:${numaText(r.p.numaAlignment.numaNodes)}`,
      },
      {
        header: 'status',
        value: (r) => (r.p.affectedByUnhealthyDevice ? `${r.p.phase} (unhealthy device)` : r.p.phase),
      },
    ],
    pods,
    'No pods with devices found.',
  );
}
