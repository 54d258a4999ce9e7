// Simulated faults and scenarios: list, inject and clear faults on a node's devices; run a scenario
// file (the format of examples/scenarios/*.yaml) on the gateways its steps name; list and stop them.
// Every mutation carries the credential the gateway verifies (see transport.ts).
import { readFile } from 'node:fs/promises';
import type { FaultState, NodeSnapshot, ScenarioState } from '@plugboard/api';
import { parse } from 'yaml';
import { CliError } from '../errors.js';
import { age, until } from '../output.js';
import { fanOut, printList, printResult, selectGateways, type CommandContext } from '../context.js';
import type { GatewayConnection } from '../transport.js';

/** The single gateway a mutation goes to: --node, or the only gateway there is. */
async function oneGateway(
  ctx: CommandContext,
  node: string | null,
  what: string,
): Promise<GatewayConnection> {
  if (node !== null) return (await selectGateways(ctx, node))[0]!;
  const all = await ctx.gateways();
  if (all.length === 1) return all[0]!;
  throw new CliError('usage', `${what}: give --node NODE (${all.length} gateways found)`);
}

export async function faultListCommand(
  ctx: CommandContext,
  o: { node: string | null; resource: string | null },
): Promise<void> {
  const query = o.resource ? `?resource=${encodeURIComponent(o.resource)}` : '';
  const answers = await fanOut(ctx, await selectGateways(ctx, o.node), async (g) => ({
    node: await g.nodeName(),
    faults: (await g.request<{ items: FaultState[] }>(`/api/v1/faults${query}`)).items,
  }));
  const now = ctx.io.now();
  const rows = answers
    .flatMap(({ value }) => value.faults.map((f) => ({ node: value.node, ...f })))
    .sort((a, b) => a.node.localeCompare(b.node) || a.createdAt.localeCompare(b.createdAt));
  printList(
    ctx,
    rows,
    [
      { header: 'node', value: (r) => r.node },
      { header: 'id', value: (r) => r.id },
      { header: 'resource', value: (r) => r.resource },
      { header: 'device', value: (r) => r.deviceId },
      { header: 'state', value: (r) => r.state },
      // DRA faults only: the taint the driver puts on the device in its ResourceSlice.
      { header: 'taint', value: (r) => r.taint ?? '-' },
      { header: 'age', value: (r) => age(r.createdAt, now) },
      { header: 'expires', value: (r) => (r.expiresAt ? `in ${until(r.expiresAt, now)}` : 'never') },
      { header: 'scenario', value: (r) => r.scenarioId ?? '-' },
      { header: 'reason', value: (r) => r.reason },
      { header: 'state reason', value: (r) => r.stateReason ?? '-' },
    ],
    rows,
    'No active faults.',
  );
}

export async function faultInjectCommand(
  ctx: CommandContext,
  o: {
    node: string | null;
    resource: string;
    device: string;
    reason: string;
    ttlSeconds: number | null;
    taint: 'NoSchedule' | 'NoExecute' | null;
  },
): Promise<void> {
  const gateway = await oneGateway(ctx, o.node, 'fault inject');
  if (o.taint !== null) await requireDraDriver(gateway, o.resource);
  const body = JSON.stringify({
    resource: o.resource,
    deviceId: o.device,
    reason: o.reason,
    ...(o.ttlSeconds !== null ? { ttlSeconds: o.ttlSeconds } : {}),
    ...(o.taint !== null ? { taint: o.taint } : {}),
  });
  const created = await gateway.request<{ id: string; fault: FaultState }>('/api/v1/faults', {
    method: 'POST',
    body,
    contentType: 'application/json',
    mutation: true,
  });
  const node = await gateway.nodeName();
  printResult(
    ctx,
    { node, ...created.fault },
    `fault ${created.id} injected: ${o.resource} ${o.device} on ${node}` +
      (created.fault.taint ? `, tainted ${created.fault.taint}` : '') +
      (created.fault.expiresAt ? ` (expires ${created.fault.expiresAt})` : ' (until cleared)'),
  );
}

