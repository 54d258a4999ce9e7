// WebSocket fan-out under load, against the real `plugboard-gateway` process (so its RSS is its
// own): 200 (short) or 1,000 (full) stream clients, 10 of them slow (they complete the upgrade and
// never read again). While faults churn, the slow ones are cut off by the bounded send queue (close
// 4008, counted as `slow` in the metrics), every other client keeps receiving every patch in order,
// and the gateway's RSS stays under the documented bound (docs/RELIABILITY.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { startKubeletSim } from '@plugboard/kubelet-sim';
import { report, sized } from './figures.js';
import { api, bearer, GPU, JSON_TYPE, NIC, rssOf, silent, TOKEN, waitFor } from './harness.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';

const CLIENTS = sized(200, 1000);
const SLOW = 10;
const MAX_QUEUE = 64 << 10;
/** Documented bound: the gateway's RSS growth while holding the clients (docs/RELIABILITY.md). */
const RSS_GROWTH_BOUND = sized(100, 250) * 2 ** 20;

const BIN = fileURLToPath(new URL('../../bin/plugboard-gateway.js', import.meta.url));

interface Fast {
  ws: WebSocket;
  lastSeq: number;
  frames: number;
  gaps: number;
  closedWith: number | null;
}

test(`WebSocket: ${CLIENTS} clients on one gateway, ${SLOW} never read: slow ones cut off (4008), the others keep every patch, RSS bounded`, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pb-rel-ws-'));
  const sim = await startKubeletSim({
    devicePluginDir: join(dir, 'dp'),
    stateDir: join(dir, 'kubelet'),
    nodeName: 'ws-node',
    listen: '127.0.0.1:0',
    podResourcesRateLimit: false,
    logger: silent,
  });
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, TOKEN);
  const cfg = join(dir, 'gateway.yaml');
  writeFileSync(
    cfg,
    [
      'resources:',
      `  - name: ${GPU}`,
      '    simulated: { count: 8, numaNodes: [0, 1] }',
      `  - name: ${NIC}`,
      '    simulated: { count: 64, numaNodes: [0, 1] }',
      'gateway:',
      '  nodeName: ws-node',
      '  logLevel: info',
      '  faults: { enabled: true }',
      `  stream: { maxQueueBytes: ${MAX_QUEUE}, heartbeatMs: 120000, maxClients: 5000 }`,
      '  http: { mutationRateLimit: null }',
      `  podResources: { socket: ${sim.podResourcesSocket} }`,
    ].join('\n'),
  );
  const child = spawn(
    process.execPath,
    [
      BIN,
      '--config',
      cfg,
      '--listen',
      '127.0.0.1:0',
      '--no-kube',
      '--device-plugin-dir',
      sim.devicePluginDir,
      '--auth-token-file',
      tokenFile,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // Keep the output up to the "gateway listening" line (it carries the URL), and errors.
  let out = '';
  child.stdout.on('data', (b: Buffer) => {
    if (!out.includes('gateway listening')) out += b.toString();
  });
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const fast: Fast[] = [];
  const slow: Socket[] = [];
  t.after(async () => {
    for (const c of fast) c.ws.terminate();
    for (const s of slow) s.destroy();
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const url = await waitFor('gateway listening', () => /"url":"(http:[^"]+)"/.exec(out)?.[1], 30_000, 50);
  await waitFor('ready', async () => (await fetch(`${url}/readyz`)).status === 200, 20_000, 50);
  const rssIdle = rssOf(child.pid);
  const wsUrl = `${url.replace('http', 'ws')}/api/v1/stream`;

  // Fast clients: check seq contiguity from the frame's prefix (no full JSON parse per frame).
  const open = async (): Promise<Fast> => {
    const ws = new WebSocket(wsUrl, { perMessageDeflate: false });
    const c: Fast = { ws, lastSeq: -1, frames: 0, gaps: 0, closedWith: null };
    ws.on('message', (data: Buffer) => {
      const m = /^\{"type":"(\w+)","seq":(\d+)/.exec(data.subarray(0, 60).toString('latin1'));
      if (!m) return;
      const seq = Number(m[2]);
      if (m[1] === 'patch' && c.lastSeq >= 0 && seq !== c.lastSeq + 1) c.gaps++;
      if (m[1] !== 'heartbeat') c.lastSeq = seq;
      c.frames++;
    });
    ws.on('close', (code) => (c.closedWith = code));
    ws.on('error', () => undefined);
    await once(ws, 'open');
    return c;
  };
  for (let i = 0; i < CLIENTS - SLOW; i += 50) {
    fast.push(...(await Promise.all(Array.from({ length: Math.min(50, CLIENTS - SLOW - i) }, open))));
  }
  // Slow clients: a real upgrade, then the socket is never read again.
  const port = Number(new URL(url).port);
  for (let i = 0; i < SLOW; i++) {
    const s = connect(port, '127.0.0.1');
    await once(s, 'connect');
    s.write(
      `GET /api/v1/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${Buffer.alloc(16, i + 1).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    const [head] = (await once(s, 'data')) as [Buffer];
    assert.match(head.toString('latin1'), /^HTTP\/1\.1 101 /);
    s.pause();
    slow.push(s);
  }
  const metric = async (name: string): Promise<number> => {
    const text = await (await fetch(`${url}/metrics`)).text();
    return [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'gm'))].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
  };
  await waitFor(
    'every client counted',
    async () => (await metric('plugboard_gateway_stream_clients')) === CLIENTS,
    20_000,
    50,
  );

  // Patch latency to every fast client: one fault, until all have its patch.
  const probe = async (deviceId: string): Promise<number> => {
    const target = Math.max(...fast.map((c) => c.lastSeq));
    const t0 = performance.now();
    const r = await api(url, '/api/v1/faults', {
      method: 'POST',
      headers: { ...bearer(), ...JSON_TYPE },
      body: JSON.stringify({ resource: GPU, deviceId, reason: 'probe' }),
    });
    assert.equal(r.status, 201);
    await waitFor(
      'every fast client got the probe patch',
      () => fast.every((c) => c.lastSeq > target),
      30_000,
      5,
    );
    const ms = performance.now() - t0;
    await api(url, `/api/v1/faults/${r.body!.id as string}`, { method: 'DELETE', headers: bearer() });
    return ms;
  };
  const baselineMs = await probe('gpu-0');

  // Churn: a NUMA node of the NIC fails and heals over and over (large patches) until the slow
  // clients are cut off.
  let cycles = 0;
  let rssPeak = rssOf(child.pid);
  const churnStart = performance.now();
  while ((await metric('plugboard_gateway_stream_dropped_clients_total')) < SLOW) {
    const r = await api(url, '/api/v1/scenarios', {
      method: 'POST',
      headers: { ...bearer(), ...JSON_TYPE },
      body: JSON.stringify({ action: 'fail-numa-node', numaNode: cycles % 2, resource: NIC, ttlSeconds: 60 }),
    });
    assert.equal(r.status, 201, r.text);
    assert.equal((await api(url, '/api/v1/scenarios', { method: 'DELETE', headers: bearer() })).status, 204);
    cycles++;
    rssPeak = Math.max(rssPeak, rssOf(child.pid));
    assert.ok(performance.now() - churnStart < 120_000, `slow clients not cut off after ${cycles} cycles`);
  }
  const cutAfterMs = performance.now() - churnStart;
  // Let the fast clients drain what the churn sent them (client-side backlog), then probe again.
  await waitFor('fast clients caught up', () => new Set(fast.map((c) => c.lastSeq)).size === 1, 60_000, 20);
  const underLoadMs = await probe('gpu-1');
  rssPeak = Math.max(rssPeak, rssOf(child.pid));

  const text = await (await fetch(`${url}/metrics`)).text();
  assert.match(
    text,
    /plugboard_gateway_stream_dropped_clients_total\{view="full",reason="slow",node="ws-node"\} 10\b/,
  );
  assert.equal(await metric('plugboard_gateway_stream_clients'), CLIENTS - SLOW);
  // The slow sockets were closed by the gateway (4008 sent, then terminated after the grace period).
  for (const s of slow) s.resume();
  await waitFor(
    'slow sockets closed by the gateway',
    () => slow.every((s) => s.destroyed || s.readableEnded),
    20_000,
    50,
  );
  assert.deepEqual(
    fast.filter((c) => c.closedWith !== null).map((c) => c.closedWith),
    [],
    'no fast client was closed',
  );
  assert.equal(
    fast.reduce((n, c) => n + c.gaps, 0),
    0,
    'no fast client missed a patch',
  );
  const seqs = new Set(fast.map((c) => c.lastSeq));
  assert.equal(seqs.size, 1, 'all fast clients at the same seq');
  assert.ok(rssPeak - rssIdle < RSS_GROWTH_BOUND, `RSS grew ${(rssPeak - rssIdle) / 2 ** 20} MiB`);
  assert.equal(child.exitCode, null, 'the gateway is still running');

  const mib = (n: number) => (n / 2 ** 20).toFixed(0);
  report(t, {
    scenario: 'ws-load',
    figure: 'clients held (fast) / slow clients cut off',
    value: `${CLIENTS - SLOW} / ${SLOW}`,
  });
  report(t, {
    scenario: 'ws-load',
    figure: 'slow clients cut off after',
    value: `${cycles} fail/heal cycles, ${(cutAfterMs / 1000).toFixed(1)} s`,
  });
  report(t, {
    scenario: 'ws-load',
    figure: 'patch latency to all fast clients: before churn / after the slow ones were cut',
    value: `${baselineMs.toFixed(0)} / ${underLoadMs.toFixed(0)}`,
    unit: 'ms',
  });
  report(t, {
    scenario: 'ws-load',
    figure: 'gateway RSS idle → peak',
    value: `${mib(rssIdle)} → ${mib(rssPeak)}`,
    unit: 'MiB',
    bound: `growth < ${mib(RSS_GROWTH_BOUND)} MiB`,
  });
});
