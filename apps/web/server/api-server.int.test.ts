// The web server's API against a real gateway on kubelet-sim (real plugins, real Unix sockets,
// real HTTP/WS on port 0): REST proxy with problem+json errors and bearer-token forwarding, the
// node stream proxy, origin checks, and the cluster summary hub including a gateway going away.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { WebSocket } from 'ws';
import type { KubeletSim } from '@plugboard/kubelet-sim';
import {
  gatewayDocument,
  gatewayProcess,
  simNode,
  type GatewayProcess,
  type SimNode,
  waitFor,
} from '@plugboard/testbed';
import type { NodeHistory, NodeSnapshot } from '@plugboard/api';
import type { ClusterDocument } from '../lib/cluster-types';
import type { MigrationView } from '../lib/migration-view';
import { applyLiveMessage, type LiveDocument, type LiveMessage } from '../lib/live-document';
import { createApiServer, type ApiServer } from './api-server';
import { loadWebConfig } from './config';
import { staticDirectory } from './gateway-directory';

const GPU = 'plugboard.example/gpu';
const TOKEN = 'web-int-token-0123456789';
const silent = pino({ level: 'silent' });

let dir: string;
let node: SimNode;
let sim: KubeletSim;
let gw: GatewayProcess;
let api: ApiServer;
let server: Server;
let base: string;

interface Problem {
  title: string;
  status: number;
  detail: string;
}

async function call<T = Problem>(path: string, init: RequestInit = {}) {
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    headers: res.headers,
    body: (text ? JSON.parse(text) : null) as T,
  };
}

function openStream<T>(path: string, origin?: string) {
  const ws = new WebSocket(`${base.replace('http', 'ws')}${path}`, origin ? { origin } : {});
  const messages: LiveMessage<T>[] = [];
  ws.on('message', (d: Buffer) => messages.push(JSON.parse(d.toString('utf8')) as LiveMessage<T>));
  const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
  return { ws, messages, closed };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pb-web-int-'));
  node = await simNode(dir, 'int-node', {
    sim: { listen: '127.0.0.1:0', numaNodes: 2, podResourcesRateLimit: false },
  });
  sim = node.sim;
  // The plugboard-gateway binary: the web app's tests do not import the gateway app.
  gw = await gatewayProcess(
    node,
    gatewayDocument(node, {
      resources: [{ name: GPU, simulated: { count: 4, numaNodes: [0, 1] } }],
      gateway: {
        podResources: { pollIntervalMs: 100 },
        history: { tiers: [{ resolutionMs: 200, retentionMs: 60_000 }] },
      },
    }),
    { token: TOKEN },
  );
  await waitFor('gateway ready', async () => (await fetch(`${gw.url}/readyz`)).status === 200);
  await sim.admitPod({
    metadata: { name: 'train', namespace: 'ml' },
    spec: { containers: [{ name: 'main', resources: { limits: { [GPU]: 1 } } }] },
  });
  // A gateway that is configured but down: a port bound and released, so nothing listens on it.
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
  const closedAddr = closed.address();
  await new Promise<void>((r) => closed.close(() => r()));
  const ghostPort = typeof closedAddr === 'object' && closedAddr ? closedAddr.port : 1;
  const cfg = loadWebConfig({
    PLUGBOARD_GATEWAYS: `int-node=${gw.url},ghost-node=http://127.0.0.1:${ghostPort}`,
  });
  assert.equal(cfg.discovery.mode, 'static');
  const directory = staticDirectory(
    'PLUGBOARD_GATEWAYS',
    cfg.discovery.mode === 'static' ? cfg.discovery.gateways : [],
  );
  api = createApiServer(cfg, directory, silent);
  server = createServer((req, res) => {
    if (!api.handleRequest(req, res)) res.writeHead(404).end();
  });
  server.on('upgrade', (req, socket, head) => {
    if (!api.handleUpgrade(req, socket, head)) socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});

after(async () => {
  await api?.stop();
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  await gw?.stop().catch(() => {});
  await node?.remove();
  rmSync(dir, { recursive: true, force: true });
});

describe('REST proxy', () => {
  it('serves the gateway snapshot for a known node', async () => {
    const r = await call<NodeSnapshot>('/api/nodes/int-node/node');
    assert.equal(r.status, 200);
    assert.equal(r.body.nodeName, 'int-node');
    assert.equal(Object.keys(r.body.devices).length, 4);
  });

  it('answers problem+json that says why: unknown node, unreachable gateway, bad method, bad media type, too large', async () => {
    const unknown = await call('/api/nodes/nope/node');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.type, 'application/problem+json');
    assert.match(unknown.body.detail, /no gateway known for node "nope"/);

    const ghost = await call('/api/nodes/ghost-node/summary');
    assert.equal(ghost.status, 502);
    assert.match(ghost.body.detail, /ghost-node.*unreachable.*ECONNREFUSED/);

    const put = await call('/api/nodes/int-node/faults', { method: 'PUT' });
    assert.equal(put.status, 405);
    assert.equal(put.headers.get('allow'), 'GET, POST, DELETE');

    const text = await call('/api/nodes/int-node/faults', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    assert.equal(text.status, 415);

    const big = await call('/api/nodes/int-node/faults', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pad: 'x'.repeat(70_000) }),
    });
    assert.equal(big.status, 413);

    const route = await call('/api/nodes/int-node/metrics');
    assert.equal(route.status, 404, 'only dashboard routes are proxied');
  });

  it('forwards the user bearer token for mutations; the gateway decides', async () => {
    const body = JSON.stringify({ resource: GPU, deviceId: 'gpu-0', reason: 'int test' });
    const anon = await call('/api/nodes/int-node/faults', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    assert.equal(anon.status, 401);
    assert.equal(anon.type, 'application/problem+json');

    const foreign = await call('/api/nodes/int-node/faults', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${TOKEN}`,
        origin: 'http://evil.example',
      },
      body,
    });
    assert.equal(foreign.status, 403);

    const ok = await call<{ id: string }>('/api/nodes/int-node/faults', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body,
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    const list = await call<{ items: { deviceId: string }[] }>('/api/nodes/int-node/faults');
    assert.deepEqual(
      list.body.items.map((f: { deviceId: string }) => f.deviceId),
      ['gpu-0'],
    );
    const del = await call(`/api/nodes/int-node/faults/${encodeURIComponent(ok.body.id)}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(del.status, 204);
  });
});

