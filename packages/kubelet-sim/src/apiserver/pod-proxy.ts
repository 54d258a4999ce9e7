// The API server's pod proxy (`/api/v1/namespaces/{ns}/pods/{name}[:port]/proxy/{path}`, as
// kube-apiserver's proxy subresource of Kubernetes 1.33 forwards it): the request goes on without
// the caller's credential and hop-by-hop headers; WebSocket (or any) upgrades become a byte pipe.
// Simulated pods have no network, so `targets` stands in for each pod's IP and port.

import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { KubeletSimError } from '../errors.js';
import { HttpError, notFound, PROBLEM_STATUS, statusObject } from './http.js';
import type { ObjectStore } from './object-store.js';

/** `/api/v1/namespaces/{ns}/pods/{name[:port]}/proxy[/rest]` (raw, still percent-encoded). */
const POD_PROXY_PATH = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/proxy(\/.*)?$/;
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export interface PodProxyOptions {
  pods: ObjectStore;
  /** `namespace/name` → base URL; read on every request, so entries may be added after start. */
  targets: ReadonlyMap<string, string> | undefined;
  /** Throws when the request lacks the bearer token (mutations and the proxy need it). */
  authorize: (req: IncomingMessage) => void;
}

export class PodProxy {
  /** Sockets of upgraded (WebSocket) connections, which the HTTP server no longer tracks. */
  private readonly upgraded = new Set<Duplex>();

  constructor(private readonly o: PodProxyOptions) {}

  /** Ends every upgraded connection. */
  stop(): void {
    for (const socket of this.upgraded) socket.destroy();
    this.upgraded.clear();
  }

  /**
   * Resolves `/api/v1/namespaces/{ns}/pods/{name}[:port]/proxy/{path}` to the URL registered for the
   * pod (kubelet-sim's pods have no network: `podProxyTargets` stands in for the pod IP and port).
   * Like the API server, it authenticates the caller first and answers 404 for an unknown pod.
   */
  target(req: IncomingMessage, namespace: string, podAndPort: string, url: URL): URL {
    this.o.authorize(req);
    const name = podAndPort.split(':')[0]!;
    if (!this.o.pods.get(namespace, name)) throw new HttpError(404, 'NotFound', `pods "${name}" not found`);
    const base = this.o.targets?.get(`${namespace}/${name}`);
    if (!base) {
      throw new HttpError(
        503,
        'ServiceUnavailable',
        `no endpoint for pod ${namespace}/${name} (kubelet-sim proxies only to podProxyTargets)`,
      );
    }
    const rest = POD_PROXY_PATH.exec(url.pathname)?.[3] ?? '/';
    const target = new URL(base);
    target.pathname = target.pathname.replace(/\/+$/, '') + rest;
    target.search = url.search;
    return target;
  }

  /** The API server forwards the request without the caller's credential or hop-by-hop headers. */
  private forwardHeaders(
    req: IncomingMessage,
    target: URL,
    upgrade: boolean,
  ): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    for (const [key, value] of Object.entries(req.headers)) {
      if (value === undefined || key === 'authorization' || key === 'host') continue;
      if (HOP_BY_HOP.has(key) && !(upgrade && (key === 'connection' || key === 'upgrade'))) continue;
      out[key] = value;
    }
    out.host = target.host;
    return out;
  }

  proxy(req: IncomingMessage, res: ServerResponse, target: URL): Promise<void> {
    return new Promise((resolve, reject) => {
      const upstream = httpRequest(
        target,
        { method: req.method, headers: this.forwardHeaders(req, target, false) },
        (up) => {
          const headers = { ...up.headers };
          for (const h of HOP_BY_HOP) delete headers[h];
          res.writeHead(up.statusCode ?? 502, headers);
          up.pipe(res);
          up.on('end', () => resolve());
          up.on('error', () => {
            res.destroy();
            resolve();
          });
        },
      );
      upstream.on('error', (err: NodeJS.ErrnoException) =>
        reject(
          new HttpError(503, 'ServiceUnavailable', `error trying to reach pod: ${err.code ?? err.message}`),
        ),
      );
      req.pipe(upstream);
    });
  }

  /** WebSocket (or any) upgrade through the pod proxy: a byte pipe once the pod accepts. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://localhost');
    const refuse = (err: unknown) => {
      const status = err instanceof HttpError ? err.status : PROBLEM_STATUS[KubeletSimError.from(err).code];
      const reason = err instanceof HttpError ? err.reason : KubeletSimError.from(err).reason;
      const body = JSON.stringify(statusObject(status, reason, (err as Error).message));
      socket.end(
        `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    };
    let target: URL;
    try {
      const m = POD_PROXY_PATH.exec(url.pathname);
      if (!m) throw notFound();
      target = this.target(req, decodeURIComponent(m[1]!), decodeURIComponent(m[2]!), url);
    } catch (err) {
      return refuse(err);
    }
    let connected = false;
    const upstream = connect(Number(target.port || 80), target.hostname, () => {
      connected = true;
      const headers = this.forwardHeaders(req, target, true);
      const lines = Object.entries(headers).flatMap(([k, v]) =>
        (Array.isArray(v) ? v : [v]).map((x) => `${k}: ${x}`),
      );
      upstream.write(
        `${req.method ?? 'GET'} ${target.pathname}${target.search} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`,
      );
      if (head.length > 0) upstream.write(head);
      socket.pipe(upstream).pipe(socket);
    });
    this.upgraded.add(socket);
    this.upgraded.add(upstream);
    const close = () => {
      this.upgraded.delete(socket);
      this.upgraded.delete(upstream);
      socket.destroy();
      upstream.destroy();
    };
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      if (!connected) {
        this.upgraded.delete(socket);
        this.upgraded.delete(upstream);
        return refuse(
          new HttpError(503, 'ServiceUnavailable', `error trying to reach pod: ${err.code ?? err.message}`),
        );
      }
      close();
    });
    upstream.on('close', () => connected && close());
    socket.on('close', close);
  }
}
