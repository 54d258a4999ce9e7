// The overview's data: one `view=summary` WebSocket per gateway, shared by every browser, folded
// into one ClusterDocument that browsers receive as snapshot + JSON Patch on /api/cluster/stream.
// Clusters have hundreds of nodes, so browsers never open a socket per gateway. Upstream bursts
// are coalesced into one patch per tick and each patch is serialised once for all subscribers.
import type { Logger } from 'pino';
import { WebSocket, type RawData } from 'ws';
import { Backoff } from '@plugboard/apimachinery';
import {
  type NodeSummary,
  type StreamMessage,
  applyPatchImmutable,
  checkSequence,
  CLOSE_SLOW_CONSUMER,
  pointerToken,
  type JsonPatchOp,
} from '@plugboard/api';
import type { ClusterDocument, ClusterNode, GatewayLinkStatus } from '../lib/cluster-types';
import type { GatewayEntry } from './config';
import type { GatewayDirectory } from './gateway-directory';
import { causeText } from './errors';

const FLUSH_MS = 25;
const HEARTBEAT_MS = 15_000;
/** No upstream message (heartbeats included) for this long: the link is dead even if TCP is not. */
const UPSTREAM_SILENCE_MS = 45_000;
const IDLE_STOP_MS = 60_000;
const MAX_BUFFERED_BYTES = 8 << 20;
/**
 * Upstream reconnect delays: 500 ms doubling up to 15 s, each ±20 %. wait.Backoff's jitter only
 * adds, so the base is 0.8 × that and the jitter 0.5: 400–600 ms, 800–1200 ms, … 12–18 s.
 */
const reconnectBackoff = (): Backoff =>
  new Backoff({ duration: 400, factor: 2, jitter: 0.5, steps: Infinity, cap: 12_000 });

class UpstreamLink {
  private ws: WebSocket | null = null;
  private seq: number | null = null;
  private backoff = reconnectBackoff();
  private retry: NodeJS.Timeout | undefined;
  private silence: NodeJS.Timeout | undefined;
  private stopped = false;
  private everLive = false;
  /** Resolves once the first attempt has a result (live or failed): /api/cluster waits for it. */
  readonly firstResult: Promise<void>;
  private settleFirst!: () => void;

  constructor(
    readonly gateway: GatewayEntry,
    private readonly hub: ClusterHub,
    private readonly readToken: string | null,
  ) {
    this.firstResult = new Promise((resolve) => (this.settleFirst = resolve));
    this.connect();
  }

