// bindUnixServer with routeConnection against clients that send a raw socket path as `:authority` — as grpc-go before
// 1.57, grpc-java, older Python gRPC and kubelets before 1.26 do on a Unix socket — written frame
// by frame over a real Unix socket to a real grpc-js Registration service: literal and Huffman
// coded, across CONTINUATION frames with padding and priority, split across writes, and again on
// the same connection through the dynamic table. Also: a connection whose first request has a valid
// `:authority` (a grpc-js client; a grpc-go-like client that waits for the server's SETTINGS and
// writes each frame on its own) is handed to grpc-js as the socket itself; one that sends nothing
// in time goes through the rewriter and is still served; refusals (an undecodable header block, a
// header nghttp2 refuses, a client that is not HTTP/2, a native connection Node closes with an
// error) are logged with the reason and do not take the server down.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, Server, ServerCredentials } from '@grpc/grpc-js';
import {
  bindUnixServer,
  closeUnixServer,
  connectionRoutes,
  deviceplugin,
  type ConnectionRoute,
  type UnixServerLogger,
} from '@plugboard/proto';
import { routeConnection, type RoutedConnection } from '../src/index.js';
import { F, field, frame, grpcMessage, hpack, PREFACE, RawH2Client, T } from './h2-frames.js';

interface LogEntry {
  level: 'warn' | 'debug';
  msg: string;
  [field: string]: unknown;
}

const root = mkdtempSync(join(tmpdir(), 'pb-raw-authority-'));
const socketPath = join(root, 'device-plugins', 'kubelet.sock');
const registered: string[] = [];
const logs: LogEntry[] = [];
const log: UnixServerLogger = {
  warn: (fields, msg) => logs.push({ level: 'warn', msg, ...fields }),
  debug: (fields, msg) => logs.push({ level: 'debug', msg, ...fields }),
};
const clients: RawH2Client[] = [];

function registrationServer(): Server {
  const server = new Server();
  server.addService(deviceplugin.RegistrationService, {
    register: (call, callback) => {
      registered.push(call.request.resourceName);
      callback(null, {});
    },
  } satisfies deviceplugin.RegistrationServer);
  return server;
}

let server: Server;
before(async () => {
  server = registrationServer();
  await bindUnixServer(server, socketPath, { log, routeConnection });
});
after(async () => {
  for (const c of clients) c.close();
  await closeUnixServer(server, socketPath);
  rmSync(root, { recursive: true, force: true });
});

async function rawClient(path = socketPath, preface?: Buffer): Promise<RawH2Client> {
  const client = await RawH2Client.connect(path, preface);
  clients.push(client);
  return client;
}

const REGISTER_PATH = '/v1beta1.Registration/Register';

/** A Register request's header block as grpc-go 1.33 writes it: every literal indexed. */
function registerHeaders(authority: string, huffman = false): Buffer {
  return Buffer.concat([
    hpack.indexed(3), // :method POST
    hpack.indexed(6), // :scheme http
    hpack.incremental(4, REGISTER_PATH, huffman), // :path
    hpack.incremental(1, authority, huffman), // :authority
    hpack.incremental(31, 'application/grpc', huffman), // content-type
    hpack.incremental('te', 'trailers', huffman),
    hpack.incremental(58, 'grpc-go/1.33.0', huffman), // user-agent
  ]);
}

function registerBody(resourceName: string): Buffer {
  const request = deviceplugin.RegisterRequest.encode({
    version: 'v1beta1',
    endpoint: 'raw.sock',
    resourceName,
    options: undefined,
  }).finish();
  return grpcMessage(request);
}

/** Waits for the trailers of `streamId` and returns its grpc-status. */
async function grpcStatus(client: RawH2Client, streamId: number): Promise<string | undefined> {
  await client.waitFor(
    (f) =>
      f.streamId === streamId &&
      (f.type === T.RST_STREAM || (f.type === T.HEADERS && (f.flags & F.END_STREAM) !== 0)),
    `the end of stream ${streamId}`,
  );
  const reset = client.frames.find((f) => f.streamId === streamId && f.type === T.RST_STREAM);
  if (reset) return `RST_STREAM ${reset.payload.readUInt32BE(0)}`;
  const blocks = client.headerBlocks(streamId);
  return field(blocks.at(-1)!, 'grpc-status');
}