describe('exposed beyond loopback', () => {
  it('refuses anonymous mutations itself and forwards those with a token', async () => {
    const cfg = loadWebConfig({ HOST: '0.0.0.0', PLUGBOARD_GATEWAYS: `int-node=${gw.url}` });
    const exposed = createApiServer(
      cfg,
      staticDirectory('PLUGBOARD_GATEWAYS', cfg.discovery.mode === 'static' ? cfg.discovery.gateways : []),
      silent,
    );
    const srv = createServer((req, res) => {
      if (!exposed.handleRequest(req, res)) res.writeHead(404).end();
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const port = (srv.address() as { port: number }).port;
    try {
      const body = JSON.stringify({ resource: GPU, deviceId: 'gpu-3', reason: 'exposed' });
      const anon = await fetch(`http://127.0.0.1:${port}/api/nodes/int-node/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      assert.equal(anon.status, 401);
      assert.match(
        ((await anon.json()) as Problem).detail,
        /listens on 0\.0\.0\.0; fault requests need a bearer token/,
      );
      const ok = await fetch(`http://127.0.0.1:${port}/api/nodes/int-node/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        body,
      });
      assert.equal(ok.status, 201);
      const { id } = (await ok.json()) as { id: string };
      const del = await fetch(
        `http://127.0.0.1:${port}/api/nodes/int-node/faults/${encodeURIComponent(id)}`,
        { method: 'DELETE', headers: { authorization: `Bearer ${TOKEN}` } },
      );
      assert.equal(del.status, 204);
    } finally {
      await exposed.stop();
      srv.closeAllConnections();
      await new Promise<void>((r) => srv.close(() => r()));
    }
  });
});

describe('node stream proxy', () => {
  it('relays snapshot then patches; a fault reaches the browser through the kubelet path', async () => {
    const s = openStream<NodeSnapshot>('/api/nodes/int-node/stream');
    const first = await waitFor('snapshot', () => s.messages[0]);
    assert.equal(first.type, 'snapshot');
    let doc: LiveDocument<NodeSnapshot> | undefined;
    const apply = () => {
      for (const m of s.messages.splice(0)) {
        const r = applyLiveMessage(doc, m);
        assert.notEqual(r.kind, 'resync', 'the proxy must not lose or reorder messages');
        if (r.kind === 'applied') doc = r.doc;
      }
      return doc;
    };
    apply();
    const r = await call<{ id: string }>('/api/nodes/int-node/faults', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ resource: GPU, deviceId: 'gpu-1', reason: 'stream test' }),
    });
    assert.equal(r.status, 201);
    await waitFor('device unhealthy and allocatable 3 via the stream', () => {
      const d = apply();
      return (
        d?.data.devices[`${GPU}/gpu-1`]?.health === 'Unhealthy' &&
        d.data.resources[GPU]!.kubelet.allocatable === 3
      );
    });
    await call(`/api/nodes/int-node/faults/${encodeURIComponent(r.body.id)}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    await waitFor('healed via the stream', () => apply()?.data.resources[GPU]!.kubelet.allocatable === 4);

    // Resume with since through the proxy: the gateway continues from our seq, no snapshot needed.
    const seq = doc!.seq!;
    s.ws.close();
    const resumed = openStream<NodeSnapshot>(`/api/nodes/int-node/stream?since=${seq}`);
    await new Promise((res) => resumed.ws.once('open', res));
    const again = await call<{ id: string }>('/api/nodes/int-node/faults', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ resource: GPU, deviceId: 'gpu-3', reason: 'resume test' }),
    });
    assert.equal(again.status, 201);
    await waitFor('resumed stream continues the same document', () => {
      for (const m of resumed.messages.splice(0)) {
        assert.notEqual(m.type, 'snapshot', 'a resume within history replays patches');
        const r = applyLiveMessage(doc, m);
        assert.notEqual(r.kind, 'resync');
        if (r.kind === 'applied') doc = r.doc;
      }
      return doc!.data.devices[`${GPU}/gpu-3`]?.health === 'Unhealthy';
    });
    await call(`/api/nodes/int-node/faults/${encodeURIComponent(again.body.id)}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    resumed.ws.close();
  });

  it('proxies the history (REST, problem+json passed through) and relays history messages only when asked', async () => {
    const h = await call<NodeHistory>(
      `/api/nodes/int-node/history?resource=${encodeURIComponent(GPU)}&since=1m`,
    );
    assert.equal(h.status, 200);
    assert.deepEqual(Object.keys(h.body.resources), [GPU]);
    const bad = await call('/api/nodes/int-node/history?since=soon');
    assert.equal(bad.status, 400);
    assert.equal(bad.type, 'application/problem+json');
    assert.match(bad.body.detail, /since must be/);
    assert.equal((await call('/api/nodes/int-node/history', { method: 'POST' })).status, 405);

    const withHistory = openStream<NodeSnapshot>('/api/nodes/int-node/stream?history=true');
    const plain = openStream<NodeSnapshot>('/api/nodes/int-node/stream');
    const types = (msgs: { type: string }[]) => msgs.map((m) => m.type);
    await waitFor('a history message through the proxy', () =>
      types(withHistory.messages as { type: string }[]).includes('history'),
    );
    await waitFor('the plain stream got its snapshot', () => plain.messages.length > 0);
    assert.ok(!types(plain.messages).includes('history'));
    withHistory.ws.close();
    plain.ws.close();
  });

  it('tells the browser why when the gateway is unreachable', async () => {
    const s = openStream<NodeSnapshot>('/api/nodes/ghost-node/stream');
    const code = await s.closed;
    assert.equal(code, 4502);
    const err = s.messages[0] as { type: string; status: number; detail: string };
    assert.equal(err.type, 'error');
    assert.equal(err.status, 502);
    assert.match(err.detail, /ECONNREFUSED/);
  });

  it('rejects upgrades from a foreign origin', async () => {
    const ws = new WebSocket(`${base.replace('http', 'ws')}/api/nodes/int-node/stream`, {
      origin: 'http://evil.example',
    });
    const status = await new Promise<number>((res) =>
      ws.on('unexpected-response', (_req, r) => res(r.statusCode ?? 0)),
    );
    assert.equal(status, 403);
  });
});

