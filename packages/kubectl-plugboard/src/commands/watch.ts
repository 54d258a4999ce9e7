// `watch`: a live per-node, per-resource table fed by each gateway's stream (`view=summary`:
// snapshot, then JSON Patches). Redraws in place on a terminal, prints one table per change
// otherwise, or one JSON line (YAML document) per node change for scripts. A dropped stream
// reconnects with `?since=<last seq>`, so nothing is missed while the gateway still holds the patches.
import { applyPatchImmutable, PatchError, type NodeSummary, type StreamMessage } from '@plugboard/api';
import { stringify } from 'yaml';
import type { WebSocket } from 'ws';
import { CliError } from '../errors.js';
import { registeredText, renderTable } from '../output.js';
import { selectGateways, type CommandContext } from '../context.js';
import type { GatewayConnection } from '../transport.js';

const RECONNECT_MS = [250, 1000, 2000, 5000];
const REDRAW_MS = 100;

export async function watchCommand(
  ctx: CommandContext,
  o: { node: string | null; timeoutMs: number | null },
): Promise<void> {
  const gateways = await selectGateways(ctx, o.node);
  const summaries = new Map<GatewayConnection, NodeSummary>();
  const sockets = new Set<WebSocket>();
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  ctx.io.signal?.addEventListener('abort', onAbort, { once: true });
  const timer = o.timeoutMs === null ? null : setTimeout(onAbort, o.timeoutMs);

  let redraw: NodeJS.Timeout | null = null;
  const render = () => {
    redraw = null;
    const table = summaryTable([...summaries.values()]);
    if (ctx.io.isTTY)
      ctx.io.stdout(`\x1b[H\x1b[2J${new Date(ctx.io.now()).toISOString()}  (Ctrl-C to stop)\n\n${table}`);
    else ctx.io.stdout(`${table}\n`);
  };
  const changed = (g: GatewayConnection, summary: NodeSummary) => {
    summaries.set(g, summary);
    if (ctx.output === 'json')
      ctx.io.stdout(`${JSON.stringify({ at: new Date(ctx.io.now()).toISOString(), node: summary })}\n`);
    else if (ctx.output === 'yaml')
      ctx.io.stdout(`---\n${stringify({ at: new Date(ctx.io.now()).toISOString(), node: summary })}`);
    else redraw ??= setTimeout(render, REDRAW_MS);
  };

  /** Follows one gateway until stopped; resolves when stopped, rejects if the first connect fails. */
  const follow = async (g: GatewayConnection): Promise<void> => {
    // Written by the message handler below, so declared wide (TypeScript cannot see the closure).
    let seq = null as number | null;
    let doc = null as NodeSummary | null;
    let attempt = 0;
    let first = true;
    while (!stop.signal.aborted) {
      const query = seq === null ? '?view=summary' : `?view=summary&since=${seq}`;
      let ws: WebSocket | null = null;
      const onMessage = (data: Buffer) => {
        const msg = JSON.parse(data.toString('utf8')) as StreamMessage<NodeSummary>;
        if (msg.type === 'snapshot') {
          doc = msg.node;
          seq = msg.seq;
          changed(g, doc);
        } else if (msg.type === 'patch') {
          if (doc === null || seq === null || msg.seq !== seq + 1) {
            // A gap: start over with a fresh snapshot.
            seq = null;
            ws?.close();
            return;
          }
          try {
            doc = applyPatchImmutable(doc, msg.ops);
          } catch (err) {
            if (!(err instanceof PatchError)) throw err;
            // A patch that does not fit what we hold: start over with a fresh snapshot too.
            seq = null;
            ws?.close();
            return;
          }
          seq = msg.seq;
          changed(g, doc);
        }
      };
      try {
        ws = await g.openStream(`/api/v1/stream${query}`, onMessage);
      } catch (err) {
        if (first) throw err;
        ctx.io.stderr(`warning: ${CliError.from(err).message}; retrying\n`);
        await sleep(RECONNECT_MS[Math.min(attempt++, RECONNECT_MS.length - 1)]!, stop.signal);
        continue;
      }
      first = false;
      attempt = 0;
      sockets.add(ws);
      if (stop.signal.aborted) ws.close(1000);
      const open = ws;
      await new Promise<void>((resolve) => {
        open.on('close', () => resolve());
        open.on('error', () => resolve());
      });
      sockets.delete(open);
      if (!stop.signal.aborted) await sleep(RECONNECT_MS[0]!, stop.signal);
    }
  };

  const closeAll = () => {
    for (const ws of sockets) ws.close(1000);
  };
  stop.signal.addEventListener('abort', closeAll, { once: true });
  try {
    const results = await Promise.allSettled(gateways.map(follow));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length === gateways.length) throw failed[0]!.reason;
    for (const f of failed) {
      const e = CliError.from(f.reason);
      ctx.io.stderr(`error: ${e.message}\n`);
      ctx.partialErrors.push(e);
    }
  } finally {
    stop.abort();
    if (timer) clearTimeout(timer);
    if (redraw) {
      clearTimeout(redraw);
      render();
    }
    ctx.io.signal?.removeEventListener('abort', onAbort);
  }
}

function summaryTable(summaries: NodeSummary[]): string {
  const rows = summaries
    .sort((a, b) => a.nodeName.localeCompare(b.nodeName))
    .flatMap((s) =>
      Object.entries(s.resources)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, r]) => ({ s, name, r })),
    );
  return renderTable(rows, [
    { header: 'node', value: (x) => x.s.nodeName },
    { header: 'resource', value: (x) => x.name },
    { header: 'capacity', value: (x) => x.r.capacity },
    { header: 'allocatable', value: (x) => x.r.allocatable },
    { header: 'allocated', value: (x) => x.r.allocated },
    { header: 'unhealthy', value: (x) => x.r.unhealthy },
    { header: 'registered', value: (x) => registeredText(x.r) },
    { header: 'faults', value: (x) => x.s.activeFaults },
  ]);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
