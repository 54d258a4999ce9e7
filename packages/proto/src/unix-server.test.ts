// bindUnixServer / closeUnixServer against real Unix sockets: a stale socket file is replaced,
// missing directories are created with the requested mode, close removes the file, a server bound
// at the same path right after a close keeps its socket and serves, and connections are counted by
// how they were handed to grpc-js (natively by default, or as an injected router decides).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, linkSync, lstatSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, Server } from '@grpc/grpc-js';
import { deviceplugin } from './index.js';
import {
  bindUnixServer,
  closeUnixServer,
  connectionRoutes,
  unixSocketPathProblem,
  UNIX_SOCKET_PATH_MAX_BYTES,
  type ConnectionRouter,
} from './unix-server.js';

function registrationServer(calls: string[]): Server {
  const server = new Server();
  server.addService(deviceplugin.RegistrationService, {
    register: (call, callback) => {
      calls.push(call.request.resourceName);
      callback(null, {});
    },
  } satisfies deviceplugin.RegistrationServer);
  return server;
}

async function register(socketPath: string, resourceName: string): Promise<void> {
  const client = new deviceplugin.RegistrationClient(`unix://${socketPath}`, credentials.createInsecure());
  try {
    await new Promise<void>((resolve, reject) =>
      client.register({ version: 'v1beta1', endpoint: 'x.sock', resourceName, options: undefined }, (err) =>
        err ? reject(err) : resolve(),
      ),
    );
  } finally {
    client.close();
  }
}

test('binds over a stale socket file, in a directory it creates with the given mode', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'pb-unix-server-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, 'a', 'b');
  const socketPath = join(dir, 'kubelet.sock');

  const calls: string[] = [];
  const first = registrationServer(calls);
  await bindUnixServer(first, socketPath, { directoryMode: 0o750 });
  assert.equal(statSync(dir).mode & 0o777, 0o750 & ~process.umask());
  await register(socketPath, 'example.com/first');
  await closeUnixServer(first, socketPath);
  assert.equal(existsSync(socketPath), false, 'close removes the socket');

  // A socket file left behind by a process that died: nothing listens on it. (A hard link keeps
  // the path when libuv unlinks the listener's own path on close.)
  const stale = createServer();
  const listenerPath = join(root, 'listener.sock');
  await new Promise<void>((resolve) => stale.listen(listenerPath, resolve));
  linkSync(listenerPath, socketPath);
  await new Promise<void>((resolve) => stale.close(() => resolve()));
  assert.ok(lstatSync(socketPath).isSocket());

  const second = registrationServer(calls);
  await bindUnixServer(second, socketPath);
  await register(socketPath, 'example.com/second');
  await closeUnixServer(second, null);
  assert.deepEqual(calls, ['example.com/first', 'example.com/second']);
});

test('a server bound at the same path right after close keeps its socket', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'pb-unix-server-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const socketPath = join(root, 'kubelet.sock');
  const calls: string[] = [];

  for (let i = 0; i < 5; i++) {
    const old = registrationServer(calls);
    await bindUnixServer(old, socketPath);
    // An open connection, as a plugin keeps to a kubelet, makes the close take a moment.
    await register(socketPath, `example.com/old-${i}`);
    await closeUnixServer(old, socketPath);
    const next = registrationServer(calls);
    await bindUnixServer(next, socketPath);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(existsSync(socketPath), `round ${i}: the new socket is still there`);
    await register(socketPath, `example.com/new-${i}`);
    await closeUnixServer(next, socketPath);
  }
  assert.equal(calls.length, 10);
});

test('closing a server that was never bound resolves', async () => {
  await closeUnixServer(registrationServer([]), null);
});

test('a server bound to two paths serves on both and closes both', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'pb-unix-server-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const calls: string[] = [];
  const server = registrationServer(calls);
  const [a, b] = [join(root, 'a.sock'), join(root, 'b.sock')];
  await bindUnixServer(server, a);
  await bindUnixServer(server, b);
  await register(a, 'example.com/a');
  await register(b, 'example.com/b');
  assert.deepEqual(
    connectionRoutes(server),
    { native: 2, rewriting: 0, refused: 0 },
    'a grpc-js client on each, served natively',
  );
  await closeUnixServer(server, a);
  assert.deepEqual(calls, ['example.com/a', 'example.com/b']);
  assert.equal(existsSync(a), false);
  assert.equal(existsSync(b), false, "the listener's close unlinks its path");
});

test('an injected router decides how each connection reaches the server; its refusals are logged', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'pb-unix-server-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const socketPath = join(root, 'kubelet.sock');
  const calls: string[] = [];
  const warnings: object[] = [];
  const log = { warn: (fields: object) => warnings.push(fields), debug: () => undefined };
  let seen = 0;
  // Serves the first connection as it is and refuses every later one.
  const routeConnection: ConnectionRouter = (socket, events, onRouted) => {
    if (seen++ === 0) {
      onRouted({ route: 'native', connection: socket });
      return;
    }
    events.onRefused?.({ scope: 'connection', streamId: 0, code: 'REFUSED_STREAM', reason: 'test' });
    socket.destroy();
    onRouted({ route: 'refused' });
  };
  const server = registrationServer(calls);
  await bindUnixServer(server, socketPath, { log, routeConnection });
  t.after(() => closeUnixServer(server, socketPath));
  await register(socketPath, 'example.com/first');
  await assert.rejects(register(socketPath, 'example.com/second'));
  assert.deepEqual(calls, ['example.com/first']);
  // grpc-js may dial again before the failed call's client is closed: each attempt is refused.
  const routes = connectionRoutes(server);
  assert.equal(routes.native, 1);
  assert.equal(routes.rewriting, 0);
  assert.ok(routes.refused >= 1);
  assert.equal(warnings.length, routes.refused);
  for (const w of warnings) {
    assert.deepEqual(w, {
      socket: socketPath,
      scope: 'connection',
      streamId: 0,
      code: 'REFUSED_STREAM',
      reason: 'test',
    });
  }
});

test('a path longer than a Unix socket address holds is refused by name, nothing bound', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pb-unix-long-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const fits = join(dir, 'a'.repeat(UNIX_SOCKET_PATH_MAX_BYTES - dir.length - 1));
  const tooLong = `${fits}b`;
  assert.equal(Buffer.byteLength(fits), UNIX_SOCKET_PATH_MAX_BYTES);
  assert.equal(unixSocketPathProblem(fits), null);
  const server = new Server();
  await assert.rejects(bindUnixServer(server, tooLong), {
    message: `the socket path ${tooLong} is 108 bytes, longer than a Unix socket address holds (107): use a shorter directory`,
  });
  assert.equal(existsSync(tooLong), false);
  // The longest path that fits binds.
  await bindUnixServer(server, fits);
  t.after(() => closeUnixServer(server, fits));
  assert.ok(lstatSync(fits).isSocket());
});
