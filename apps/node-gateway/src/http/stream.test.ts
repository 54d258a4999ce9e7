import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fastJsonPatch from 'fast-json-patch';
import { WebSocket } from 'ws';
import { CLOSE_SLOW_CONSUMER } from '@plugboard/api';
import { StreamHub } from './stream.js';
import { connectStream, waitFor } from '../../test/helpers.js';

const { applyPatch, compare } = fastJsonPatch;
type Operation = Parameters<typeof applyPatch>[1][number];

async function serve(options: Partial<ConstructorParameters<typeof StreamHub>[0]> = {}) {
  const doc = { n: 0, items: {} as Record<string, string> };
  const hub = new StreamHub(
    {
      heartbeatMs: 60_000,
      maxQueueBytes: 1 << 20,
      historySize: 4,
      maxClients: 100,
      closeGraceMs: 200,
      ...options,
    },
    { full: structuredClone(doc), summary: { n: 0 } },
  );
  const server: Server = createServer();
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url!, 'http://x');
    const since = url.searchParams.get('since');
    hub.accept(req, socket, head, 'full', since === null ? null : Number(since));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  let current = structuredClone(doc);
  const publish = (mutate: (d: typeof doc) => void) => {
    const next = structuredClone(current);
    mutate(next);
    hub.channels.full.publish(next, compare(current, next) as never);
    current = next;
  };
  const stop = async () => {
    await hub.closeAll(200);
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
  return { hub, url, publish, stop, current: () => current };
}

test('a client gets the snapshot, then patches that rebuild the same document', async () => {
  const s = await serve();
  after(s.stop);
  s.publish((d) => (d.n = 1));
  const c = await connectStream(s.url);
  const snap = await c.next((m) => m.type === 'snapshot', 'snapshot');
  assert.equal(snap.type === 'snapshot' && snap.seq, 1);
  let doc: unknown = snap.type === 'snapshot' ? structuredClone(snap.node) : null;
  s.publish((d) => (d.items.a = 'x'));
  s.publish((d) => (d.n = 2));
  const p2 = await c.next((m) => m.type === 'patch' && m.seq === 3, 'patch 3');
  for (const m of c.messages) if (m.type === 'patch') doc = applyPatch(doc, m.ops as Operation[]).newDocument;
  assert.equal(p2.seq, 3);
  assert.deepEqual(doc, s.current());
  await c.close();
});

test('?since=N resumes with the missing patches, or a fresh snapshot when history is too short', async () => {
  const s = await serve();
  after(s.stop);
  for (let i = 1; i <= 3; i++) s.publish((d) => (d.n = i));
  const resumed = await connectStream(`${s.url}?since=1`);
  const first = await resumed.next(() => true, 'first message');
  assert.deepEqual([first.type, first.seq], ['patch', 2]);
  await resumed.next((m) => m.seq === 3, 'patch 3');
  await resumed.close();
  for (let i = 4; i <= 10; i++) s.publish((d) => (d.n = i)); // history keeps 4
  const old = await connectStream(`${s.url}?since=2`);
  const snap = await old.next(() => true, 'first message');
  assert.equal(snap.type, 'snapshot');
  assert.equal(snap.seq, 10);
  await old.close();
  const future = await connectStream(`${s.url}?since=99`);
  assert.equal((await future.next(() => true, 'first message')).type, 'snapshot');
  await future.close();
});

test('a client that stops reading is cut off with 4008 while a reading client keeps receiving', async () => {
  // The close frame waits behind everything already queued for the slow client; a grace period the
  // test cannot outrun on a busy machine keeps the server from terminating before the client, once
  // it reads again, gets there (with 200 ms the close turned into 1006 under load).
  const s = await serve({ maxQueueBytes: 256 << 10, closeGraceMs: 60_000 });
  after(s.stop);
  const slow = await connectStream(s.url);
  const fast = await connectStream(s.url);
  await slow.next((m) => m.type === 'snapshot', 'slow snapshot');
  // Stop reading: the kernel buffers fill, then the gateway's send queue grows past the limit.
  (slow.ws as unknown as { _socket: import('node:net').Socket })._socket.pause();
  const big = 'x'.repeat(32 << 10);
  let i = 0;
  const dropped = await waitFor(
    'the slow client to be cut off',
    () => {
      for (let k = 0; k < 20; k++) s.publish((d) => (d.items[`k${i++ % 8}`] = `${i}${big}`));
      return s.hub.channels.full.clients.size === 1;
    },
    20_000,
  );
  assert.ok(dropped);
  const lastSeq = s.hub.channels.full.seq;
  await fast.next((m) => m.seq === lastSeq, 'fast client to get the latest patch', 10_000);
  (slow.ws as unknown as { _socket: import('node:net').Socket })._socket.resume();
  const closed = await slow.closed;
  assert.equal(closed.code, CLOSE_SLOW_CONSUMER);
  assert.match(closed.reason, /slow consumer/);
  await fast.close();
});

test('a client that sends a message is closed with 1008', async () => {
  const s = await serve();
  after(s.stop);
  const c = await connectStream(s.url);
  c.ws.send('hello');
  const closed = await c.closed;
  assert.equal(closed.code, 1008);
  assert.equal(c.ws.readyState, WebSocket.CLOSED);
});

test('heartbeats carry the current seq', async () => {
  const s = await serve({ heartbeatMs: 100 });
  after(s.stop);
  s.publish((d) => (d.n = 5));
  const c = await connectStream(s.url);
  const hb = await c.next((m) => m.type === 'heartbeat', 'heartbeat');
  assert.equal(hb.seq, 1);
  await c.close();
});
