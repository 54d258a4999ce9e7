// Shared helpers of the gateway's tests: waiting on conditions with a deadline, a WebSocket
// client that records what it receives, API objects the model tests share, and the gateway's
// API-server requests against a stand-in server.
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { WebSocket } from 'ws';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig, type V1ContainerStatus } from '@kubernetes/client-node';
import type { NodeSnapshot, StreamMessage } from '@plugboard/api';
import { waitFor as waitUntil } from '@plugboard/testbed/wait';
import type { ApiServerRequest } from '../src/sources/api-server-request.js';
import { createApiServerRequest } from '../src/sources/kube.js';

/** What the gateway sends (it never sends `error` frames; it closes with a code instead). */
export type Msg = Exclude<StreamMessage<NodeSnapshot>, { type: 'error' }>;

/**
 * The test bed's waitFor, re-checking every 10 ms (the gateway reacts within milliseconds) with a
 * 15 s deadline — a bound for a CI machine under load, not a pause.
 */
export const waitFor = <T>(
  what: string,
  fn: () => T | undefined | false | null | Promise<T | undefined | false | null>,
  timeoutMs = 15_000,
  intervalMs = 10,
): Promise<T> => waitUntil(what, fn, timeoutMs, intervalMs);

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

/** The CLI arguments that point a gateway process at a kubelet-sim (its sockets and kubeconfig). */
export function simGatewayArgs(
  sim: { devicePluginDir: string; podResourcesSocket: string; kubeconfigPath: string },
  o: { config: string; nodeName: string; listen: string; stateDir: string },
): string[] {
  return [
    '--config',
    o.config,
    '--device-plugin-dir',
    sim.devicePluginDir,
    '--pod-resources-socket',
    sim.podResourcesSocket,
    '--kubeconfig',
    sim.kubeconfigPath,
    '--node-name',
    o.nodeName,
    '--listen',
    o.listen,
    '--state-dir',
    o.stateDir,
  ];
}

/**
 * The process environment the chart's DaemonSet gives the gateway container by default
 * (`gateway.nodeOptions`, `gateway.mallocArenaMax` in deploy/helm/plugboard/values.yaml).
 */
export function chartGatewayEnv(): { NODE_OPTIONS: string; MALLOC_ARENA_MAX?: string } {
  const valuesFile = new URL('../../../deploy/helm/plugboard/values.yaml', import.meta.url);
  const values = parseYaml(readFileSync(valuesFile, 'utf8')) as {
    gateway?: { nodeOptions?: unknown; mallocArenaMax?: unknown };
  };
  const { nodeOptions, mallocArenaMax } = values.gateway ?? {};
  if (typeof nodeOptions !== 'string')
    throw new Error(`${valuesFile.pathname}: gateway.nodeOptions is not a string`);
  if (typeof mallocArenaMax !== 'number')
    throw new Error(`${valuesFile.pathname}: gateway.mallocArenaMax is not a number`);
  return {
    NODE_OPTIONS: nodeOptions,
    ...(mallocArenaMax > 0 ? { MALLOC_ARENA_MAX: String(mallocArenaMax) } : {}),
  };
}

/**
 * A ready container's status whose `allocatedResourcesStatus` (ResourceHealthStatus) reports the
 * health of a pod claim's devices, as the kubelet writes it (`claim:<pod claim>`, by resource ID).
 */
export function claimHealthStatus(
  container: string,
  podClaim: string,
  devices: readonly { resourceID: string; health: string }[],
): V1ContainerStatus {
  return {
    name: container,
    image: 'x',
    imageID: '',
    ready: true,
    restartCount: 0,
    allocatedResourcesStatus: devices.length ? [{ name: `claim:${podClaim}`, resources: [...devices] }] : [],
  };
}

/**
 * A plain-HTTP stand-in API server's URL and the gateway's request function against it (its real
 * KubeConfig path), authenticating with bearer `token`.
 */
export function apiServerRequestTo(
  server: Server,
  token: string,
): { url: string; request: ApiServerRequest & { close(): void } } {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return { url, request: createApiServerRequest(kc) };
}
