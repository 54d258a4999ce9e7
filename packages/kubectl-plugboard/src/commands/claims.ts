// `claims`: the DRA ResourceClaims each gateway reports for its node — allocated on its devices or
// referenced by its pods — with their phase (pending → allocated → reserved → prepared), requests,
// devices, pods, health and, for a pending claim, the scheduler's reason.
import { claimDevicesText, claimPodsText, claimReasonText, noDraDataWarning, requestsText } from '../dra.js';
import { printList, type CommandContext } from '../context.js';
import { snapshots } from './read.js';

export async function claimsCommand(
  ctx: CommandContext,
  o: { node: string | null; namespace: string | null },
): Promise<void> {
  const snaps = await snapshots(ctx, o.node);
  for (const s of snaps) if (!s.snapshot.dra) ctx.io.stderr(noDraDataWarning(s.label, s.snapshot.nodeName));
  const rows = snaps
    .flatMap(({ snapshot: s }) =>
      Object.values(s.dra?.claims ?? {})
        .filter((c) => o.namespace === null || c.namespace === o.namespace)
        .map((c) => ({ node: s.nodeName, c, dra: s.dra! })),
    )
    .sort(
      (a, b) =>
        a.c.namespace.localeCompare(b.c.namespace) ||
        a.c.name.localeCompare(b.c.name) ||
        a.node.localeCompare(b.node),
    );
  printList(
    ctx,
    rows,
    [
      { header: 'namespace', value: (r) => r.c.namespace },
      { header: 'name', value: (r) => r.c.name },
      { header: 'node', value: (r) => r.node },
      { header: 'phase', value: (r) => r.c.phase },
      { header: 'requests', value: (r) => requestsText(r.c) },
      { header: 'devices', value: (r) => claimDevicesText(r.c, r.dra) },
      { header: 'pods', value: (r) => claimPodsText(r.c) },
      { header: 'health', value: (r) => r.c.health ?? '-' },
      { header: 'reason', value: (r) => claimReasonText(r.c) },
    ],
    rows.map((r) => ({ node: r.node, ...r.c })),
    o.namespace === null ? 'No claims found.' : `No claims found in namespace ${o.namespace}.`,
  );
}
