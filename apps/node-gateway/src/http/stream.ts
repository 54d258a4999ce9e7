// GET /api/v1/stream: the node model over WebSocket. Each view (full snapshot, summary) is a channel
// with its own sequence numbers and a bounded history of patches for `?since=N` resume. Every message
// is serialised once per broadcast into a Buffer shared by all clients; each client's send queue is
// bounded by bytes and a client that exceeds it is closed with CLOSE_SLOW_CONSUMER instead of growing
// memory or delaying the others.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, WebSocket } from 'ws';
import {
  CLOSE_GOING_AWAY,
  CLOSE_POLICY,
  CLOSE_SLOW_CONSUMER,
  CLOSE_TRY_AGAIN_LATER,
  type JsonPatchOp,
  type StreamView,
} from '@plugboard/api';

export type { StreamView };

export interface StreamOptions {
  heartbeatMs: number;
  maxQueueBytes: number;
  historySize: number;
  maxClients: number;
  /** How long a closed slow client may take to finish the close handshake before it is terminated. */
  closeGraceMs?: number;
  now?: () => Date;
  /**
   * First sequence number. The gateway starts from its start time in microseconds, so sequence
   * numbers grow across restarts and a `?since=` from before a restart gets a fresh snapshot
   * instead of patches meant for another document.
   */
  initialSeq?: number;
  onClientChange?: (view: StreamView, delta: 1 | -1) => void;
  onDrop?: (view: StreamView, reason: 'slow' | 'dead' | 'protocol') => void;
  /** Called when a patch has been handed to every client (for latency metrics/benchmarks). */
  onBroadcast?: (view: StreamView, seq: number, bytes: number, clients: number) => void;
}

interface Frame {
  seq: number;
  data: Buffer;
}

class Client {
  alive = true;
  closing = false;
  constructor(
    readonly ws: WebSocket,
    /** Opted in to `history` messages (`?history=true`). */
    readonly history = false,
  ) {}
}

/** One view of the model: current document, sequence number, patch history and its clients. */
export class StreamChannel<T> {
  seq: number;
  readonly clients = new Set<Client>();
  private document: T;
  private snapshotFrame: Frame | null = null;
  private readonly history: Frame[] = [];

  constructor(
    readonly view: StreamView,
    initial: T,
    private readonly hub: StreamHub,
  ) {
    this.document = initial;
    this.seq = hub.options.initialSeq;
  }

  /** Publishes a patch that turned the previous document into `document`. */
  publish(document: T, ops: JsonPatchOp[]): void {
    this.document = document;
    this.snapshotFrame = null;
    if (ops.length === 0) return;
    const seq = ++this.seq;
    const frame: Frame = { seq, data: Buffer.from(JSON.stringify({ type: 'patch', seq, ops })) };
    this.history.push(frame);
    if (this.history.length > this.hub.options.historySize) this.history.shift();
    let n = 0;
    for (const c of this.clients) if (this.hub.send(c, frame.data, this.view)) n++;
    this.hub.options.onBroadcast?.(this.view, seq, frame.data.length, n);
  }

  /**
   * Sends an out-of-sequence message (e.g. `history`) to the clients that opted in. It carries the
   * channel's current seq and is serialised once per channel, not per client.
   */
  extra(body: Record<string, unknown>): void {
    let data: Buffer | null = null;
    for (const c of this.clients) {
      if (!c.history) continue;
      data ??= Buffer.from(JSON.stringify({ ...body, seq: this.seq }));
      this.hub.send(c, data, this.view);
    }
  }

  heartbeat(at: string): void {
    if (this.clients.size === 0) return;
    const data = Buffer.from(JSON.stringify({ type: 'heartbeat', seq: this.seq, at }));
    for (const c of this.clients) this.hub.send(c, data, this.view);
  }

  /** The snapshot message for the current seq, serialised at most once per seq. */
  snapshot(): Buffer {
    this.snapshotFrame ??= {
      seq: this.seq,
      data: Buffer.from(JSON.stringify({ type: 'snapshot', seq: this.seq, node: this.document })),
    };
    return this.snapshotFrame.data;
  }

  /** Frames a client resuming after `since` needs, or null when history does not reach back. */
  resume(since: number): Buffer[] | null {
    if (since > this.seq) return null;
    if (since === this.seq) return [];
    const first = this.history[0];
    if (!first || first.seq > since + 1) return null;
    return this.history.slice(since + 1 - first.seq).map((f) => f.data);
  }

