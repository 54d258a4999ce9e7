// A client of one gateway, wherever it runs (the plugboard-gateway binary through gatewayProcess,
// or an app's test's in-process gateway): the snapshot, waiting for a condition on the live stream
// (snapshot + JSON Patch, resuming with `?since=` on a gap: checked on every change, no polling),
// and faults with the bearer token.
import { WebSocket } from 'ws';
import {
  applyPatchImmutable,
  checkSequence,
  type FaultBody,
  type FaultState,
  type NodeSnapshot,
  type StreamMessage,
} from '@plugboard/api';

export interface FaultAdded {
  id: string;
  /** The fault with its observed state when the gateway answered. */
  fault: FaultState | null;
}

export interface GatewayClient {
  /** http://127.0.0.1:PORT */
  url: string;
  /** GET /api/v1/node. */
  snapshot(): Promise<NodeSnapshot>;
  /**
   * Resolves with the first snapshot satisfying `predicate`, following the gateway's WebSocket
   * stream (snapshot + JSON Patch): checked on every change, no polling. A predicate that throws
   * counts as "not yet" (its last error is in the timeout message).
   */
  waitForSnapshot(
    predicate: (s: NodeSnapshot) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<NodeSnapshot>;
  /** POST /api/v1/faults and DELETE /api/v1/faults/{id}, with the bearer token when there is one. */
  faults: {
    add(body: FaultBody): Promise<FaultAdded>;
    remove(id: string): Promise<void>;
  };
}

export interface GatewayClientOptions {
  /** Bearer token for mutations. */
  token?: string | null;
  /** Whose gateway, for error messages (the node's name). */
  name?: string;
  /** Why the gateway may have gone, appended to a stream's error (gatewayProcess: its exit and log tail). */
  whyClosed?: () => string;
}

/** A client of the gateway at `url`. */
export function gatewayClient(url: string, options: GatewayClientOptions = {}): GatewayClient {
  const token = options.token ?? null;
  const name = options.name ?? url;
  const whyClosed = options.whyClosed ?? ((): string => '');
  const request = async (method: string, path: string, body?: unknown): Promise<Response> => {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token !== null) headers.authorization = `Bearer ${token}`;
    const res = await fetch(`${url}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    if (!res.ok) throw new Error(`${name}: ${method} ${path}: HTTP ${res.status}: ${await res.text()}`);
    return res;
  };

  const waitForSnapshot = (
    predicate: (s: NodeSnapshot) => boolean,
    what: string,
    timeoutMs = 10_000,
  ): Promise<NodeSnapshot> =>
    new Promise((resolve, reject) => {
      let doc: NodeSnapshot | null = null;
      let seq: number | null = null;
      let lastError: unknown = null;
      let ws: WebSocket | null = null;
      let done = false;
      const finish = (err: Error | null, snap?: NodeSnapshot): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        ws?.removeAllListeners();
        ws?.on('error', () => {});
        ws?.terminate();
        if (err) reject(err);
        else resolve(snap!);
      };
      const timer = setTimeout(() => {
        const why = lastError instanceof Error ? ` (last check threw: ${lastError.message})` : '';
        finish(new Error(`${name}: timed out after ${timeoutMs} ms waiting for ${what}${why}`));
      }, timeoutMs);
      const check = (snap: NodeSnapshot): void => {
        try {
          if (predicate(snap)) finish(null, snap);
        } catch (err) {
          lastError = err;
        }
      };
      const connect = (): void => {
        const socket = new WebSocket(
          `${url.replace(/^http/, 'ws')}/api/v1/stream${seq === null ? '' : `?since=${seq}`}`,
        );
        ws = socket;
        socket.on('message', (data: Buffer) => {
          const msg = JSON.parse(data.toString('utf8')) as StreamMessage<NodeSnapshot>;
          if (msg.type === 'error') return finish(new Error(`${name}: stream error: ${msg.detail}`));
          const verdict = checkSequence(seq, msg);
          if (verdict.kind === 'skip') return;
          if (verdict.kind === 'gap') {
            // Resume from what we hold: the gateway replays the missed patches or sends a snapshot.
            socket.removeAllListeners();
            socket.on('error', () => {});
            socket.terminate();
            return connect();
          }
          if (msg.type === 'heartbeat') return;
          doc = msg.type === 'snapshot' ? msg.node : applyPatchImmutable(doc!, msg.ops);
          seq = msg.seq;
          check(doc);
        });
        socket.on('close', (code, reason) =>
          finish(
            new Error(
              `${name}: the stream closed (${code} ${String(reason)}) while waiting for ${what}${whyClosed()}`,
            ),
          ),
        );
        socket.on('error', (err) =>
          finish(new Error(`${name}: stream: ${err.message} while waiting for ${what}${whyClosed()}`)),
        );
      };
      connect();
    });

  return {
    url,
    snapshot: async () => (await (await request('GET', '/api/v1/node')).json()) as NodeSnapshot,
    waitForSnapshot,
    faults: {
      add: async (body) => (await (await request('POST', '/api/v1/faults', body)).json()) as FaultAdded,
      remove: async (id) => void (await request('DELETE', `/api/v1/faults/${encodeURIComponent(id)}`)),
    },
  };
}
