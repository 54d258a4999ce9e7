// Read-only views: `nodes` (per-resource counts of each node, and per DRA driver), `devices` (every device of both
// device APIs — device plugins and DRA drivers — with health, NUMA, fault, taints and holder) and
// `pods` (pod → devices with their NUMA nodes and the NUMA alignment verdict; DRA claims).
import type { DeviceFaultPhase, DeviceState, NodeSnapshot, NodeSummary, PodState } from '@plugboard/api';
import {
  draCountColumns,
  draDeviceText,
  draHolderText,
  noDraDataWarning,
  taintsText,
  type DeviceApi,
} from '../dra.js';
import { CliError } from '../errors.js';
import { age, registeredText, renderTable } from '../output.js';
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
  const draRows = summaries.flatMap((s) =>
    Object.entries(s.dra?.drivers ?? {})
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([driver, counts]) => ({ s, driver, counts })),
  );
  // DRA drivers in a table of their own, after the resources (JSON/YAML: the summaries' `dra`).
  const draTable =
    ctx.output === 'table' && draRows.length > 0
      ? renderTable(draRows, [
          { header: 'node', value: (r) => r.s.nodeName },
          { header: 'dra driver', value: (r) => r.driver },
          ...draCountColumns<(typeof draRows)[number]>((r) => r.counts),
          { header: 'pending claims', value: (r) => r.s.dra!.pendingClaims.length },
        ])
      : null;
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
      // Who serves it: this gateway's plugin, or another device plugin it only observes.
      {
        header: 'served by',
        value: (r) => (r.resource === null ? null : (r.s.resources[r.resource]!.servedBy ?? 'plugin')),
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
  if (draTable !== null) ctx.io.stdout(`\n${draTable}`);
  // What the kubelet does not report about an observed resource (e.g. which devices are unhealthy).
  if (ctx.output === 'table') {
    for (const r of rows) {
      const note = r.resource === null ? null : r.s.resources[r.resource]!.observed?.note;
      if (note) ctx.io.stdout(`\nNote: ${r.s.nodeName} ${r.resource}: ${note}`);
    }
  }
}

/** Each gateway's node snapshot with the gateway's label, sorted by node. */
export async function snapshots(
  ctx: CommandContext,
  node: string | null,
): Promise<{ label: string; snapshot: NodeSnapshot }[]> {
  const answers = await fanOut(ctx, await selectGateways(ctx, node), (g) =>
    g.request<NodeSnapshot>('/api/v1/node'),
  );
  return answers
    .map((a) => ({ label: a.gateway.label, snapshot: a.value }))
    .sort((a, b) => a.snapshot.nodeName.localeCompare(b.snapshot.nodeName));
}

const numaText = (nodes: number[]) => (nodes.length ? nodes.join(',') : '-');
const byName = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });

/** A device of either API as a row of `devices` (and `api` + the gateway's document in JSON). */
interface DeviceRow {
  node: string;
  api: DeviceApi;
  /** 'plugin' (this gateway's), 'device-plugin' / 'node-status' (observed), 'dra-driver' (a DRA driver it does not run). */
  servedBy: string;
  resource: string;
  device: string;
  health: string;
  kubelet: string;
  numaNodes: number[];
  fault: DeviceFaultPhase | null;
  taints: string;
  claim: string;
  pod: string;
  since: string;
  reason: string | null;
  item: unknown;
}

