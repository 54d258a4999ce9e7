// The API server's pod proxy in kubelet-sim's API slice (`/api/v1/namespaces/{ns}/pods/{name}[:port]/proxy/...`):
// requests and WebSocket upgrades are forwarded to the URL registered for the pod, without the
// caller's Authorization header (the API server consumes it), with Kubernetes Status errors for a
// missing pod (404), an unreachable one (503) and a missing bearer token (401).
import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { startKubeletSim, type KubeletSim } from '../src/index.js';

const TOKEN = 'pod-proxy-test-token-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'kubelet-sim-proxy-'));
const targets = new Map<string, string>();
let sim: KubeletSim;
let echo: Server;
let seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];

function call(
  path: string,
  o: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(sim.url + path), { method: o.method ?? 'GET', headers: o.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }),
      );
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

const auth = { authorization: `Bearer ${TOKEN}` };
/** The Kubernetes Status object of an error answer. */
const status = (body: string) => JSON.parse(body) as { kind: string; message: string };

before(async () => {
  echo = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(req.method === 'DELETE' ? 204 : 201, {
        'content-type': 'application/problem+json',
        'x-echo': 'yes',
      });
      res.end(req.method === 'DELETE' ? undefined : JSON.stringify({ path: req.url }));
    });
  });
  // A minimal WebSocket-style upgrade: 101, then echo every byte back.
  echo.on('upgrade', (req, socket) => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: '' });
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  sim = await startKubeletSim({
    devicePluginDir: join(dir, 'plugins'),
    stateDir: join(dir, 'state'),
    nodeName: 'proxy-node',
    controlToken: TOKEN,
    podProxyTargets: targets,
    logger: pino({ level: 'silent' }),
  });
  await sim.admitPod({
    metadata: { name: 'gw', namespace: 'plugboard' },
    spec: { containers: [{ name: 'gw' }] },
  });
  targets.set('plugboard/gw', `http://127.0.0.1:${(echo.address() as AddressInfo).port}`);
});

after(async () => {
  await sim.stop();
  await new Promise<void>((resolve) => echo.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe('pod proxy', () => {
  it('forwards method, path, query and body; drops Authorization, keeps other headers', async () => {
    seen = [];
    const res = await call('/api/v1/namespaces/plugboard/pods/gw:9400/proxy/api/v1/faults?resource=a%2Fb', {
      method: 'POST',
      headers: {
        ...auth,
        'x-plugboard-authorization': 'Bearer user-token',
        'content-type': 'application/json',
      },
      body: '{"x":1}',
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers['x-echo'], 'yes');
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.deepEqual(JSON.parse(res.body), { path: '/api/v1/faults?resource=a%2Fb' });
    const got = seen[0]!;
    assert.equal(got.method, 'POST');
    assert.equal(got.body, '{"x":1}');
    assert.equal(got.headers.authorization, undefined, 'the API server consumes Authorization');
    assert.equal(got.headers['x-plugboard-authorization'], 'Bearer user-token');
    const del = await call('/api/v1/namespaces/plugboard/pods/gw/proxy/api/v1/faults/f1', {
      method: 'DELETE',
      headers: auth,
    });
    assert.equal(del.status, 204);
    assert.equal(seen[1]!.url, '/api/v1/faults/f1');
  });

  it('answers Kubernetes Status errors: 401 without the token, 404 for an unknown pod, 503 when unreachable', async () => {
    const unauth = await call('/api/v1/namespaces/plugboard/pods/gw/proxy/healthz');
    assert.equal(unauth.status, 401);
    assert.equal(status(unauth.body).kind, 'Status');
    const missing = await call('/api/v1/namespaces/plugboard/pods/nope/proxy/healthz', { headers: auth });
    assert.equal(missing.status, 404);
    assert.match(status(missing.body).message, /pods "nope" not found/);
    await sim.admitPod({
      metadata: { name: 'no-target', namespace: 'plugboard' },
      spec: { containers: [{ name: 'c' }] },
    });
    const noTarget = await call('/api/v1/namespaces/plugboard/pods/no-target/proxy/healthz', {
      headers: auth,
    });
    assert.equal(noTarget.status, 503);
    targets.set('plugboard/no-target', 'http://127.0.0.1:1');
    const down = await call('/api/v1/namespaces/plugboard/pods/no-target/proxy/healthz', { headers: auth });
    assert.equal(down.status, 503);
    assert.match(status(down.body).message, /error trying to reach pod: .*ECONNREFUSED/);
  });

  it('forwards a WebSocket upgrade and the bytes both ways, without Authorization', async () => {
    seen = [];
    const echoed = await new Promise<string>((resolve, reject) => {
      const req = request(
        new URL(`${sim.url}/api/v1/namespaces/plugboard/pods/gw:9400/proxy/api/v1/stream?view=summary`),
        {
          headers: { ...auth, connection: 'Upgrade', upgrade: 'websocket' },
        },
      );
      req.on('upgrade', (res, socket) => {
        assert.equal(res.statusCode, 101);
        socket.once('data', (d: Buffer) => {
          resolve(d.toString());
          socket.destroy();
        });
        socket.write('ping through the proxy');
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(echoed, 'ping through the proxy');
    assert.equal(seen[0]!.url, '/api/v1/stream?view=summary');
    assert.equal(seen[0]!.headers.authorization, undefined);
  });
});
