// Many gateways in one process for the overview benchmark: each listens on its own port and
// speaks the gateway's summary contract (GET /api/v1/summary, WS /api/v1/stream?view=summary with
// snapshot, patches and heartbeats). Running 200 kubelet-sims + gateways on 2 cores would measure
// the simulators, not the dashboard; the summary wire format is what the dashboard consumes.
// One more kind: a gateway serving a fixed node snapshot (GET /api/v1/node, /history, the full
// stream's snapshot and heartbeats), for node-page renders of shapes no simulator here serves yet.
import { createServer, type Server } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { NodeHistory, NodeSnapshot, NodeSummary } from '@plugboard/api';

export interface FakeGateway {
  name: string;
  url: string;
}

function summaryFor(name: string, i: number): NodeSummary {
  const ok = { status: 'ok' as const, lastSuccess: new Date().toISOString(), reason: null };
  const gpuUnhealthy = i % 17 === 0 ? 1 : 0;
  return {
    schema: 1,
    nodeName: name,
    updatedAt: new Date().toISOString(),
    resources: {
      'plugboard.example/gpu': {
        capacity: 8,
        allocatable: 8 - gpuUnhealthy,
        allocated: i % 9,
        free: 8 - gpuUnhealthy - (i % 9 > 8 - gpuUnhealthy ? 8 - gpuUnhealthy : i % 9),
        healthy: 8 - gpuUnhealthy,
        unhealthy: gpuUnhealthy,
        apiServer: { capacity: 8, allocatable: 8 - gpuUnhealthy, staleSince: null },
        registered: true,
        registration: 'registered',
      },
      'plugboard.example/nic-vf': {
        capacity: 16,
        allocatable: 16,
        allocated: i % 16,
        free: 16 - (i % 16),
        healthy: 16,
        unhealthy: 0,
        apiServer: { capacity: 16, allocatable: 16, staleSince: null },
        registered: true,
        registration: 'registered',
      },
    },
    unhealthyDevices: gpuUnhealthy,
    activeFaults: 0,
    faultsEnabled: true,
    sources: { podResources: ok, kubernetes: ok },
  };
}

export async function startFakeGateways(
  count: number,
): Promise<{ gateways: FakeGateway[]; stop(): Promise<void> }> {
  const servers: Server[] = [];
  const sockets = new Set<WebSocket>();
  const gateways: FakeGateway[] = [];
  for (let i = 0; i < count; i++) {
    const name = `sim-node-${String(i).padStart(3, '0')}`;
    const summary = summaryFor(name, i);
    const body = JSON.stringify(summary);
    const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
    const server = createServer((req, res) => {
      if (req.url?.startsWith('/api/v1/summary')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(body);
        return;
      }
      res.writeHead(404).end();
    });
    server.on('upgrade', (req, socket, head) => {
      wss.handleUpgrade(req, socket, head, (ws) => {
        sockets.add(ws);
        ws.on('close', () => sockets.delete(ws));
        ws.send(JSON.stringify({ type: 'snapshot', seq: 1, node: summary }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const addr = server.address();
    servers.push(server);
    gateways.push({ name, url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` });
  }
  return {
    gateways,
    async stop() {
      for (const ws of sockets) ws.terminate();
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((r) => {
              s.closeAllConnections();
              s.close(() => r());
            }),
        ),
      );
    },
  };
}

/** A gateway that serves one fixed NodeSnapshot: what the node page reads, nothing else. */
export async function startFakeNodeGateway(
  snapshot: NodeSnapshot,
): Promise<{ gateway: FakeGateway; stop(): Promise<void> }> {
  const body = JSON.stringify(snapshot);
  const sockets = new Set<WebSocket>();
  const history = (): NodeHistory => ({
    schema: 1,
    nodeName: snapshot.nodeName,
    now: Date.now(),
    since: Date.now() - 3_600_000,
    tiers: [{ resolutionMs: 10_000, retentionMs: 3_600_000 }],
    resources: {},
    devices: {},
  });
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const server = createServer((req, res) => {
    const path = req.url?.split('?')[0];
    if (path === '/api/v1/node') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    } else if (path === '/api/v1/history') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(history()));
    } else {
      res.writeHead(404).end();
    }
  });
  server.on('upgrade', (req, socket, head) => {
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.on('close', () => sockets.delete(ws));
      ws.send(`{"type":"snapshot","seq":1,"node":${body}}`);
    });
  });
  const heartbeat = setInterval(() => {
    const msg = JSON.stringify({ type: 'heartbeat', seq: 1, at: new Date().toISOString() });
    for (const ws of sockets) ws.send(msg);
  }, 10_000);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  return {
    gateway: {
      name: snapshot.nodeName,
      url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`,
    },
    async stop() {
      clearInterval(heartbeat);
      for (const ws of sockets) ws.terminate();
      await new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      });
    },
  };
}
