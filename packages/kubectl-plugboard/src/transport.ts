// How the CLI reaches a gateway: directly (`--gateway URL`, the demo) or through the Kubernetes API
// server's pod proxy with the user's kubeconfig. Both speak the gateway's REST API and stream; they
// differ in the base URL, the TLS/credential options of each request, and where the mutation
// credential goes (Authorization directly; X-Plugboard-Authorization behind the proxy, because the
// API server consumes the user's Authorization header and does not pass it on).
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { WebSocket } from 'ws';
import { CliError } from './errors.js';

/** Header that carries the mutation credential through the API server's pod proxy. */
export const PROXY_AUTH_HEADER = 'X-Plugboard-Authorization';

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** TLS and header options for a request (from the kubeconfig in proxy mode, empty when direct). */
export type RequestDecorator = () => Promise<RequestOptions>;

const MAX_RESPONSE = 64 * 1024 * 1024;

export async function send(
  url: URL,
  init: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs: number },
  decorate?: RequestDecorator,
): Promise<HttpResponse> {
  const base = decorate ? await decorate() : {};
  const options: RequestOptions = {
    ...base,
    method: init.method ?? 'GET',
    headers: { ...(base.headers as Record<string, string> | undefined), ...init.headers },
  };
  if (init.body !== undefined) {
    (options.headers as Record<string, string>)['content-length'] = String(Buffer.byteLength(init.body));
  }
  const doRequest = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<HttpResponse>((resolve, reject) => {
    const req = doRequest(url, options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE) {
          req.destroy(new Error(`response from ${url.origin} is larger than ${MAX_RESPONSE} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.setTimeout(init.timeoutMs, () =>
      req.destroy(new Error(`no answer from ${url.origin} within ${init.timeoutMs} ms`)),
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      reject(
        new CliError('unavailable', `cannot reach ${url.origin}: ${err.code ?? err.message}`, { cause: err }),
      ),
    );
    req.end(init.body);
  });
}

/** The message of an error answer: problem+json `detail`, Kubernetes Status `message`, or the text. */
export function errorMessage(res: HttpResponse): string {
  try {
    const body = JSON.parse(res.body) as { detail?: unknown; message?: unknown; title?: unknown };
    if (typeof body.detail === 'string') return body.detail;
    if (typeof body.message === 'string') return body.message;
    if (typeof body.title === 'string') return body.title;
  } catch {
    // not JSON: fall through to the raw text
  }
  return res.body.trim().slice(0, 300) || `HTTP ${res.status}`;
}

export interface GatewayRequest {
  method?: 'GET' | 'POST' | 'DELETE';
  body?: string;
  contentType?: string;
  /** Send the mutation credential (POST/DELETE of faults and scenarios). */
  mutation?: boolean;
}

/** One gateway, however it is reached. */
export interface GatewayConnection {
  /** What the user sees: the gateway URL, or `namespace/pod`. */
  readonly label: string;
  /** Node the gateway serves: the pod's spec.nodeName, else asked from the gateway once. */
  nodeName(): Promise<string>;
  /** JSON answer of a 2xx response (undefined for 204); CliError for anything else. */
  request<T>(path: string, req?: GatewayRequest): Promise<T>;
  /**
   * Opens the WebSocket stream at `path` (with its query). `onMessage` is attached before the
   * handshake completes: the gateway sends its snapshot at once, possibly in the same packet.
   */
  openStream(path: string, onMessage: (data: Buffer) => void): Promise<WebSocket>;
}

export interface ConnectionOptions {
  label: string;
  node: string | null;
  /** Base URL that gateway paths are appended to (no trailing slash). */
  baseUrl: string;
  /** TLS/credential options of every request (the kubeconfig's, in proxy mode). */
  decorate?: RequestDecorator;
  /** Headers carrying the mutation credential; null when there is none. */
  credentialHeaders: () => Promise<Record<string, string> | null>;
  timeoutMs: number;
  /** Wording of the "who refused" part of error messages. */
  via: string;
}

export function createConnection(o: ConnectionOptions): GatewayConnection {
  const url = (path: string) => new URL(o.baseUrl + path);
  let node: Promise<string> | null = o.node === null ? null : Promise.resolve(o.node);
  const connection: GatewayConnection = {
    label: o.label,
    nodeName() {
      node ??= connection.request<{ nodeName: string }>('/api/v1/summary').then((s) => s.nodeName);
      return node;
    },
    async request<T>(path: string, req: GatewayRequest = {}): Promise<T> {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (req.contentType) headers['content-type'] = req.contentType;
      let credential: Record<string, string> | null = null;
      if (req.mutation) {
        credential = await o.credentialHeaders();
        if (credential) Object.assign(headers, credential);
      }
      const res = await send(
        url(path),
        { method: req.method ?? 'GET', headers, body: req.body, timeoutMs: o.timeoutMs },
        o.decorate,
      );
      if (res.status >= 200 && res.status < 300) {
        if (res.status === 204 || res.body === '') return undefined as T;
        try {
          return JSON.parse(res.body) as T;
        } catch (err) {
          throw new CliError('error', `${o.label}: ${path} answered something that is not JSON`, {
            cause: err,
          });
        }
      }
      const isProblem = /application\/problem\+json/.test(String(res.headers['content-type']));
      const who = isProblem ? `gateway ${o.label}` : o.via;
      let message = `${who}: ${errorMessage(res)} (HTTP ${res.status})`;
      if (res.status === 401 && isProblem && req.mutation && !credential) {
        message +=
          '; no bearer token was sent: give --token/--token-file or PLUGBOARD_TOKEN' +
          ' (e.g. $(kubectl create token <service-account>)), or use a kubeconfig user with a token';
      }
      throw CliError.fromStatus(res.status, message);
    },
    async openStream(path: string, onMessage: (data: Buffer) => void): Promise<WebSocket> {
      const base = o.decorate ? await o.decorate() : {};
      const target = url(path);
      target.protocol = target.protocol === 'https:' ? 'wss:' : 'ws:';
      const ws = new WebSocket(target, { ...base, handshakeTimeout: o.timeoutMs });
      ws.on('message', onMessage);
      return new Promise((resolve, reject) => {
        const onError = (err: Error) => {
          cleanup();
          reject(
            new CliError('unavailable', `${o.label}: cannot open the stream: ${err.message}`, { cause: err }),
          );
        };
        const onUnexpected = (_req: unknown, res: { statusCode?: number }) => {
          cleanup();
          ws.terminate();
          const status = res.statusCode ?? 0;
          reject(CliError.fromStatus(status, `${o.label}: stream refused (HTTP ${status})`));
        };
        const onOpen = () => {
          cleanup();
          resolve(ws);
        };
        const cleanup = () => {
          ws.off('error', onError);
          ws.off('open', onOpen);
          ws.off('unexpected-response', onUnexpected);
        };
        ws.on('error', onError);
        ws.on('open', onOpen);
        ws.on('unexpected-response', onUnexpected);
      });
    },
  };
  return connection;
}