/** How many connections each route got while `run` ran. */
async function routesDuring(run: () => Promise<void>): Promise<Partial<Record<ConnectionRoute, number>>> {
  const before = connectionRoutes(server);
  await run();
  const after = connectionRoutes(server);
  const delta: Partial<Record<ConnectionRoute, number>> = {};
  for (const route of ['native', 'rewriting', 'refused'] as const) {
    if (after[route] !== before[route]) delta[route] = after[route] - before[route];
  }
  return delta;
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

test("control: Node's HTTP/2 server alone resets a raw-path :authority with PROTOCOL_ERROR", async (t) => {
  const plainPath = join(root, 'plain.sock');
  const plain = registrationServer();
  await new Promise<void>((resolve, reject) =>
    plain.bindAsync(`unix://${plainPath}`, ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  t.after(() => closeUnixServer(plain, plainPath));
  const client = await rawClient(plainPath);
  client.send(
    frame(T.HEADERS, F.END_HEADERS, 1, registerHeaders(plainPath)),
    frame(T.DATA, F.END_STREAM, 1, registerBody('example.com/plain')),
  );
  assert.equal(await grpcStatus(client, 1), 'RST_STREAM 1');
  assert.ok(!registered.includes('example.com/plain'));
});

test('control: bindUnixServer without routeConnection (its default) resets it the same way', async (t) => {
  const plainPath = join(root, 'unrouted.sock');
  const plain = registrationServer();
  await bindUnixServer(plain, plainPath);
  t.after(() => closeUnixServer(plain, plainPath));
  const client = await rawClient(plainPath);
  client.send(
    frame(T.HEADERS, F.END_HEADERS, 1, registerHeaders(plainPath)),
    frame(T.DATA, F.END_STREAM, 1, registerBody('example.com/unrouted')),
  );
  assert.equal(await grpcStatus(client, 1), 'RST_STREAM 1');
  assert.ok(!registered.includes('example.com/unrouted'));
  assert.deepEqual(connectionRoutes(plain), { native: 1, rewriting: 0, refused: 0 });
});

test('a raw-path :authority (literal) is served; a second request through the dynamic table too', async () => {
  logs.length = 0;
  const client = await rawClient();
  const routes = await routesDuring(async () => {
    client.send(
      frame(T.HEADERS, F.END_HEADERS, 1, registerHeaders(socketPath)),
      frame(T.DATA, F.END_STREAM, 1, registerBody('example.com/literal')),
    );
    assert.equal(await grpcStatus(client, 1), '0');
  });
  assert.deepEqual(routes, { rewriting: 1 });

  // Dynamic table, newest first: 62 user-agent, 63 te, 64 content-type, 65 :authority, 66 :path.
  const indexedOnly = Buffer.concat([3, 6, 66, 65, 64, 63, 62].map((i) => hpack.indexed(i)));
  client.send(
    frame(T.HEADERS, F.END_HEADERS, 3, indexedOnly),
    frame(T.DATA, F.END_STREAM, 3, registerBody('example.com/indexed')),
  );
  assert.equal(await grpcStatus(client, 3), '0');
  assert.deepEqual(registered.slice(-2), ['example.com/literal', 'example.com/indexed']);
  assert.deepEqual(
    logs.map((e) => [e.level, e.authority, e.socket]),
    [['debug', socketPath, socketPath]],
    'one debug line for the connection, no warnings',
  );
});

test('a Huffman-coded raw-path :authority over HEADERS (padded, with priority) + CONTINUATION', async () => {
  logs.length = 0;
  const client = await rawClient();
  const block = registerHeaders(socketPath, true);
  const cut1 = 7;
  const cut2 = Math.floor(block.length / 2);
  const padding = Buffer.alloc(6);
  const priority = Buffer.from([0, 0, 0, 0, 15]); // no dependency, weight 16
  client.send(
    frame(
      T.HEADERS,
      F.PADDED | F.PRIORITY,
      1,
      Buffer.of(padding.length),
      priority,
      block.subarray(0, cut1),
      padding,
    ),
    frame(T.CONTINUATION, 0, 1, block.subarray(cut1, cut2)),
    frame(T.CONTINUATION, F.END_HEADERS, 1, block.subarray(cut2)),
    frame(T.DATA, 0, 1, registerBody('example.com/huffman')),
    frame(T.DATA, F.END_STREAM, 1),
  );
  assert.equal(await grpcStatus(client, 1), '0');
  assert.equal(registered.at(-1), 'example.com/huffman');
  assert.equal(logs.filter((e) => e.level === 'warn').length, 0);
});

test('a request with neither :authority nor host is served, as grpc-go serves it', async () => {
  const client = await rawClient();
  const block = Buffer.concat([
    hpack.indexed(3),
    hpack.indexed(6),
    hpack.withoutIndexing(4, REGISTER_PATH),
    hpack.withoutIndexing(31, 'application/grpc'),
    hpack.withoutIndexing('te', 'trailers'),
  ]);
  client.send(
    frame(T.HEADERS, F.END_HEADERS, 1, block),
    frame(T.DATA, F.END_STREAM, 1, registerBody('example.com/no-authority')),
  );
  assert.equal(await grpcStatus(client, 1), '0');
});

test('a @grpc/grpc-js client is served natively and nothing is logged', async () => {
  logs.length = 0;
  const client = new deviceplugin.RegistrationClient(`unix://${socketPath}`, credentials.createInsecure());
  const routes = await routesDuring(async () => {
    try {
      for (const name of ['example.com/grpc-js-1', 'example.com/grpc-js-2']) {
        await new Promise<void>((resolve, reject) =>
          client.register(
            { version: 'v1beta1', endpoint: 'x.sock', resourceName: name, options: undefined },
            (err) => (err ? reject(err) : resolve()),
          ),
        );
      }
    } finally {
      client.close();
    }
  });
  assert.deepEqual(registered.slice(-2), ['example.com/grpc-js-1', 'example.com/grpc-js-2']);
  assert.deepEqual(routes, { native: 1 }, 'one connection, handed to grpc-js as the socket itself');
  assert.deepEqual(logs, []);
});

/** A SETTINGS frame with the given (identifier, value) pairs. */
function settingsFrame(...settings: [number, number][]): Buffer {
  const payload = Buffer.alloc(6 * settings.length);
  settings.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, 6 * i);
    payload.writeUInt32BE(value, 6 * i + 2);
  });
  return frame(T.SETTINGS, 0, 0, payload);
}

