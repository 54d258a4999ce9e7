// A minimal HTTPS client for the cluster's own start-up checks (health endpoints, Node readiness,
// one RBAC binding): the admin's client certificate, the cluster CA, JSON in and out.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';

export interface ApiClient {
  get(path: string): Promise<{ status: number; body: string }>;
  post(path: string, body: unknown): Promise<{ status: number; body: string }>;
}

export function apiClient(server: string, pkiDir: string, client = 'admin'): ApiClient {
  const ca = readFileSync(join(pkiDir, 'ca.crt'));
  const cert = readFileSync(join(pkiDir, `${client}.crt`));
  const key = readFileSync(join(pkiDir, `${client}.key`));
  const call = (method: string, path: string, body?: unknown): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const req = request(
        new URL(path, server),
        {
          method,
          ca,
          cert,
          key,
          timeout: 5000,
          headers: body === undefined ? {} : { 'content-type': 'application/json' },
        },
        (res) => {
          let data = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (data += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  return { get: (p) => call('GET', p), post: (p, b) => call('POST', p, b) };
}

/**
 * GET on a component's own health endpoint (public: --authorization-always-allow-paths). The
 * controller manager and the scheduler serve a self-signed certificate of their own, so this check
 * of a process this package just started on loopback does not verify it.
 */
export function healthz(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { rejectUnauthorized: false, timeout: 3000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}
