// `watch`: live per-node tables fed by each gateway's stream (the full snapshot, then JSON Patches):
// device-plugin counts per resource, DRA drivers' counts, DRA claims, and a line per DRA change
// (device health, what the kubelet was told, taints, faults; claim phases) computed between
// successive snapshots. Redraws in place on a terminal, prints the tables per change otherwise, or
// one JSON line (YAML document) per node change for scripts. A dropped stream reconnects with
// `?since=<last seq>`, so nothing is missed while the gateway still holds the patches; after a gap
// the fresh snapshot is compared with the last one held, so changes made meanwhile still show.
//
// The full view rather than `view=summary`: the summary has counts only, not which device or claim
// changed. The device-plugin counts are the summary's (the same projection of the snapshot).
import {
  applyPatchImmutable,
  checkSequence,
  PatchError,
  type DraDeviceCounts,
  type DraClaimPhase,
  type DraRegistrationPhase,
  type DraState,
  type NodeSnapshot,
  type NodeSummary,
  type StreamMessage,
} from '@plugboard/api';
import { Backoff } from '@plugboard/apimachinery';
import { stringify } from 'yaml';
import type { WebSocket } from 'ws';
import {
  changeText,
  claimDevicesText,
  claimReasonText,
  draChanges,
  draCountColumns,
  type DraChange,
} from '../dra.js';
import { CliError } from '../errors.js';
import { registeredText, renderTable } from '../output.js';
import { selectGateways, type CommandContext } from '../context.js';
import type { GatewayConnection } from '../transport.js';

/** After a failed reconnect: 250 ms doubling up to 5 s. */
const reconnectBackoff = (): Backoff => new Backoff({ duration: 250, factor: 2, steps: Infinity, cap: 5000 });
/** After a stream that was open closes: a short pause, then reconnect. */
const RECONNECT_PAUSE_MS = 250;
const REDRAW_MS = 100;
/** DRA change lines kept under the tables on a terminal. */
const RECENT_CHANGES = 10;

/** The DRA part of a `watch -o json` line. */
export interface WatchDraLine {
  drivers: Record<string, DraDeviceCounts & { registration: DraRegistrationPhase | null }>;
  claims: Record<string, DraClaimPhase>;
  /** What changed since the node's previous line (empty on the first). */
  changes: DraChange[];
}