  add(client: Client, since: number | null): void {
    this.clients.add(client);
    const frames = since === null ? null : this.resume(since);
    if (frames === null) this.hub.send(client, this.snapshot(), this.view);
    else for (const f of frames) if (!this.hub.send(client, f, this.view)) break;
  }
}

export class StreamHub {
  readonly wss: WebSocketServer;
  readonly channels: { full: StreamChannel<unknown>; summary: StreamChannel<unknown> };
  private readonly timer: NodeJS.Timeout;
  readonly options: Required<Omit<StreamOptions, 'onClientChange' | 'onDrop' | 'onBroadcast'>> &
    Pick<StreamOptions, 'onClientChange' | 'onDrop' | 'onBroadcast'>;

  constructor(options: StreamOptions, initial: { full: unknown; summary: unknown }) {
    this.options = { closeGraceMs: 5000, now: () => new Date(), initialSeq: 0, ...options };
    this.wss = new WebSocketServer({
      noServer: true,
      perMessageDeflate: false,
      maxPayload: 4096,
      clientTracking: false,
    });
    this.channels = {
      full: new StreamChannel('full', initial.full, this),
      summary: new StreamChannel('summary', initial.summary, this),
    };
    this.timer = setInterval(() => this.tick(), this.options.heartbeatMs);
    this.timer.unref();
  }

  get clientCount(): number {
    return this.channels.full.clients.size + this.channels.summary.clients.size;
  }

  /** Completes an upgrade already checked by the HTTP layer (origin, query). */
  accept(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    view: StreamView,
    since: number | null,
    history = false,
  ): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const channel = this.channels[view];
      if (this.clientCount >= this.options.maxClients) {
        ws.close(CLOSE_TRY_AGAIN_LATER, `too many stream clients (max ${this.options.maxClients})`);
        return;
      }
      const client = new Client(ws, history);
      ws.on('pong', () => (client.alive = true));
      ws.on('message', () => {
        // The stream is one-way: anything a client sends is a protocol violation.
        this.options.onDrop?.(view, 'protocol');
        this.close(client, CLOSE_POLICY, 'the stream is read-only; clients must not send messages');
      });
      ws.on('error', () => ws.terminate());
      ws.on('close', () => {
        if (channel.clients.delete(client)) this.options.onClientChange?.(view, -1);
      });
      this.options.onClientChange?.(view, 1);
      channel.add(client, since);
    });
  }

  /** Sends one pre-serialised frame; false when the client was (or is now) cut off. */
  send(client: Client, data: Buffer, view: StreamView): boolean {
    if (client.closing || client.ws.readyState !== WebSocket.OPEN) return false;
    // A message always fits an empty queue (a snapshot may exceed the limit on its own).
    const queued = client.ws.bufferedAmount;
    if (queued > 0 && queued + data.length > this.options.maxQueueBytes) {
      this.options.onDrop?.(view, 'slow');
      this.close(
        client,
        CLOSE_SLOW_CONSUMER,
        `slow consumer: more than ${this.options.maxQueueBytes} bytes queued; reconnect with ?since=N`,
      );
      return false;
    }
    client.ws.send(data, { binary: false });
    return true;
  }

  private close(client: Client, code: number, reason: string): void {
    if (client.closing) return;
    client.closing = true;
    for (const ch of Object.values(this.channels)) {
      if (ch.clients.delete(client)) this.options.onClientChange?.(ch.view, -1);
    }
    client.ws.close(code, reason.slice(0, 120));
    // A client that does not read will not complete the close handshake either.
    setTimeout(() => client.ws.terminate(), this.options.closeGraceMs).unref();
  }

  private tick(): void {
    const at = this.options.now().toISOString();
    for (const ch of Object.values(this.channels)) {
      for (const c of ch.clients) {
        if (!c.alive) {
          this.options.onDrop?.(ch.view, 'dead');
          this.close(c, CLOSE_GOING_AWAY, 'no pong within a heartbeat interval');
          continue;
        }
        c.alive = false;
        c.ws.ping();
      }
      ch.heartbeat(at);
    }
  }

  /** Closes every client (1001), giving each up to `graceMs` to finish the handshake. */
  async closeAll(graceMs = 1000): Promise<void> {
    clearInterval(this.timer);
    const clients = Object.values(this.channels).flatMap((ch) => [...ch.clients]);
    const closed = clients.map(
      (c) =>
        new Promise<void>((resolve) =>
          c.ws.readyState === WebSocket.CLOSED ? resolve() : c.ws.once('close', () => resolve()),
        ),
    );
    for (const c of clients) this.close(c, CLOSE_GOING_AWAY, 'gateway shutting down');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(closed), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    for (const c of clients) c.ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}
