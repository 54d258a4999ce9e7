// The gateway's connection to the Kubernetes API: the kubeconfig (in-cluster or a file; plain-HTTP
// servers such as kubelet-sim's accepted) and plain requests for what @kubernetes/client-node has no
// typed API for (kubelet-sim's control API, the node proxy to the kubelet's configz). Loaded only
// through kube.ts, which re-exports it, so that @kubernetes/client-node stays in the lazily loaded
// part of the gateway (kube-client.ts).
import { KubeConfig } from '@kubernetes/client-node';
import http from 'node:http';
import https from 'node:https';
import { allowPlainHttpClusters } from '@plugboard/plugin';
import type { ApiServerRequest } from './api-server-request.js';
import { GatewayError } from '../errors.js';

export function loadKubeConfig(mode: 'in-cluster' | 'kubeconfig', file: string | null): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (mode === 'in-cluster') kc.loadFromCluster();
    else kc.loadFromFile(file!);
  } catch (err) {
    throw new GatewayError(
      'config-invalid',
      `cannot load ${mode === 'in-cluster' ? 'in-cluster config' : `kubeconfig ${file}`}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  if (!kc.getCurrentCluster())
    throw new GatewayError('config-invalid', `kubeconfig ${file ?? ''} has no current cluster`);
  // An http:// server (kubelet-sim, kubectl proxy) has no TLS to verify.
  allowPlainHttpClusters(kc);
  return kc;
}

/** Responses larger than this are refused (the kubelet-sim control state is well under 1 MiB). */
const MAX_RESPONSE_BYTES = 16 * 2 ** 20;

/**
 * Plain requests to the API server for what client-node has no typed API for (kubelet-sim's control
 * endpoints), with the kubeconfig's TLS settings, proxy and credentials (token, client certificate,
 * exec/OIDC plugins, refreshed per request by client-node). node:http/https rather than fetch:
 * fetch's engine (undici, with its WebAssembly HTTP parser) costs the gateway ~10 MB of RSS.
 */
export function createApiServerRequest(kc: KubeConfig): ApiServerRequest & { close(): void } {
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) throw new GatewayError('config-invalid', 'the kubeconfig has no current cluster');
  const server = cluster.server;
  // client-node makes a new agent per call (a new connection every poll). Without a proxy, keep one
  // keep-alive agent for as long as the TLS material it was made with stays the same.
  let pooled: { key: string; agent: http.Agent } | null = null;
  const agentFor = (url: URL, o: https.RequestOptions): http.Agent | undefined => {
    if (cluster.proxyUrl) return o.agent as http.Agent | undefined;
    const tls = {
      ca: o.ca,
      cert: o.cert,
      key: o.key,
      servername: o.servername,
      rejectUnauthorized: o.rejectUnauthorized,
    };
    const key = `${url.protocol}|${JSON.stringify(tls)}`;
    if (pooled?.key !== key) {
      pooled?.agent.destroy();
      const options = { keepAlive: true, maxSockets: 4 };
      pooled = {
        key,
        agent: url.protocol === 'https:' ? new https.Agent({ ...options, ...tls }) : new http.Agent(options),
      };
    }
    return pooled.agent;
  };
  const request: ApiServerRequest = async (method, path, options) => {
    const url = new URL(path, server);
    const opts: https.RequestOptions = {
      method,
      headers: { accept: 'application/json', ...options.headers },
    };
    await kc.applyToHTTPSOptions(opts);
    opts.agent = agentFor(url, opts);
    return new Promise((resolve, reject) => {
      const req = (url.protocol === 'https:' ? https : http).request(url, opts, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) req.destroy(new Error(`response over ${MAX_RESPONSE_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: res.headers['content-type'] ?? '',
            etag: res.headers.etag ?? null,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      });
      req.setTimeout(options.timeoutMs, () =>
        req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)),
      );
      req.on('error', reject);
      req.end(options.body);
    });
  };
  return Object.assign(request, {
    close: () => {
      pooled?.agent.destroy();
      pooled = null;
    },
  });
}
