// A browser WebSocket that keeps one live document current: reconnects with backoff, resumes with
// `since`, falls back to a fresh snapshot when resume fails, watches heartbeats, and pauses while
// the tab is hidden (a hidden dashboard should cost the gateways nothing).
import { Backoff } from '@plugboard/apimachinery';
import type { LiveMessage } from './live-document';

export type LinkState = 'connecting' | 'live' | 'reconnecting' | 'paused' | 'failed';

export interface LinkStatus {
  state: LinkState;
  /** When `state` last changed (epoch ms). */
  since: number;
  /** Last error the server or socket reported. */
  error: string | null;
}

export interface LiveStreamOptions<T> {
  /** URL to open; `since` is the last applied seq when resuming. */
  url: (since: number | null) => string;
  /** Applies a message; returns 'resync' when the document needs a fresh start. */
  onMessage: (msg: LiveMessage<T>) => 'ok' | 'resync' | 'error';
  /** Current seq of the cached document (for resume). */
  currentSeq: () => number | null;
  onStatus: (status: LinkStatus) => void;
  /** Heartbeat silence after which the link is considered dead. */
  silenceMs?: number;
  WebSocketImpl?: typeof WebSocket;
  doc?: Pick<Document, 'hidden' | 'addEventListener' | 'removeEventListener'>;
}

/**
 * Reconnect delays: 500 ms doubling up to 10 s, each ±20 %. wait.Backoff's jitter only adds, so the
 * base is 0.8 × that and the jitter 0.5: 400–600 ms, 800–1200 ms, … 8–12 s.
 */
const reconnectBackoff = (): Backoff =>
  new Backoff({ duration: 400, factor: 2, jitter: 0.5, steps: Infinity, cap: 8000 });

export class LiveStream<T> {
  private ws: WebSocket | null = null;
  private backoff = reconnectBackoff();
  private retry: ReturnType<typeof setTimeout> | undefined;
  private silence: ReturnType<typeof setTimeout> | undefined;
  private stopped = true;
  private resumeAllowed = true;
  private resyncStreak = 0;
  private status: LinkStatus = { state: 'connecting', since: Date.now(), error: null };

  constructor(private readonly opts: LiveStreamOptions<T>) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.opts.doc?.addEventListener('visibilitychange', this.onVisibility);
    if (this.opts.doc?.hidden) this.setStatus('paused', null);
    else this.open();
  }

  stop(): void {
    this.stopped = true;
    this.opts.doc?.removeEventListener('visibilitychange', this.onVisibility);
    clearTimeout(this.retry);
    clearTimeout(this.silence);
    this.closeSocket();
  }

  private readonly onVisibility = () => {
    if (this.stopped) return;
    if (this.opts.doc?.hidden) {
      clearTimeout(this.retry);
      this.retry = undefined;
      this.closeSocket();
      this.setStatus('paused', null);
    } else if (!this.ws) {
      this.backoff = reconnectBackoff();
      this.open();
    }
  };

  private setStatus(state: LinkState, error: string | null): void {
    if (this.status.state === state && this.status.error === error) return;
    this.status = { state, since: this.status.state === state ? this.status.since : Date.now(), error };
    this.opts.onStatus(this.status);
  }

  private closeSocket(): void {
    const ws = this.ws;
    this.ws = null;
    if (!ws) return;
    ws.onopen = ws.onmessage = ws.onclose = null;
    // Closing a socket that is still connecting reports an error; it is expected, so swallow it
    // (some WebSocket implementations throw when an error has no listener).
    ws.onerror = () => {};
    if (ws.readyState === ws.CONNECTING || ws.readyState === ws.OPEN) ws.close(1000);
  }

  private armSilence(): void {
    clearTimeout(this.silence);
    this.silence = setTimeout(
      () => this.fail('no data or heartbeat from the server; reconnecting'),
      this.opts.silenceMs ?? 45_000,
    );
  }

  private open(): void {
    const Impl = this.opts.WebSocketImpl ?? WebSocket;
    const since = this.resumeAllowed ? this.opts.currentSeq() : null;
    if (this.status.state !== 'reconnecting' && this.status.state !== 'failed')
      this.setStatus('connecting', this.status.error);
    const ws = new Impl(this.opts.url(since));
    this.ws = ws;
    ws.onopen = () => {
      this.armSilence();
      // A resume that is already up to date gets no message until the next change or heartbeat;
      // the document is current, so the link is live now (a failing upstream reports an error).
      if (since !== null) this.setStatus('live', null);
    };
    ws.onmessage = (ev: MessageEvent) => {
      let msg: LiveMessage<T>;
      try {
        msg = JSON.parse(String(ev.data)) as LiveMessage<T>;
      } catch {
        return;
      }
      this.armSilence();
      const r = this.opts.onMessage(msg);
      if (r === 'resync') {
        // First try to resume with `since` (the server replays the missing patches); if that still
        // does not fit, the server's history is gone or the document diverged: take a snapshot.
        this.resyncStreak += 1;
        this.resumeAllowed = this.resyncStreak < 2;
        this.reconnectNow();
        return;
      }
      if (r === 'error' && msg.type === 'error') {
        this.setStatus('failed', msg.detail || msg.title);
        return;
      }
      if (msg.type === 'snapshot' || msg.type === 'patch') {
        this.resumeAllowed = true;
        this.resyncStreak = 0;
        this.backoff = reconnectBackoff();
      }
      this.setStatus('live', null);
    };
    ws.onclose = (ev: CloseEvent) => {
      const reason = ev.reason ? `${ev.reason} (${ev.code})` : `connection closed (${ev.code})`;
      this.fail(this.status.state === 'failed' ? (this.status.error ?? reason) : reason);
    };
    ws.onerror = () => {
      /* onclose follows with the code */
    };
  }

  private reconnectNow(): void {
    this.closeSocket();
    clearTimeout(this.retry);
    this.retry = undefined;
    if (!this.stopped) this.open();
  }

  private fail(reason: string): void {
    clearTimeout(this.silence);
    this.closeSocket();
    if (this.stopped || this.retry) return;
    this.setStatus(this.status.state === 'failed' ? 'failed' : 'reconnecting', reason);
    const delay = this.backoff.step();
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (!this.stopped && !this.opts.doc?.hidden) this.open();
    }, delay);
  }
}
