// UnixSocketServer refuses a socket path no client could dial, before binding anything: bound
// under its short hidden name and renamed, a 108-byte path would exist and never answer (a real
// kubelet's dial: 'connect: invalid argument'), and the driver would wait to be registered forever.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server } from '@grpc/grpc-js';
import { pino } from 'pino';
import { UNIX_SOCKET_PATH_MAX_BYTES } from '@plugboard/proto';
import { PluginError } from './errors.js';
import { UnixSocketServer } from './socket-server.js';

test('a socket path longer than a Unix socket address holds is an invalid argument, nothing bound', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pb-sock-long-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, `${'r'.repeat(UNIX_SOCKET_PATH_MAX_BYTES - dir.length - 5)}.sock`);
  assert.equal(Buffer.byteLength(path), UNIX_SOCKET_PATH_MAX_BYTES + 1);
  let built = 0;
  const socket = new UnixSocketServer({
    path,
    build: () => (built++, new Server()),
    logger: pino({ level: 'silent' }),
    bindHidden: true,
  });
  await assert.rejects(socket.serve(), (err: unknown) => {
    assert.ok(err instanceof PluginError);
    assert.equal(err.code, 'invalid-argument');
    assert.match(
      err.message,
      new RegExp(`${path} is 108 bytes, longer than a Unix socket address holds \\(107\\)`),
    );
    return true;
  });
  assert.equal(built, 0);
  assert.equal(socket.serving, false);
  assert.equal(existsSync(path), false);
  assert.deepEqual(readdirSync(dir), []);
});