  private connect(): void {
    if (this.stopped) return;
    const since = this.seq !== null ? `&since=${this.seq}` : '';
    const ws = new WebSocket(
      `${this.gateway.url.replace(/^http/, 'ws')}/api/v1/stream?view=summary${since}`,
      {
        perMessageDeflate: false,
        handshakeTimeout: 10_000,
        ...(this.readToken ? { headers: { authorization: `Bearer ${this.readToken}` } } : {}),
      },
    );
    this.ws = ws;
    ws.on('message', (data) => this.onMessage(rawText(data)));
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      this.onDown(`gateway answered HTTP ${res.statusCode ?? '?'} to the stream upgrade`);
      ws.terminate();
    });
    ws.on('error', (err) => this.onDown(causeText(err)));
    ws.on('close', (code, reason) =>
      this.onDown(`stream closed (${code}${reason.length ? ` ${reason.toString()}` : ''})`),
    );
  }

  private armSilence(): void {
    clearTimeout(this.silence);
    this.silence = setTimeout(() => {
      this.onDown(`no message from the gateway for ${UPSTREAM_SILENCE_MS / 1000}s`);
      this.ws?.terminate();
    }, UPSTREAM_SILENCE_MS);
  }

  private onMessage(text: string): void {
    let msg: StreamMessage<NodeSummary>;
    try {
      msg = JSON.parse(text) as StreamMessage<NodeSummary>;
    } catch {
      return;
    }
    this.armSilence();
    const base = `/nodes/${pointerToken(this.gateway.name)}`;
    if (msg.type === 'error') {
      this.onDown(`${msg.title}: ${msg.detail}`);
      return;
    }
    const check = checkSequence(this.seq, msg);
    if (check.kind === 'gap') {
      // Missed something: reconnect with since; the gateway replays or sends a snapshot.
      this.ws?.terminate();
      return;
    }
    if (check.kind === 'skip') return;
    switch (msg.type) {
      case 'snapshot':
        this.seq = msg.seq;
        this.everLive = true;
        this.backoff = reconnectBackoff();
        this.hub.replaceNode(this.entry('live', null, msg.node));
        this.settleFirst();
        break;
      case 'patch':
        this.seq = msg.seq;
        this.hub.queue(msg.ops.map((op) => prefixOp(op, `${base}/summary`)));
        break;
      case 'heartbeat':
        break;
    }
  }

  private entry(status: GatewayLinkStatus, error: string | null, summary: NodeSummary | null): ClusterNode {
    return { name: this.gateway.name, status, since: new Date().toISOString(), error, summary };
  }

  private onDown(reason: string): void {
    clearTimeout(this.silence);
    // error and close both report one failure; the first one carries the useful cause.
    if (this.stopped || this.retry) return;
    const current = this.hub.node(this.gateway.name);
    const status: GatewayLinkStatus = this.everLive ? 'reconnecting' : 'unreachable';
    if (current?.status !== status || current.error !== reason) {
      // Keep the last summary: stale data with its age beats a blank row.
      this.hub.replaceNode({
        ...this.entry(status, reason, current?.summary ?? null),
        since: current?.status === status ? current.since : new Date().toISOString(),
      });
    }
    this.settleFirst();
    const delay = this.backoff.step();
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.ws?.removeAllListeners();
      this.ws?.on('error', () => {});
      this.ws?.terminate();
      this.connect();
    }, delay);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    clearTimeout(this.silence);
    this.settleFirst();
    if (this.ws) {
      this.ws.removeAllListeners();
      this.ws.on('error', () => {});
      this.ws.terminate();
    }
  }
}

/** A received frame as text (ws hands out Buffer, ArrayBuffer or fragments). */
function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

function prefixOp(op: JsonPatchOp, base: string): JsonPatchOp {
  if (op.op === 'move' || op.op === 'copy') return { ...op, from: base + op.from, path: base + op.path };
  return { ...op, path: base + op.path };
}

export class ClusterHub {
  private doc: ClusterDocument;
  private seq = 0;
  private pending: JsonPatchOp[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly links = new Map<string, UpstreamLink>();
  private readonly subscribers = new Set<WebSocket>();
  private running = false;
  private unsubscribeDirectory: (() => void) | null = null;

  constructor(
    private readonly directory: GatewayDirectory,
    private readonly logger: Logger,
    private readonly readToken: string | null = null,
  ) {
    this.doc = { discovery: directory.status(), nodes: {} };
  }

  node(name: string): ClusterNode | undefined {
    return this.doc.nodes[name];
  }

  replaceNode(entry: ClusterNode): void {
    const path = `/nodes/${pointerToken(entry.name)}`;
    this.queue([{ op: this.doc.nodes[entry.name] ? 'replace' : 'add', path, value: entry }]);
  }

  queue(ops: JsonPatchOp[]): void {
    if (ops.length === 0) return;
    try {
      this.doc = applyPatchImmutable(this.doc, ops);
    } catch (err) {
      // An upstream patch that does not fit its summary: resync that link rather than corrupt the doc.
      this.logger.warn(
        { component: 'cluster-hub', err: (err as Error).message },
        'dropping unappliable summary patch',
      );
      return;
    }
    this.pending.push(...ops);
    this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.pending.length === 0) return;
    this.seq += 1;
    const text = JSON.stringify({ type: 'patch', seq: this.seq, ops: this.pending });
    this.pending = [];
    this.broadcast(text);
  }

