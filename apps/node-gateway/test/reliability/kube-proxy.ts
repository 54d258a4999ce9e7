// A misbehaving HTTP proxy in front of kubelet-sim's Kubernetes API slice: it forwards (watches
// stream through), or answers 500s, hangs until it cuts the connection, or ends every watch with
// the 410 Expired ERROR event of an API server whose watch cache moved on. Extra routes let a test
// add endpoints the slice does not have (TokenReview, SubjectAccessReview).
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type ProxyMode = 'pass' | 'error-500' | 'hang' | 'gone-410';

export type ExtraRoute = (req: IncomingMessage, body: string, res: ServerResponse) => boolean;

export class KubeApiProxy {
  mode: ProxyMode = 'pass';
  /** Requests seen, by kind. */
  readonly counts = { list: 0, watch: 0, other: 0, failed: 0 };
  url = '';
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly upstream: string,
    private readonly options: { hangMs?: number; extra?: ExtraRoute } = {},
  ) {}

  async start(): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** A kubeconfig like `original` (kubelet-sim's) pointing at this proxy. */
  writeKubeconfig(original: string, file: string): string {
    const text = readFileSync(original, 'utf8').replaceAll(this.upstream, this.url);
    writeFileSync(file, text);
    return file;
  }

  /** Cuts every open connection (watches included), as a restarting API server or LB would. */
  cutAll(): void {
    for (const s of this.sockets) s.destroy();
  }

  setMode(mode: ProxyMode): void {
    this.mode = mode;
    this.cutAll();
  }

  async stop(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    if (this.options.extra?.(req, body.toString('utf8'), res)) return;
    const url = new URL(req.url ?? '/', this.url);
    const isWatch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
    if (req.method === 'GET' && /^\/api\/v1\/(nodes|pods)$/.test(url.pathname))
      this.counts[isWatch ? 'watch' : 'list']++;
    else this.counts.other++;
    if (this.mode === 'error-500') {
      this.counts.failed++;
      const status = {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        message: 'etcdserver: leader changed',
        reason: 'InternalError',
        code: 500,
      };
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify(status));
      return;
    }
    if (this.mode === 'hang') {
      this.counts.failed++;
      setTimeout(() => req.socket.destroy(), this.options.hangMs ?? 1000).unref();
      return;
    }
    if (this.mode === 'gone-410' && isWatch) {
      this.counts.failed++;
      const event = {
        type: 'ERROR',
        object: {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          message: 'too old resource version: 1 (999)',
          reason: 'Expired',
          code: 410,
        },
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(`${JSON.stringify(event)}\n`);
      return;
    }
    const up = request(
      `${this.upstream}${req.url ?? '/'}`,
      { method: req.method, headers: { ...req.headers, host: new URL(this.upstream).host } },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        // A watch answers headers first and events later: pass the headers on at once.
        res.flushHeaders();
        upRes.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    up.end(body);
  }
}
