// kubelet-sim's kubelet.sock against a plugin that dials it the way grpc-go before 1.57 does
// (squat/generic-device-plugin built with grpc-go 1.33, for one): with the raw socket path as
// `:authority`. Node's HTTP/2 layer alone resets such a stream; kubelet-sim must register the
// plugin as a real kubelet (a grpc-go server) does. A stream Node's HTTP/2 layer still refuses is
// logged with the reason.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { connect } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { deviceplugin, KUBELET_SOCKET_NAME } from '@plugboard/proto';
import { startFixture, waitFor, type SimFixture } from './helpers.js';
import { TestPlugin } from './test-plugin.js';

const RESOURCE = 'example.com/raw-authority';
const REGISTER = '/v1beta1.Registration/Register';

const logs: Record<string, unknown>[] = [];
let f: SimFixture;
let plugin: TestPlugin;
let kubeletSock: string;

before(async () => {
  const logger = pino(
    { level: 'debug' },
    { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) },
  );
  f = await startFixture({ logger });
  kubeletSock = join(f.dir, KUBELET_SOCKET_NAME);
  plugin = new TestPlugin({ dir: f.dir, resourceName: RESOURCE, devices: [{ id: 'd0' }, { id: 'd1' }] });
  await plugin.start();
});
after(async () => {
  await plugin.stop();
  await f.cleanup();
});

function registerMessage(): Buffer {
  const request = deviceplugin.RegisterRequest.encode({
    version: 'v1beta1',
    endpoint: plugin.socketName,
    resourceName: RESOURCE,
    options: undefined,
  }).finish();
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(request.length, 1);
  return Buffer.concat([prefix, request]);
}

test('a Register whose :authority is the raw kubelet.sock path registers the plugin', async (t) => {
  // Node's HTTP/2 client sends :authority as given (HPACK-coded as nghttp2 sees fit) over the socket.
  const session: ClientHttp2Session = http2Connect('http://localhost', {
    createConnection: () => connect(kubeletSock),
  });
  t.after(() => session.close());
  const stream = session.request({
    ':method': 'POST',
    ':path': REGISTER,
    ':authority': kubeletSock,
    'content-type': 'application/grpc',
    te: 'trailers',
    'user-agent': 'grpc-go/1.33.0',
  });
  stream.end(registerMessage());
  stream.resume();
  const trailers = await new Promise<Record<string, unknown>>((resolve, reject) => {
    stream.on('trailers', resolve);
    stream.on('error', reject);
    stream.on('close', () =>
      reject(new Error(`stream closed (RST_STREAM code ${stream.rstCode}) without trailers`)),
    );
  });
  assert.equal(trailers['grpc-status'], '0');
  await waitFor(() => f.sim.state().resources[RESOURCE]?.allocatable === 2, `${RESOURCE} allocatable`);
  assert.ok(
    logs.some((l) => l.level === 20 && l.socket === kubeletSock && l.authority === kubeletSock),
    'the rewrite is logged at debug',
  );
});

/** A HEADERS frame whose block is all literals without indexing (RFC 7541 §6.2.2), raw strings < 127 octets. */
function headersFrame(streamId: number, fields: [string, string][]): Buffer {
  const str = (s: string): Buffer => Buffer.concat([Buffer.of(s.length), Buffer.from(s, 'latin1')]);
  const block = Buffer.concat(fields.flatMap(([name, value]) => [Buffer.of(0), str(name), str(value)]));
  const header = Buffer.alloc(9);
  header.writeUIntBE(block.length, 0, 3);
  header[3] = 0x1; // HEADERS
  header[4] = 0x4 | 0x1; // END_HEADERS | END_STREAM
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, block]);
}

test('a stream Node still refuses on kubelet.sock is logged with the reason', async (t) => {
  const socket = connect(kubeletSock);
  t.after(() => socket.destroy());
  socket.on('error', () => undefined);
  const settings = Buffer.from([0, 0, 0, 0x4, 0, 0, 0, 0, 0]);
  socket.write(
    Buffer.concat([
      Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'),
      settings,
      headersFrame(1, [
        [':method', 'POST'],
        [':scheme', 'http'],
        [':path', REGISTER],
        [':authority', kubeletSock],
        ['content-type', 'application/grpc'],
        ['te', 'gzip'],
      ]),
    ]),
  );
  const refused = await waitFor(
    () => logs.find((l) => l.msg === 'gRPC stream refused'),
    'a "gRPC stream refused" log line',
  );
  assert.equal(refused.level, 40);
  assert.equal(refused.socket, kubeletSock);
  assert.equal(refused.streamId, 1);
  assert.equal(refused.code, 'PROTOCOL_ERROR');
  assert.equal(refused.reason, 'te: "gzip" (HTTP/2 allows only "trailers")');
});