export async function devicesCommand(
  ctx: CommandContext,
  o: { node: string | null; resource: string | null; unhealthy: boolean; api: DeviceApi | null },
): Promise<void> {
  const snaps = await snapshots(ctx, o.node);
  const wantsDra = o.api !== 'device-plugin';
  const withoutDra = snaps.filter((s) => !s.snapshot.dra);
  if (o.resource !== null) {
    const plugin = o.api === 'DRA' ? [] : snaps.flatMap((s) => Object.keys(s.snapshot.resources));
    const drivers = wantsDra ? snaps.flatMap((s) => Object.keys(s.snapshot.dra?.drivers ?? {})) : [];
    if (!plugin.includes(o.resource) && !drivers.includes(o.resource)) {
      const list = (names: string[]) => [...new Set(names)].sort().join(', ') || 'none';
      throw new CliError(
        'not-found',
        `no node serves ${o.api === 'DRA' ? 'DRA driver' : 'resource'} "${o.resource}"; ` +
          [
            ...(o.api === 'DRA' ? [] : [`resources: ${list(plugin)}`]),
            ...(wantsDra ? [`DRA drivers: ${list(drivers)}`] : []),
          ].join('; ') +
          (wantsDra && withoutDra.length
            ? ` (no DRA data from ${withoutDra.map((s) => s.snapshot.nodeName).join(', ')})`
            : ''),
      );
    }
  }
  if (o.api === 'DRA')
    for (const s of withoutDra) ctx.io.stderr(noDraDataWarning(s.label, s.snapshot.nodeName));
  const rows = deviceRows(
    snaps.map((s) => s.snapshot),
    o,
    ctx.io.now(),
  );
  printList(
    ctx,
    rows,
    [
      { header: 'node', value: (r) => r.node },
      { header: 'api', value: (r) => r.api },
      { header: 'served by', value: (r) => r.servedBy },
      { header: 'resource', value: (r) => r.resource },
      { header: 'device', value: (r) => r.device },
      { header: 'health', value: (r) => r.health },
      // What the kubelet was told: ListAndWatch, or a DRA driver's health stream ("-" while none is open).
      { header: 'kubelet', value: (r) => r.kubelet },
      { header: 'numa', value: (r) => numaText(r.numaNodes) },
      { header: 'fault', value: (r) => (r.fault === null ? '-' : `simulated (${r.fault})`) },
      { header: 'taints', value: (r) => r.taints },
      { header: 'claim', value: (r) => r.claim },
      { header: 'pod', value: (r) => r.pod },
      { header: 'since', value: (r) => r.since },
      { header: 'reason', value: (r) => r.reason ?? '-' },
    ],
    rows.map((r) => r.item),
    o.unhealthy ? 'No unhealthy devices.' : 'No devices found.',
  );
}

/** Per node: the device plugins' devices (resources in name order), then the DRA drivers' devices. */
function deviceRows(
  snaps: NodeSnapshot[],
  o: { resource: string | null; unhealthy: boolean; api: DeviceApi | null },
  now: number,
): DeviceRow[] {
  const wanted = (resource: string, health: string) =>
    (o.resource === null || resource === o.resource) && (!o.unhealthy || health === 'Unhealthy');
  return snaps.flatMap((s) => {
    const node = s.nodeName;
    const plugin: DeviceRow[] =
      o.api === 'DRA'
        ? []
        : Object.values(s.resources)
            .sort((a, b) => a.name.localeCompare(b.name))
            .flatMap((r) => r.deviceKeys.map((k) => s.devices[k]!))
            .filter((d) => wanted(d.resource, d.health))
            .map((d) => ({
              node,
              api: 'device-plugin',
              servedBy: d.servedBy ?? 'plugin',
              resource: d.resource,
              device: d.id,
              health: d.health,
              kubelet: d.kubeletHealth ?? '-',
              numaNodes: d.numaNodes,
              fault: d.fault,
              taints: '-',
              claim: '-',
              pod: holder(d),
              since: age(d.since, now),
              reason: d.reason,
              item: { node, api: 'device-plugin', ...d },
            }));
    const dra: DeviceRow[] =
      o.api === 'device-plugin' || !s.dra
        ? []
        : Object.values(s.dra.devices)
            .filter((d) => wanted(d.driver, d.health))
            .sort((a, b) => byName(a.driver, b.driver) || byName(a.pool, b.pool) || byName(a.name, b.name))
            .map((d) => ({
              node,
              api: 'DRA',
              servedBy: s.dra?.drivers[d.driver]?.inProcess ? 'plugin' : 'dra-driver',
              resource: d.driver,
              device: draDeviceText(d),
              health: d.health,
              kubelet: d.kubeletHealth ?? '-',
              numaNodes: d.numaNodes,
              fault: d.fault,
              taints: taintsText(d),
              ...draHolderText(d),
              since: age(d.since, now),
              reason: d.reason,
              item: { node, api: 'DRA', ...d },
            }));
    return [...plugin, ...dra];
  });
}