/**
 * A taint is a DRA driver's ResourceSlice taint: refuse --taint for anything but a DRA driver on the
 * gateway's node before sending (the gateway refuses it too, with less to go on).
 */
async function requireDraDriver(gateway: GatewayConnection, resource: string): Promise<void> {
  const snapshot = await gateway.request<NodeSnapshot>('/api/v1/node');
  const node = snapshot.nodeName;
  if (!snapshot.dra) {
    throw new CliError(
      'usage',
      `fault inject --taint: no DRA data from this gateway: ${gateway.label} (node ${node}; it predates DRA support); --taint applies to DRA drivers only`,
    );
  }
  if (snapshot.dra.drivers[resource]) return;
  const drivers = Object.keys(snapshot.dra.drivers).sort();
  throw new CliError(
    'usage',
    `fault inject --taint: "${resource}" is not a DRA driver on ${node}; --taint applies to DRA drivers only` +
      ` (DRA drivers there: ${drivers.join(', ') || 'none'})`,
  );
}

export async function faultClearCommand(
  ctx: CommandContext,
  o: { node: string | null; ids: string[]; all: boolean },
): Promise<void> {
  const gateways = await selectGateways(ctx, o.node);
  const cleared: { node: string; id: string }[] = [];
  if (o.all) {
    await fanOut(ctx, gateways, async (g) => {
      const node = await g.nodeName();
      const { items } = await g.request<{ items: FaultState[] }>('/api/v1/faults', {
        method: 'DELETE',
        mutation: true,
      });
      for (const f of items) cleared.push({ node, id: f.id });
    });
  } else {
    for (const id of o.ids) {
      const path = `/api/v1/faults/${encodeURIComponent(id)}`;
      const holder = await findHolder(gateways, path);
      if (!holder) {
        throw new CliError(
          'not-found',
          `no active fault "${id}"${o.node ? ` on node ${o.node}` : ' on any node'}`,
        );
      }
      await holder.request(path, { method: 'DELETE', mutation: true });
      cleared.push({ node: await holder.nodeName(), id });
    }
  }
  if (ctx.output !== 'table') printResult(ctx, { items: cleared }, '');
  else if (cleared.length === 0) ctx.io.stderr('No active faults.\n');
  else for (const c of cleared) ctx.io.stdout(`fault ${c.id} cleared on ${c.node}\n`);
}

/** Nodes a scenario document names in its steps; null when some step applies to every node. */
function scenarioNodes(doc: unknown): Set<string> | null {
  const steps = (doc as { steps?: unknown }).steps;
  if (!Array.isArray(steps)) return null;
  const nodes = new Set<string>();
  for (const step of steps as { node?: unknown }[]) {
    if (typeof step?.node !== 'string') return null;
    nodes.add(step.node);
  }
  return nodes;
}