  private broadcast(text: string): void {
    for (const ws of this.subscribers) {
      if (ws.readyState !== WebSocket.OPEN) continue;
      if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
        ws.close(CLOSE_SLOW_CONSUMER, 'slow consumer');
        continue;
      }
      ws.send(text);
    }
  }

  private syncLinks(): void {
    const wanted = new Map(this.directory.list().map((g) => [g.name, g]));
    for (const [name, link] of this.links) {
      const g = wanted.get(name);
      if (!g || g.url !== link.gateway.url) {
        link.stop();
        this.links.delete(name);
        if (!g && this.doc.nodes[name]) this.queue([{ op: 'remove', path: `/nodes/${pointerToken(name)}` }]);
      }
    }
    for (const [name, g] of wanted) {
      if (this.links.has(name)) continue;
      if (!this.doc.nodes[name]) {
        this.replaceNode({
          name,
          status: 'connecting',
          since: new Date().toISOString(),
          error: null,
          summary: null,
        });
      }
      this.links.set(name, new UpstreamLink(g, this, this.readToken));
    }
    const st = this.directory.status();
    const d = this.doc.discovery;
    if (st.error !== d.error || st.source !== d.source || st.mode !== d.mode) {
      this.queue([{ op: 'replace', path: '/discovery', value: st }]);
    }
  }

  private ensureRunning(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (this.running) return;
    this.running = true;
    this.unsubscribeDirectory = this.directory.subscribe(() => this.syncLinks());
    this.syncLinks();
    this.heartbeat = setInterval(() => {
      this.flush();
      this.broadcast(JSON.stringify({ type: 'heartbeat', seq: this.seq, at: new Date().toISOString() }));
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
    this.logger.info(
      { component: 'cluster-hub', gateways: this.links.size },
      'cluster summary streams started',
    );
  }

  /** Upstream streams run while anyone watches; they stop a minute after the last viewer leaves. */
  private scheduleIdleStop(): void {
    if (this.subscribers.size > 0 || this.idleTimer) return;
    this.idleTimer = setTimeout(() => this.stopLinks(), IDLE_STOP_MS);
    this.idleTimer.unref();
  }

  private stopLinks(): void {
    this.idleTimer = undefined;
    if (!this.running || this.subscribers.size > 0) return;
    this.running = false;
    clearInterval(this.heartbeat);
    this.unsubscribeDirectory?.();
    for (const link of this.links.values()) link.stop();
    this.links.clear();
    this.logger.info({ component: 'cluster-hub' }, 'cluster summary streams stopped (no viewers)');
  }

  /** Current document, after every gateway's first attempt has a result (bounded wait). */
  async current(maxWaitMs = 3000): Promise<{ seq: number; doc: ClusterDocument }> {
    this.ensureRunning();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([...this.links.values()].map((l) => l.firstResult)),
      new Promise((resolve) => (timer = setTimeout(resolve, maxWaitMs))),
    ]);
    clearTimeout(timer);
    this.flush();
    this.scheduleIdleStop();
    return { seq: this.seq, doc: this.doc };
  }

  subscribe(ws: WebSocket): void {
    this.ensureRunning();
    this.flush();
    this.subscribers.add(ws);
    ws.send(JSON.stringify({ type: 'snapshot', seq: this.seq, node: this.doc }));
    ws.on('close', () => {
      this.subscribers.delete(ws);
      this.scheduleIdleStop();
    });
    ws.on('error', () => ws.terminate());
  }

  stop(): Promise<void> {
    for (const ws of this.subscribers) ws.close(1001, 'server shutting down');
    this.subscribers.clear();
    clearTimeout(this.idleTimer);
    this.stopLinks();
    clearTimeout(this.flushTimer);
    return Promise.resolve();
  }
}
