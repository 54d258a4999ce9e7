// The history end to end: real plugins registered with kubelet-sim over real Unix sockets, the
// gateway's HTTP/WebSocket server on port 0, short tiers so buckets close within the test. A fault
// injected through the API travels the kubelet path and shows up in GET /api/v1/history and in the
// stream's `history` messages.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { gatewayDocument, simNode, type SimNode } from '@plugboard/testbed';
import { parseGatewayConfig, startGateway, type Gateway } from '../src/index.js';
import type { HistoryMessage, NodeHistory } from '@plugboard/api';
import { waitFor } from './helpers.js';
import { WebSocket } from 'ws';

const GPU = 'plugboard.example/gpu';
const silent = pino({ level: 'silent' });
const STEP = 200;

let dir: string;
let node: SimNode;
let gw: Gateway;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pb-gw-history-'));
  node = await simNode(dir, 'history-node', { sim: { listen: '127.0.0.1:0', podResourcesRateLimit: false } });
  const document = gatewayDocument(node, {
    resources: [{ name: GPU, simulated: { count: 4, numaNodes: [0] } }],
    gateway: {
      podResources: { pollIntervalMs: 100, maxBackoffMs: 400 },
      kube: { mode: 'disabled' },
      history: {
        tiers: [
          { resolutionMs: STEP, retentionMs: 60_000 },
          { resolutionMs: STEP * 5, retentionMs: 600_000 },
        ],
      },
    },
  });
  gw = await startGateway(parseGatewayConfig(document), { logger: silent });
  await waitFor('plugins registered', async () => (await fetch(`${gw.url}/readyz`)).status === 200, 10_000);
});

after(async () => {
  await gw?.stop();
  await node?.remove();
  rmSync(dir, { recursive: true, force: true });
});

const history = async (query: string): Promise<NodeHistory> => {
  const res = await fetch(`${gw.url}/api/v1/history${query}`);
  assert.equal(res.status, 200);
  return (await res.json()) as NodeHistory;
};

test('a fault shows up in the history: allocatable drops, the device turns Unhealthy, then heals', async () => {
  const ws = new WebSocket(`${gw.url.replace('http', 'ws')}/api/v1/stream?history=true`);
  const historyMessages: HistoryMessage[] = [];
  ws.on('message', (data) => {
    const msg = JSON.parse((data as Buffer).toString('utf8')) as { type: string };
    if (msg.type === 'history') historyMessages.push(msg as HistoryMessage);
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  try {
    await waitFor('allocatable 4 in the history', async () =>
      (await history(`?resource=${encodeURIComponent(GPU)}`)).resources[GPU]?.some(
        (p) => p.allocatable === 4,
      ),
    );
    const before = Date.now();
    const post = await fetch(`${gw.url}/api/v1/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ resource: GPU, deviceId: 'gpu-1', reason: 'ECC drill' }),
    });
    assert.equal(post.status, 201);
    const { id } = (await post.json()) as { id: string };

    const h = await waitFor(
      'a closed bucket with allocatable 3',
      async () => {
        const h = await history(`?resource=${encodeURIComponent(GPU)}&since=${before - STEP}`);
        return h.resources[GPU]?.some((p) => p.allocatable === 3 && p.unhealthy === 1) && h;
      },
      10_000,
    );
    assert.ok(
      h.resources[GPU]!.every((p) => p.t >= before - STEP),
      'since filters older buckets',
    );
    assert.deepEqual(
      Object.keys(h.devices).sort(),
      [0, 1, 2, 3].map((i) => `${GPU}/gpu-${i}`),
    );
    const strip = h.devices[`${GPU}/gpu-1`]!;
    assert.equal(strip.at(-1)!.health, 'Unhealthy');
    assert.match(strip.at(-1)!.reason ?? '', /ECC drill/);
    assert.equal(strip.at(0)!.health, 'Healthy', 'the state in force at since leads');

    // The stream carried the same drop, as finest-tier points, without touching the patch seq.
    const msg = await waitFor('a history message with the drop', () =>
      historyMessages.find((m) => m.points.some((p) => p.resource === GPU && p.minAllocatable === 3)),
    );
    assert.equal(msg.points[0]!.step, STEP);
    await waitFor('the transition on the stream', () =>
      historyMessages.some((m) =>
        m.transitions.some((t) => t.device === `${GPU}/gpu-1` && t.health === 'Unhealthy'),
      ),
    );

    assert.equal((await fetch(`${gw.url}/api/v1/faults/${id}`, { method: 'DELETE' })).status, 204);
    await waitFor(
      'healed in the history',
      async () => {
        const h = await history(`?resource=${encodeURIComponent(GPU)}`);
        return (
          h.devices[`${GPU}/gpu-1`]!.at(-1)!.health === 'Healthy' &&
          h.resources[GPU]!.at(-1)!.allocatable === 4
        );
      },
      10_000,
    );
  } finally {
    ws.close();
  }
});

test('clients that do not ask for history get none; a snapshot carries no history', async () => {
  const ws = new WebSocket(`${gw.url.replace('http', 'ws')}/api/v1/stream`);
  const types: string[] = [];
  let snapshot = '';
  ws.on('message', (data) => {
    const msg = JSON.parse((data as Buffer).toString('utf8')) as { type: string };
    types.push(msg.type);
    if (msg.type === 'snapshot') snapshot = (data as Buffer).toString('utf8');
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  // Wait past several bucket boundaries with the gateway sending history to opted-in clients.
  const optedIn = new WebSocket(`${gw.url.replace('http', 'ws')}/api/v1/stream?history=true`);
  let seen = 0;
  optedIn.on('message', (data) => {
    if ((JSON.parse((data as Buffer).toString('utf8')) as { type: string }).type === 'history') seen++;
  });
  await waitFor('two history messages to the opted-in client', () => seen >= 2, 5000);
  ws.close();
  optedIn.close();
  assert.ok(!types.includes('history'), types.join(','));
  assert.ok(snapshot && !snapshot.includes('"minAllocatable"'));
});

test('bad history queries are problem+json: unknown resource 404, bad since/param 400, POST 405', async () => {
  const cases: [string, RequestInit, number, RegExp][] = [
    [
      '?resource=nope.example%2Fx',
      {},
      404,
      /no history for resource "nope.example\/x".*plugboard.example\/gpu/,
    ],
    ['?since=yesterday', {}, 400, /since must be/],
    ['?since=2026-13-45T00:00:00Z', {}, 400, /since must be/],
    ['?resourse=x', {}, 400, /unknown query parameter "resourse"/],
    ['', { method: 'POST' }, 405, /allowed methods: GET/],
  ];
  for (const [query, init, status, detail] of cases) {
    const res = await fetch(`${gw.url}/api/v1/history${query}`, init);
    assert.equal(res.status, status, query);
    assert.equal(res.headers.get('content-type'), 'application/problem+json');
    assert.match(((await res.json()) as { detail: string }).detail, detail);
  }
  const upgrade = await fetch(`${gw.url}/api/v1/history?since=5m`);
  const h = (await upgrade.json()) as NodeHistory;
  assert.ok(Math.abs(h.since - (h.now - 5 * 60_000)) < 1000, 'relative since is measured from now');
});