test("a grpc-go-like client — preface, then SETTINGS, then waits for the server's SETTINGS — is served natively", async () => {
  logs.length = 0;
  const client = await rawClient(socketPath, PREFACE);
  const routes = await routesDuring(async () => {
    // HEADER_TABLE_SIZE 0 (the server's encoder may not index), INITIAL_WINDOW_SIZE 1 MiB.
    await delay(10);
    client.send(settingsFrame([0x1, 0], [0x4, 1 << 20]));
    // Like every gRPC client, it sends no request before the server's SETTINGS (which RawH2Client ACKs).
    const first = await client.waitFor((f) => f.type === T.SETTINGS && !(f.flags & F.ACK), 'SETTINGS');
    assert.equal(client.frames[0], first, "the server's first frame is SETTINGS");
    await delay(10);
    const headers = Buffer.concat([
      hpack.indexed(3),
      hpack.indexed(6),
      hpack.incremental(4, REGISTER_PATH),
      hpack.incremental(1, 'localhost'),
      hpack.incremental(31, 'application/grpc'),
      hpack.incremental('te', 'trailers'),
    ]);
    client.send(frame(T.HEADERS, F.END_HEADERS, 1, headers));
    await delay(10);
    client.send(frame(T.DATA, F.END_STREAM, 1, registerBody('example.com/go-like-1')));
    assert.equal(await grpcStatus(client, 1), '0');
  });
  assert.deepEqual(routes, { native: 1 });
  // The same connection, now all native: a request through the dynamic table (62 te, 63
  // content-type, 64 :authority, 65 :path).
  client.send(
    frame(T.HEADERS, F.END_HEADERS, 3, Buffer.concat([3, 6, 65, 64, 63, 62].map((i) => hpack.indexed(i)))),
    frame(T.DATA, F.END_STREAM, 3, registerBody('example.com/go-like-2')),
  );
  assert.equal(await grpcStatus(client, 3), '0');
  assert.deepEqual(registered.slice(-2), ['example.com/go-like-1', 'example.com/go-like-2']);
  // Two SETTINGS (the early one, then Node's own) and one ACK of the client's; the ACK of the early
  // one never reached Node's HTTP/2 layer, which would have closed the connection for it.
  const settings = client.frames.filter((f) => f.type === T.SETTINGS);
  assert.deepEqual(
    settings.map((f) => f.flags & F.ACK),
    [0, 0, F.ACK],
  );
  assert.equal(client.frames.filter((f) => f.type === T.GOAWAY).length, 0);
  assert.deepEqual(logs, []);
});

