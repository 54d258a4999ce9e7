// `migration`: per extended resource name and node, whether a device plugin or a DRA driver serves
// it (a DeviceClass with `extendedResourceName`, KEP-5004), the pods holding it each way (a DRA pod
// with the special claim the scheduler made for it) and what is left to move: the pods still holding
// it through a device plugin. From each gateway's `extendedResources`, all observed; a gateway that
// cannot read DeviceClasses says so ("unknown") rather than "none".
import {
  clusterMigration,
  type ClusterMigration,
  type ExtendedResourcePod,
  type ExtendedResourceView,
} from '@plugboard/api';
import { printList, type CommandContext } from '../context.js';
import { snapshots } from './read.js';

interface Row {
  node: string;
  v: ExtendedResourceView;
}

const podText = (p: ExtendedResourcePod): string =>
  `${p.pod}(${p.count})${p.via === 'dra' && p.claim ? ` → ${p.claim.slice(p.claim.indexOf('/') + 1)}` : ''}`;

const podsVia = (v: ExtendedResourceView, via: ExtendedResourcePod['via']): string => {
  const pods = v.pods.filter((p) => p.via === via);
  return pods.length ? pods.map(podText).join(', ') : '-';
};

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** One line per resource some node serves through DRA or some DeviceClass maps: where it stands. */
export function migrationSummary(migration: ClusterMigration): string[] {
  const nodes = (names: string[]): string => (names.length ? names.join(', ') : 'no node');
  return migration.resources
    .filter((r) => r.mapped)
    .map(
      (r) =>
        `${r.name}: device plugin on ${nodes(r.servedBy['device-plugin'])}; DRA on ${nodes(r.servedBy.dra)}; ` +
        `left to move: ${plural(r.leftToMovePods.length, 'pod')} on ${plural(r.servedBy['device-plugin'].length, 'node')}` +
        (r.notHolding.length ? ` (${plural(r.notHolding.length, 'container')} not holding it yet)` : '') +
        (r.deviceClassesUnknown.length
          ? `; DeviceClasses unknown on ${r.deviceClassesUnknown.join(', ')} (its gateway cannot read them)`
          : ''),
    );
}

export async function migrationCommand(
  ctx: CommandContext,
  o: { node: string | null; resource: string | null },
): Promise<void> {
  const snaps = await snapshots(ctx, o.node);
  for (const s of snaps)
    if (!s.snapshot.extendedResources)
      ctx.io.stderr(
        `warning: no extended-resource data from this gateway: ${s.label} (node ${s.snapshot.nodeName}; it predates the migration view)\n`,
      );
  const rows: Row[] = snaps
    .flatMap(({ snapshot: s }) =>
      Object.values(s.extendedResources ?? {})
        .filter((v) => o.resource === null || v.name === o.resource)
        .map((v) => ({ node: s.nodeName, v })),
    )
    .sort((a, b) => a.v.name.localeCompare(b.v.name) || a.node.localeCompare(b.node));
  printList(
    ctx,
    rows,
    [
      { header: 'resource', value: (r) => r.v.name },
      { header: 'node', value: (r) => r.node },
      { header: 'served by', value: (r) => r.v.servedBy },
      {
        header: 'device class',
        value: (r) => (r.v.deviceClasses === null ? 'unknown' : (r.v.deviceClass ?? '-')),
      },
      { header: 'drivers', value: (r) => (r.v.drivers.length ? r.v.drivers.join(',') : '-') },
      { header: 'device-plugin pods', value: (r) => podsVia(r.v, 'device-plugin') },
      { header: 'DRA pods → special claim', value: (r) => podsVia(r.v, 'dra') },
      {
        header: 'left to move',
        value: (r) =>
          r.v.servedBy === 'device-plugin'
            ? plural(new Set(r.v.pods.filter((p) => p.via === 'device-plugin').map((p) => p.pod)).size, 'pod')
            : '-',
      },
    ],
    rows.map((r) => ({ node: r.node, ...r.v })),
    o.resource === null ? 'No extended resources found.' : `No node knows ${o.resource}.`,
  );
  if (ctx.output !== 'table') return;
  const migration = clusterMigration(
    snaps.map(({ snapshot: s }) => ({ node: s.nodeName, extendedResources: s.extendedResources })),
  );
  const resources = migration.resources.filter((r) => o.resource === null || r.name === o.resource);
  for (const line of migrationSummary({ ...migration, resources })) ctx.io.stdout(`${line}\n`);
}