function holder(d: DeviceState): string {
  const a = d.allocation;
  return a ? `${a.namespace}/${a.pod}/${a.container}` : '-';
}

export async function podsCommand(ctx: CommandContext, o: { node: string | null }): Promise<void> {
  const snaps = (await snapshots(ctx, o.node)).map((s) => s.snapshot);
  const pods = snaps.flatMap((s) =>
    Object.values(s.pods)
      .map((p) => podView(s, p))
      .filter((p) => p.claims.length > 0 || p.containers.some((c) => c.devices.length > 0))
      .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`)),
  );
  type Pod = (typeof pods)[number];
  type Row = { p: Pod; container: string | null; resource: string | null; devices: string };
  const rows: Row[] = pods.flatMap((p) => {
    const held: Row[] = p.containers.flatMap((c) =>
      [...new Set(c.devices.map((d) => d.resource))].sort().map((resource) => ({
        p,
        container: c.name,
        resource,
        devices: c.devices
          .filter((d) => d.resource === resource)
          .map((d) => `${d.id}(${numaText(d.numaNodes)})${d.health === 'Unhealthy' ? '!' : ''}`)
          .join(' '),
      })),
    );
    // A claim no container holds devices of yet (pending, or not prepared): the claim and its phase.
    const prepared = new Set(p.containers.flatMap((c) => c.devices.map((d) => d.claim)));
    const waiting: Row[] = p.claims
      .filter((c) => c.claim === null || !prepared.has(c.claim))
      .map((c) => ({
        p,
        container: null,
        resource: null,
        devices: `claim ${c.claim ?? c.name} ${c.phase ?? 'not created yet'}`,
      }));
    return [...held, ...waiting];
  });
  printList(
    ctx,
    rows,
    [
      { header: 'node', value: (r) => r.p.node },
      { header: 'namespace', value: (r) => r.p.namespace },
      { header: 'pod', value: (r) => r.p.name },
      { header: 'container', value: (r) => r.container ?? '-' },
      { header: 'resource', value: (r) => r.resource ?? '-' },
      { header: 'devices (numa)', value: (r) => r.devices },
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

interface PodDevice {
  api: DeviceApi;
  /** Extended resource name, or the DRA driver. */
  resource: string;
  id: string;
  numaNodes: number[];
  health: string;
  /** The claim a DRA device came with (`namespace/name`); null for a device plugin's. */
  claim: string | null;
}

/**
 * A pod as `pods` shows it: each container's devices of both APIs (a DRA device's `resource` is its
 * driver, `claim` the claim it came with) and the pod's claims with their phases.
 */
function podView(s: NodeSnapshot, p: PodState) {
  const dra = s.dra;
  return {
    node: s.nodeName,
    namespace: p.namespace,
    name: p.name,
    phase: p.phase,
    reason: p.reason,
    affectedByUnhealthyDevice: p.affectedByUnhealthyDevice,
    numaAlignment: p.numaAlignment,
    claims: (p.claims ?? []).map((c) => ({
      ...c,
      phase: c.claim === null ? null : (dra?.claims[c.claim]?.phase ?? null),
    })),
    containers: p.containers.map((c) => ({
      name: c.name,
      cpuIds: c.cpuIds,
      devices: [
        ...Object.entries(c.devices).flatMap(([resource, keys]) =>
          keys.map((k): PodDevice => {
            const d = s.devices[k];
            return {
              api: 'device-plugin',
              resource,
              id: d?.id ?? k.slice(resource.length + 1),
              numaNodes: d?.numaNodes ?? [],
              health: d?.health ?? 'Unknown',
              claim: null,
            };
          }),
        ),
        ...c.dynamicResources.flatMap((r) =>
          r.devices.map((d): PodDevice => {
            const device = dra?.devices[`${d.driver}/${d.pool}/${d.device}`];
            return {
              api: 'DRA',
              resource: d.driver,
              id: d.device,
              numaNodes: device?.numaNodes ?? [],
              health: device?.health ?? 'Unknown',
              claim: `${r.claimNamespace}/${r.claimName}`,
            };
          }),
        ),
      ],
    })),
  };
}