test('a raw-path client whose first HEADERS is split across writes is rewritten; its next request too', async () => {
  logs.length = 0;
  const client = await rawClient();
  await client.waitFor((f) => f.type === T.SETTINGS, "the server's SETTINGS");
  const block = registerHeaders(socketPath, true);
  const cut = 10;
  const bytes = Buffer.concat([
    frame(T.HEADERS, 0, 1, block.subarray(0, cut)),
    frame(T.CONTINUATION, F.END_HEADERS, 1, block.subarray(cut)),
    frame(T.DATA, F.END_STREAM, 1, registerBody('example.com/split-1')),
  ]);
  const routes = await routesDuring(async () => {
    // Mid frame header, mid header block, mid CONTINUATION, then the rest.
    for (const [from, to] of [
      [0, 4],
      [4, 14],
      [14, 9 + cut + 9 + 5],
      [9 + cut + 9 + 5, bytes.length],
    ] as const) {
      client.send(bytes.subarray(from, to));
      await delay(15);
    }
    assert.equal(await grpcStatus(client, 1), '0');
  });
  assert.deepEqual(routes, { rewriting: 1 });
  client.send(
    frame(
      T.HEADERS,
      F.END_HEADERS,
      3,
      Buffer.concat([3, 6, 66, 65, 64, 63, 62].map((i) => hpack.indexed(i))),
    ),
    frame(T.DATA, F.END_STREAM, 3, registerBody('example.com/split-2')),
  );
  assert.equal(await grpcStatus(client, 3), '0');
  assert.deepEqual(registered.slice(-2), ['example.com/split-1', 'example.com/split-2']);
  assert.deepEqual(
    logs.map((e) => [e.level, e.authority]),
    [['debug', socketPath]],
  );
});

test('routeConnection hands a valid-authority connection over as the net.Socket itself; an idle one goes through the rewriter and is served', async (t) => {
  const path = join(root, 'routed.sock');
  const grpcServer = registrationServer();
  const injector = grpcServer.createConnectionInjector(ServerCredentials.createInsecure());
  const accepted: Socket[] = [];
  const routed: RoutedConnection[] = [];
  const listener = createServer((socket) => {
    accepted.push(socket);
    routeConnection(socket, { firstRequestTimeoutMs: 100 }, (r) => {
      routed.push(r);
      if (r.route !== 'refused') injector.injectConnection(r.connection);
    });
  });
  await new Promise<void>((resolve) => listener.listen(path, resolve));
  t.after(async () => {
    grpcServer.forceShutdown();
    for (const socket of accepted) socket.destroy();
    await new Promise((resolve) => listener.close(resolve));
  });

  const client = new deviceplugin.RegistrationClient(`unix://${path}`, credentials.createInsecure());
  try {
    await new Promise<void>((resolve, reject) =>
      client.register(
        { version: 'v1beta1', endpoint: 'x.sock', resourceName: 'example.com/routed', options: undefined },
        (err) => (err ? reject(err) : resolve()),
      ),
    );
  } finally {
    client.close();
  }
  assert.equal(routed.length, 1);
  assert.equal(routed[0]!.route, 'native');
  assert.equal(
    routed[0]!.route === 'native' && routed[0]!.connection,
    accepted[0],
    'the accepted socket itself',
  );

  // Preface and SETTINGS, the server's SETTINGS ACKed, then nothing for longer than the wait: the
  // rewriter takes the connection, and a raw-path request after that is served.
  const idle = await rawClient(path);
  await idle.waitFor((f) => f.type === T.SETTINGS, "the server's SETTINGS");
  await delay(200);
  assert.deepEqual(
    routed.slice(1).map((r) => [r.route, r.route === 'rewriting' && r.reason]),
    [['rewriting', 'idle']],
  );
  idle.send(
    frame(T.HEADERS, F.END_HEADERS, 1, registerHeaders(path)),
    frame(T.DATA, F.END_STREAM, 1, registerBody('example.com/after-idle')),
  );
  assert.equal(await grpcStatus(idle, 1), '0');
  assert.equal(registered.at(-1), 'example.com/after-idle');
  assert.equal(idle.frames.filter((f) => f.type === T.GOAWAY).length, 0);
});

