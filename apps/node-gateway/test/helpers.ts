// Shared helpers of the gateway's tests: waiting on conditions with a deadline and a WebSocket
// client that records what it receives.
import { EventEmitter } from 'node:events';
import { WebSocket } from 'ws';
import type { NodeSnapshot, StreamMessage } from '../src/model/types.js';

/** What the gateway sends (it never sends `error` frames; it closes with a code instead). */
export type Msg = Exclude<StreamMessage<NodeSnapshot>, { type: 'error' }>;

export async function waitFor<T>(
  what: string,
  fn: () => T | undefined | false | null | Promise<T | undefined | false | null>,
  timeoutMs = 5000,
  intervalMs = 10,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`,
      );
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export interface StreamClient {
  ws: WebSocket;
  messages: Msg[];
  /** performance.now() at which each message of `messages` arrived (same index). */
  arrivals: number[];
  closed: Promise<{ code: number; reason: string }>;
  next(pred: (m: Msg) => boolean, what: string, timeoutMs?: number): Promise<Msg>;
  close(): Promise<void>;
}

export async function connectStream(url: string, options: { origin?: string } = {}): Promise<StreamClient> {
  const ws = new WebSocket(url, options.origin ? { origin: options.origin } : {});
  const messages: Msg[] = [];
  const arrivals: number[] = [];
  const arrived = new EventEmitter();
  ws.on('message', (data) => {
    arrivals.push(performance.now());
    messages.push(JSON.parse((data as Buffer).toString('utf8')) as Msg);
    arrived.emit('message');
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let cursor = 0;
  const scan = (pred: (m: Msg) => boolean): Msg | undefined => {
    for (; cursor < messages.length; cursor++) {
      if (pred(messages[cursor]!)) return messages[cursor++]!;
    }
    return undefined;
  };
  return {
    ws,
    messages,
    arrivals,
    closed,
    // Resolves on the message event that brings a match (no polling), or fails after timeoutMs.
    next(pred, what, timeoutMs = 5000) {
      const found = scan(pred);
      if (found) return Promise.resolve(found);
      return new Promise<Msg>((resolve, reject) => {
        const onMessage = (): void => {
          const m = scan(pred);
          if (!m) return;
          clearTimeout(timer);
          arrived.off('message', onMessage);
          resolve(m);
        };
        const timer = setTimeout(() => {
          arrived.off('message', onMessage);
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
        }, timeoutMs);
        arrived.on('message', onMessage);
      });
    },
    async close() {
      if (ws.readyState === WebSocket.CLOSED) return;
      ws.close();
      await closed;
    },
  };
}