export async function scenarioRunCommand(
  ctx: CommandContext,
  o: { node: string | null; file: string },
): Promise<void> {
  let text: string;
  try {
    text = await readFile(o.file, 'utf8');
  } catch (err) {
    throw new CliError(
      'usage',
      `cannot read scenario file ${o.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new CliError('usage', `${o.file}: not YAML or JSON: ${(err as Error).message}`, { cause: err });
  }
  if (typeof doc !== 'object' || doc === null)
    throw new CliError('usage', `${o.file}: expected a scenario document`);
  let gateways = await selectGateways(ctx, o.node);
  const named = scenarioNodes(doc);
  if (named) {
    const names = await Promise.all(gateways.map((g) => g.nodeName()));
    const missing = [...named].filter((n) => !names.includes(n) && o.node === null);
    if (missing.length === named.size) {
      throw new CliError(
        'not-found',
        `${o.file}: its steps name ${[...named].join(', ')}, which no gateway serves`,
      );
    }
    for (const n of missing)
      ctx.io.stderr(`warning: ${o.file}: no gateway serves node ${n}; its steps are skipped\n`);
    gateways = gateways.filter((_, i) => named.has(names[i]!));
    if (gateways.length === 0) throw new CliError('not-found', `${o.file}: no step targets node ${o.node}`);
  }
  const answers = await fanOut(ctx, gateways, async (g) => ({
    node: await g.nodeName(),
    ...(await g.request<{ id: string; scenario: ScenarioState }>('/api/v1/scenarios', {
      method: 'POST',
      body: text,
      contentType: 'application/yaml',
      mutation: true,
    })),
  }));
  const rows = answers.map((a) => a.value);
  if (ctx.output !== 'table') {
    printResult(ctx, { items: rows.map((r) => ({ node: r.node, ...r.scenario })) }, '');
    return;
  }
  for (const r of rows) {
    const steps = r.scenario.steps.filter((s) => s.status !== 'skipped').length;
    ctx.io.stdout(
      `scenario ${r.id} (${r.scenario.name}) started on ${r.node}: ${steps} step(s), ends ${r.scenario.expiresAt}\n`,
    );
  }
}

export async function scenarioListCommand(ctx: CommandContext, o: { node: string | null }): Promise<void> {
  const answers = await fanOut(ctx, await selectGateways(ctx, o.node), async (g) => ({
    node: await g.nodeName(),
    items: (await g.request<{ items: ScenarioState[] }>('/api/v1/scenarios')).items,
  }));
  const now = ctx.io.now();
  const rows = answers.flatMap(({ value }) => value.items.map((s) => ({ node: value.node, ...s })));
  printList(
    ctx,
    rows,
    [
      { header: 'node', value: (r) => r.node },
      { header: 'id', value: (r) => r.id },
      { header: 'name', value: (r) => r.name },
      { header: 'age', value: (r) => age(r.startedAt, now) },
      {
        header: 'steps',
        value: (r) => `${r.steps.filter((s) => s.status === 'done').length}/${r.steps.length} done`,
      },
      { header: 'faults', value: (r) => r.faultIds.length },
      { header: 'ends', value: (r) => r.expiresAt },
    ],
    rows,
    'No running scenarios.',
  );
}

export async function scenarioStopCommand(
  ctx: CommandContext,
  o: { node: string | null; ids: string[]; all: boolean },
): Promise<void> {
  const gateways = await selectGateways(ctx, o.node);
  if (o.all) {
    const answers = await fanOut(ctx, gateways, async (g) => {
      await g.request('/api/v1/scenarios', { method: 'DELETE', mutation: true });
      return g.nodeName();
    });
    for (const a of answers)
      printResult(ctx, { node: a.value, stopped: 'all' }, `every scenario stopped on ${a.value}`);
    return;
  }
  for (const id of o.ids) {
    const path = `/api/v1/scenarios/${encodeURIComponent(id)}`;
    const holder = await findHolder(gateways, path);
    if (!holder) {
      throw new CliError(
        'not-found',
        `no running scenario "${id}"${o.node ? ` on node ${o.node}` : ' on any node'}`,
      );
    }
    await holder.request(path, { method: 'DELETE', mutation: true });
    const node = await holder.nodeName();
    printResult(ctx, { node, id }, `scenario ${id} stopped on ${node}`);
  }
}

/**
 * The gateway that holds `path` (a fault or scenario): IDs are per gateway, so ask each one with a
 * read first and send the mutation only where the item exists.
 */
async function findHolder(gateways: GatewayConnection[], path: string): Promise<GatewayConnection | null> {
  const holders = await Promise.all(
    gateways.map((g) =>
      g.request(path).then(
        () => g,
        (err: unknown) => {
          if (err instanceof CliError && err.code === 'not-found') return null;
          throw err;
        },
      ),
    ),
  );
  return holders.find((g): g is GatewayConnection => g !== null) ?? null;
}