test('a @grpc/grpc-js client sending the socket path as its authority (as grpc-go < 1.57 does) is served', async () => {
  logs.length = 0;
  const client = new deviceplugin.RegistrationClient(`unix://${socketPath}`, credentials.createInsecure(), {
    'grpc.default_authority': socketPath,
  });
  const routes = await routesDuring(async () => {
    try {
      await new Promise<void>((resolve, reject) =>
        client.register(
          {
            version: 'v1beta1',
            endpoint: 'x.sock',
            resourceName: 'example.com/default-authority',
            options: undefined,
          },
          (err) => (err ? reject(err) : resolve()),
        ),
      );
    } finally {
      client.close();
    }
  });
  assert.equal(registered.at(-1), 'example.com/default-authority');
  assert.deepEqual(routes, { rewriting: 1 });
  assert.deepEqual(
    logs.map((e) => e.level),
    ['debug'],
  );
});

test('an undecodable header block: GOAWAY COMPRESSION_ERROR, logged with the reason; the server keeps serving', async () => {
  logs.length = 0;
  const bad = await rawClient();
  const routes = await routesDuring(async () => {
    // Index 70 names a dynamic-table entry this fresh connection does not have.
    bad.send(frame(T.HEADERS, F.END_HEADERS | F.END_STREAM, 1, hpack.indexed(3), hpack.indexed(70)));
    const goaway = await bad.waitFor((f) => f.type === T.GOAWAY, 'GOAWAY');
    assert.equal(goaway.payload.readUInt32BE(4), 9, 'COMPRESSION_ERROR');
    assert.match(goaway.payload.toString('utf8', 8), /stream 1 cannot be decoded: index 70 beyond the table/);
    await bad.waitClosed();
  });
  assert.deepEqual(routes, { refused: 1 }, 'refused before grpc-js saw it');
  assert.equal(bad.frames[0]?.type, T.SETTINGS, 'after the SETTINGS a server starts with');
  assert.deepEqual(
    logs.map(({ level, msg, socket, scope, code }) => ({ level, msg, socket, scope, code })),
    [
      {
        level: 'warn',
        msg: 'gRPC connection refused',
        socket: socketPath,
        scope: 'connection',
        code: 'COMPRESSION_ERROR',
      },
    ],
  );
  assert.match(String(logs[0]!.reason), /index 70 beyond the table/);

  const good = await rawClient();
  good.send(
    frame(T.HEADERS, F.END_HEADERS, 1, registerHeaders(socketPath)),
    frame(T.DATA, F.END_STREAM, 1, registerBody('example.com/after-bad')),
  );
  assert.equal(await grpcStatus(good, 1), '0');
});

