// The browser stream client over real WebSockets. The peer is a scripted `ws` server because the
// cases under test are the protocol's failure modes (a lost patch, a failed resume, a dropped
// connection, a server error) that a healthy gateway does not produce on demand.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket, WebSocketServer, type WebSocket as ServerSocket } from 'ws';
import { applyLiveMessage, type LiveDocument, type LiveMessage } from './live-document';
import { LiveStream, type LinkStatus } from './live-stream';
import { waitFor as waitUntil } from '@plugboard/testbed/wait';

type Doc = { n: number };

let wss: WebSocketServer;
let port: number;
const connections: { url: string; ws: ServerSocket }[] = [];

before(async () => {
  wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((r) => wss.once('listening', r));
  port = (wss.address() as { port: number }).port;
  wss.on('connection', (ws, req) => connections.push({ url: req.url ?? '', ws }));
});
after(() => new Promise<void>((r) => wss.close(() => r())));

/** Stream state changes within milliseconds: re-check often. */
const waitFor = <T>(what: string, fn: () => T | null | undefined | false): Promise<T> =>
  waitUntil(what, fn, 5000, 10);

class FakeVisibility extends EventTarget {
  hidden = false;
  set(hidden: boolean) {
    this.hidden = hidden;
    this.dispatchEvent(new Event('visibilitychange'));
  }
}

function client(visibility?: FakeVisibility) {
  let doc: LiveDocument<Doc> | undefined;
  const statuses: LinkStatus[] = [];
  const stream = new LiveStream<Doc>({
    url: (since) => `ws://127.0.0.1:${port}/s${since === null ? '' : `?since=${since}`}`,
    currentSeq: () => doc?.seq ?? null,
    onStatus: (s) => statuses.push(s),
    WebSocketImpl: WebSocket as unknown as typeof globalThis.WebSocket,
    ...(visibility ? { doc: visibility } : {}),
    onMessage: (m: LiveMessage<Doc>) => {
      const r = applyLiveMessage(doc, m);
      if (r.kind === 'applied') doc = r.doc;
      return r.kind === 'resync' ? 'resync' : r.kind === 'error' ? 'error' : 'ok';
    },
  });
  return { stream, statuses, doc: () => doc, state: () => statuses.at(-1)?.state };
}

const send = (ws: ServerSocket, m: unknown) => ws.send(JSON.stringify(m));
const patchN = (seq: number, n: number) => ({
  type: 'patch',
  seq,
  ops: [{ op: 'replace', path: '/n', value: n }],
});

describe('LiveStream', () => {
  it('applies snapshot + patches, resumes with since after a gap, and takes a snapshot when resume fails too', async () => {
    connections.length = 0;
    const c = client();
    c.stream.start();
    const first = await waitFor('connection', () => connections[0]);
    assert.equal(first.url, '/s');
    send(first.ws, { type: 'snapshot', seq: 5, node: { n: 0 } });
    send(first.ws, patchN(6, 1));
    await waitFor('live with seq 6', () => c.state() === 'live' && c.doc()?.seq === 6);

    send(first.ws, patchN(8, 3)); // 7 is lost
    const second = await waitFor('resume connection', () => connections[1]);
    assert.equal(second.url, '/s?since=6');
    assert.equal(c.doc()?.data.n, 1, 'the gapped patch was not applied');

    send(second.ws, patchN(9, 4)); // the server could not fill the gap either
    const third = await waitFor('snapshot connection', () => connections[2]);
    assert.equal(third.url, '/s', 'second resync in a row asks for a fresh snapshot');
    send(third.ws, { type: 'snapshot', seq: 20, node: { n: 9 } });
    await waitFor('fresh snapshot applied', () => c.doc()?.seq === 20 && c.doc()?.data.n === 9);
    c.stream.stop();
  });

  it('reconnects with since after the server drops the connection, reporting reconnecting then live', async () => {
    connections.length = 0;
    const c = client();
    c.stream.start();
    const first = await waitFor('connection', () => connections[0]);
    send(first.ws, { type: 'snapshot', seq: 1, node: { n: 1 } });
    await waitFor('live', () => c.state() === 'live');
    first.ws.terminate();
    await waitFor('reconnecting', () => c.state() === 'reconnecting');
    const second = await waitFor('reconnect', () => connections[1]);
    assert.equal(second.url, '/s?since=1');
    send(second.ws, { type: 'heartbeat', seq: 1, at: 'now' });
    await waitFor('live again', () => c.state() === 'live');
    c.stream.stop();
  });

  it('reports a server error with its detail', async () => {
    connections.length = 0;
    const c = client();
    c.stream.start();
    const first = await waitFor('connection', () => connections[0]);
    send(first.ws, {
      type: 'error',
      status: 502,
      title: 'Gateway unreachable',
      detail: 'connect ECONNREFUSED',
    });
    first.ws.close(4502);
    const failed = await waitFor('failed', () => c.statuses.find((s) => s.state === 'failed'));
    assert.equal(failed.error, 'connect ECONNREFUSED');
    c.stream.stop();
  });

  it('pauses while the tab is hidden and resumes with since when it is shown', async () => {
    connections.length = 0;
    const vis = new FakeVisibility();
    const c = client(vis);
    c.stream.start();
    const first = await waitFor('connection', () => connections[0]);
    send(first.ws, { type: 'snapshot', seq: 3, node: { n: 3 } });
    await waitFor('live', () => c.state() === 'live');
    const closed = new Promise((r) => first.ws.once('close', r));
    vis.set(true);
    await closed;
    assert.equal(c.state(), 'paused');
    assert.equal(connections.length, 1, 'no reconnect while hidden');
    vis.set(false);
    const second = await waitFor('resumed', () => connections[1]);
    assert.equal(second.url, '/s?since=3');
    // Up to date after the resume: live at once, without waiting for a change or a heartbeat.
    await waitFor('live after resuming', () => c.state() === 'live');
    assert.equal(c.doc()?.seq, 3);
    c.stream.stop();
  });
});
