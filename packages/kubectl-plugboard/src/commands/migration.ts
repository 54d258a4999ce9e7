// `migration`: per extended resource name and node, whether a device plugin or a DRA driver serves
// it (a DeviceClass with `extendedResourceName`, KEP-5004), the pods holding it each way (a DRA pod
// with the special claim the scheduler made for it) and what is left to move: the pods still holding
// it through a device plugin. From each gateway's `extendedResources`, all observed; a gateway that
// cannot read DeviceClasses says so ("unknown") rather than "none".
import type { ExtendedResourcePod, ExtendedResourceView } from '@plugboard/api';
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
export function migrationSummary(rows: readonly Row[]): string[] {
  const names = [...new Set(rows.map((r) => r.v.name))].sort();
  const lines: string[] = [];
  for (const name of names) {
    const of = rows.filter((r) => r.v.name === name);
    if (!of.some((r) => r.v.servedBy === 'dra' || (r.v.deviceClasses?.length ?? 0) > 0)) continue;
    const dp = of.filter((r) => r.v.servedBy === 'device-plugin').map((r) => r.node);
    const dra = of.filter((r) => r.v.servedBy === 'dra').map((r) => r.node);
    const left = of.flatMap((r) => r.v.pods.filter((p) => p.via === 'device-plugin'));
    const unknown = of.flatMap((r) => r.v.pods.filter((p) => p.via === 'unknown')).length;
    lines.push(
      `${name}: device plugin on ${dp.length ? dp.join(', ') : 'no node'}; DRA on ${
        dra.length ? dra.join(', ') : 'no node'
      }; left to move: ${plural(new Set(left.map((p) => p.pod)).size, 'pod')} on ${plural(dp.length, 'node')}` +
        (unknown ? ` (${plural(unknown, 'container')} not holding it yet)` : ''),
    );
  }
  return lines;
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
  if (ctx.output === 'table') for (const line of migrationSummary(rows)) ctx.io.stdout(`${line}\n`);
}