test("a stream nghttp2 refuses for another reason is logged with nghttp2's reason; the connection goes on", async () => {
  logs.length = 0;
  const client = await rawClient();
  const teGzip = Buffer.concat([
    hpack.indexed(3),
    hpack.indexed(6),
    hpack.withoutIndexing(4, REGISTER_PATH),
    hpack.withoutIndexing(1, 'localhost'),
    hpack.withoutIndexing('te', 'gzip'),
  ]);
  client.send(frame(T.HEADERS, F.END_HEADERS | F.END_STREAM, 1, teGzip));
  assert.equal(await grpcStatus(client, 1), 'RST_STREAM 1');
  await waitForLog((e) => e.scope === 'stream');
  assert.deepEqual(
    logs.map(({ msg, scope, streamId, code, reason }) => ({ msg, scope, streamId, code, reason })),
    [
      {
        msg: 'gRPC stream refused',
        scope: 'stream',
        streamId: 1,
        code: 'PROTOCOL_ERROR',
        reason: 'te: "gzip" (HTTP/2 allows only "trailers")',
      },
    ],
  );
  client.send(
    frame(T.HEADERS, F.END_HEADERS, 3, registerHeaders(socketPath)),
    frame(T.DATA, F.END_STREAM, 3, registerBody('example.com/after-reset')),
  );
  assert.equal(await grpcStatus(client, 3), '0');
});

test('a client that does not speak HTTP/2 (HTTP/1, an h2c upgrade) is logged, once', async () => {
  for (const request of [
    'GET / HTTP/1.1\r\nHost: x\r\n\r\n',
    'GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n',
  ]) {
    logs.length = 0;
    const socket = connect(socketPath);
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.on('error', () => undefined);
    socket.resume();
    socket.end(request);
    await closed;
    await waitForLog((e) => e.scope === 'connection');
    await delay(20);
    assert.equal(logs.length, 1, JSON.stringify(logs));
    assert.equal(logs[0]!.msg, 'gRPC connection refused');
    assert.match(
      String(logs[0]!.reason),
      /^not an HTTP\/2 client: no connection preface \(got "GET \/ HTTP\/1.1\\r\\n"…\)$/,
    );
  }
});

test('a natively served connection that Node closes with an error is logged with it', async () => {
  logs.length = 0;
  const client = await rawClient();
  const valid = Buffer.concat([
    hpack.indexed(3),
    hpack.indexed(6),
    hpack.withoutIndexing(4, REGISTER_PATH),
    hpack.withoutIndexing(1, 'localhost'),
    hpack.withoutIndexing('te', 'trailers'),
  ]);
  const routes = await routesDuring(async () => {
    client.send(frame(T.HEADERS, F.END_HEADERS, 1, valid));
    await client.waitFor((f) => f.streamId === 1, 'an answer on stream 1');
  });
  assert.deepEqual(routes, { native: 1 });
  // Past Node's maxSessionInvalidFrames (1000): each of these is a stream nghttp2 resets (te: gzip).
  // The resets themselves are not seen on the native path; the session's end is.
  const teGzip = Buffer.concat([
    hpack.indexed(3),
    hpack.indexed(6),
    hpack.withoutIndexing(4, REGISTER_PATH),
    hpack.withoutIndexing(1, 'localhost'),
    hpack.withoutIndexing('te', 'gzip'),
  ]);
  const frames: Buffer[] = [];
  for (let stream = 3; stream < 3 + 2 * 1010; stream += 2) {
    frames.push(frame(T.HEADERS, F.END_HEADERS | F.END_STREAM, stream, teGzip));
  }
  client.send(...frames);
  await client.waitClosed();
  await waitForLog((e) => e.scope === 'connection');
  assert.deepEqual(
    logs.map(({ level, msg, socket, scope, code, reason }) => ({ level, msg, socket, scope, code, reason })),
    [
      {
        level: 'warn',
        msg: 'gRPC connection refused',
        socket: socketPath,
        scope: 'connection',
        code: 'ERR_HTTP2_TOO_MANY_INVALID_FRAMES',
        reason: 'Too many invalid HTTP/2 frames',
      },
    ],
  );
});

async function waitForLog(match: (e: LogEntry) => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!logs.some(match)) {
    if (Date.now() > deadline) throw new Error(`no such log entry; got ${JSON.stringify(logs)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