describe('migration view', () => {
  it('joins the nodes per extended resource name, says which node is not observed, and answers 4xx as problem+json', async () => {
    // The gateway's summary names the pod once PodResources lists its device.
    const r = await waitFor('ml/train holding its GPU in the migration view', async () => {
      const res = await call<{ seq: number; migration: MigrationView }>(`/api/migration`);
      const gpu = res.body.migration.resources.find((x) => x.name === GPU);
      return gpu?.leftToMove.length ? res : null;
    });
    assert.equal(r.status, 200);
    assert.equal(r.type, 'application/json');
    const gpu = r.body.migration.resources.find((x) => x.name === GPU)!;
    assert.deepEqual(gpu.servedBy, { 'device-plugin': ['int-node'], dra: [], none: [] });
    assert.deepEqual(gpu.nodes[0]!.nodeStatus, { capacity: 4, allocatable: 4 });
    assert.equal(gpu.mapped, false, 'no DeviceClass maps it: the move has not started');
    assert.deepEqual(gpu.leftToMovePods, ['ml/train']);
    assert.deepEqual(
      gpu.pods.map((p) => [p.node, p.pod, p.via, p.claim]),
      [['int-node', 'ml/train', 'device-plugin', null]],
    );
    assert.deepEqual(
      r.body.migration.notObserved.map((n) => [n.node, n.status, n.why]),
      [['ghost-node', 'unreachable', 'no-summary']],
    );
    assert.match(r.body.migration.notObserved[0]!.error ?? '', /ECONNREFUSED/);

    const one = await call<{ migration: MigrationView }>(
      `/api/migration?resource=${encodeURIComponent(GPU)}`,
    );
    assert.deepEqual(
      one.body.migration.resources.map((x) => x.name),
      [GPU],
    );
    const unknown = await call('/api/migration?resource=example.com%2Ffpga');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.type, 'application/problem+json');
    assert.equal(
      unknown.body.detail,
      'no observed node knows the extended resource example.com/fpga (not observed: ghost-node)',
    );
    const empty = await call('/api/migration?resource=');
    assert.equal(empty.status, 400);
    assert.equal(empty.type, 'application/problem+json');
    const post = await call('/api/migration', { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.type, 'application/problem+json');
  });
});