export async function watchCommand(
  ctx: CommandContext,
  o: { node: string | null; timeoutMs: number | null },
): Promise<void> {
  const gateways = await selectGateways(ctx, o.node);
  const snapshots = new Map<GatewayConnection, NodeSnapshot>();
  /** Per gateway: what its last JSON line said (without the timestamp), to skip lines that repeat it. */
  const lastLine = new Map<GatewayConnection, string>();
  const recent: string[] = [];
  /** Change lines not printed yet (non-terminal output prints each once, under the next tables). */
  const changeLines: string[] = [];
  const sockets = new Set<WebSocket>();
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  ctx.io.signal?.addEventListener('abort', onAbort, { once: true });
  const timer = o.timeoutMs === null ? null : setTimeout(onAbort, o.timeoutMs);

  let redraw: NodeJS.Timeout | null = null;
  let lastTables = '';
  const render = () => {
    redraw = null;
    const unprinted = changeLines.splice(0);
    const tables = watchTables([...snapshots.values()]);
    if (ctx.io.isTTY) {
      const log = recent.length ? `\nRecent DRA changes:\n${recent.join('\n')}\n` : '';
      ctx.io.stdout(
        `\x1b[H\x1b[2J${new Date(ctx.io.now()).toISOString()}  (Ctrl-C to stop)\n\n${tables}${log}`,
      );
    } else if (tables !== lastTables || unprinted.length > 0) {
      // The full view patches on every model change (events, timestamps): print only what differs.
      const log = unprinted.length ? `\n${unprinted.join('\n')}\n` : '';
      ctx.io.stdout(`${tables}${log}\n`);
    }
    lastTables = tables;
  };
  const changed = (g: GatewayConnection, snapshot: NodeSnapshot) => {
    const changes = draChanges(snapshots.get(g)?.dra, snapshot.dra);
    snapshots.set(g, snapshot);
    const at = new Date(ctx.io.now()).toISOString();
    if (ctx.output !== 'table') {
      const node = summaryOf(snapshot);
      const dra = snapshot.dra ? draLine(snapshot.dra, changes) : null;
      const key = JSON.stringify([{ ...node, updatedAt: null }, dra]);
      if (key === lastLine.get(g)) return;
      lastLine.set(g, key);
      const line = { at, node, ...(dra ? { dra } : {}) };
      ctx.io.stdout(ctx.output === 'json' ? `${JSON.stringify(line)}\n` : `---\n${stringify(line)}`);
      return;
    }
    for (const c of changes) {
      const text = `${at.slice(11, 19)} ${changeText(snapshot.nodeName, c)}`;
      recent.push(text);
      changeLines.push(text);
    }
    recent.splice(0, Math.max(0, recent.length - RECENT_CHANGES));
    redraw ??= setTimeout(render, REDRAW_MS);
  };

  /** Follows one gateway until stopped; resolves when stopped, rejects if the first connect fails. */
  const follow = async (g: GatewayConnection): Promise<void> => {
    // Written by the message handler below, so declared wide (TypeScript cannot see the closure).
    let seq = null as number | null;
    let doc = null as NodeSnapshot | null;
    let retry = reconnectBackoff();
    let first = true;
    while (!stop.signal.aborted) {
      const query = seq === null ? '?view=full' : `?view=full&since=${seq}`;
      let ws: WebSocket | null = null;
      const onMessage = (data: Buffer) => {
        const msg = JSON.parse(data.toString('utf8')) as StreamMessage<NodeSnapshot>;
        if (msg.type === 'error') return;
        const check = checkSequence(seq, msg);
        if (check.kind === 'gap') {
          // A gap: start over with a fresh snapshot.
          seq = null;
          ws?.close();
          return;
        }
        if (check.kind === 'skip') return;
        if (msg.type === 'snapshot') {
          doc = msg.node;
          seq = msg.seq;
          changed(g, doc);
        } else if (msg.type === 'patch' && doc !== null) {
          // (A seq is only ever held with its document.)
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
        await sleep(retry.step(), stop.signal);
        continue;
      }
      first = false;
      retry = reconnectBackoff();
      sockets.add(ws);
      if (stop.signal.aborted) ws.close(1000);
      const open = ws;
      await new Promise<void>((resolve) => {
        open.on('close', () => resolve());
        open.on('error', () => resolve());
      });
      sockets.delete(open);
      if (!stop.signal.aborted) await sleep(RECONNECT_PAUSE_MS, stop.signal);
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

/**
 * The counts the gateway's summary view has (GET /api/v1/summary), projected from the full
 * snapshot: the device plugins' resources as the kubelet sees them, unhealthy devices, active faults.
 */
function summaryOf(s: NodeSnapshot): NodeSummary {
  const resources: NodeSummary['resources'] = {};
  for (const r of Object.values(s.resources)) {
    const phase = r.registration.phase;
    resources[r.name] = {
      ...r.kubelet,
      apiServer: r.apiServer,
      registered: phase === 'registered',
      registration: phase,
    };
  }
  return {
    schema: 1,
    nodeName: s.nodeName,
    updatedAt: s.updatedAt,
    resources,
    unhealthyDevices: Object.values(s.resources).reduce((n, r) => n + r.kubelet.unhealthy, 0),
    activeFaults: Object.keys(s.faults).length,
    faultsEnabled: s.gateway.faultsEnabled,
    sources: s.sources,
  };
}

function draLine(dra: DraState, changes: DraChange[]): WatchDraLine {
  const drivers: WatchDraLine['drivers'] = {};
  for (const d of Object.values(dra.drivers))
    drivers[d.name] = { ...d.counts, registration: d.registration?.phase ?? null };
  const claims: WatchDraLine['claims'] = {};
  for (const c of Object.values(dra.claims)) claims[c.key] = c.phase;
  return { drivers, claims, changes };
}

/**
 * The tables of one redraw: device-plugin resources (what `watch` always showed), then, when a
 * node has DRA data, its drivers and its claims.
 */
export function watchTables(snapshots: NodeSnapshot[]): string {
  const nodes = [...snapshots].sort((a, b) => a.nodeName.localeCompare(b.nodeName));
  const resources = nodes.flatMap((s) => {
    const summary = summaryOf(s);
    return Object.entries(summary.resources)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, r]) => ({ summary, name, r }));
  });
  const drivers = nodes.flatMap((s) =>
    Object.values(s.dra?.drivers ?? {})
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((d) => ({ s, d })),
  );
  const claims = nodes.flatMap((s) =>
    Object.values(s.dra?.claims ?? {})
      .sort((a, b) => a.key.localeCompare(b.key))
      .map((c) => ({ s, c, dra: s.dra! })),
  );
  const tables: string[] = [];
  if (resources.length > 0 || drivers.length === 0) {
    tables.push(
      renderTable(resources, [
        { header: 'node', value: (x) => x.summary.nodeName },
        { header: 'resource', value: (x) => x.name },
        { header: 'capacity', value: (x) => x.r.capacity },
        { header: 'allocatable', value: (x) => x.r.allocatable },
        { header: 'allocated', value: (x) => x.r.allocated },
        { header: 'unhealthy', value: (x) => x.r.unhealthy },
        { header: 'registered', value: (x) => registeredText(x.r) },
        { header: 'faults', value: (x) => x.summary.activeFaults },
      ]),
    );
  }
  if (drivers.length > 0) {
    tables.push(
      renderTable(drivers, [
        { header: 'node', value: (x) => x.s.nodeName },
        { header: 'dra driver', value: (x) => x.d.name },
        ...draCountColumns<(typeof drivers)[number]>((x) => x.d.counts),
        {
          header: 'registered',
          value: (x) => {
            const phase = x.d.registration?.phase;
            // null: a driver this gateway does not run, seen only through its ResourceSlices.
            return phase === undefined
              ? '-'
              : registeredText({ registered: phase === 'registered', registration: phase });
          },
        },
      ]),
    );
  }
  if (claims.length > 0) {
    tables.push(
      renderTable(claims, [
        { header: 'node', value: (x) => x.s.nodeName },
        { header: 'claim', value: (x) => x.c.key },
        { header: 'phase', value: (x) => x.c.phase },
        { header: 'devices', value: (x) => claimDevicesText(x.c, x.dra) },
        { header: 'health', value: (x) => x.c.health ?? '-' },
        { header: 'reason', value: (x) => claimReasonText(x.c) },
      ]),
    );
  }
  return tables.join('\n');
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