describe('cluster summary hub', () => {
  it('aggregates every gateway, says why one is unreachable, streams patches, and keeps stale data when a gateway goes away', async () => {
    const rest = await call<{ cluster: ClusterDocument }>('/api/cluster');
    const cluster = rest.body.cluster;
    assert.equal(cluster.nodes['int-node']!.status, 'live');
    assert.deepEqual(
      {
        capacity: cluster.nodes['int-node']!.summary!.resources[GPU]!.capacity,
        allocated: cluster.nodes['int-node']!.summary!.resources[GPU]!.allocated,
      },
      { capacity: 4, allocated: 1 },
    );
    assert.equal(cluster.nodes['ghost-node']!.status, 'unreachable');
    assert.match(cluster.nodes['ghost-node']!.error ?? '', /ECONNREFUSED/);

    const s = openStream<ClusterDocument>('/api/cluster/stream');
    let doc: LiveDocument<ClusterDocument> | undefined;
    const apply = () => {
      for (const m of s.messages.splice(0)) {
        const r = applyLiveMessage(doc, m);
        assert.notEqual(r.kind, 'resync');
        if (r.kind === 'applied') doc = r.doc;
      }
      return doc;
    };
    await waitFor('cluster snapshot', () => apply());
    const r = await call<{ id: string }>('/api/nodes/int-node/faults', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ resource: GPU, deviceId: 'gpu-2', reason: 'hub test' }),
    });
    assert.equal(r.status, 201);
    await waitFor('summary patch: allocatable 3, one unhealthy', () => {
      const n = apply()?.data.nodes['int-node'];
      return n?.summary?.resources[GPU]!.allocatable === 3 && n.summary.unhealthyDevices === 1;
    });

    await gw.stop();
    const gone = await waitFor('gateway reported reconnecting with its last summary', () => {
      const n = apply()?.data.nodes['int-node'];
      return n?.status === 'reconnecting' ? n : null;
    });
    assert.equal(gone.summary?.resources[GPU]!.allocatable, 3, 'last known data is kept, marked stale');
    assert.ok(gone.error);
    s.ws.close();
  });
});
