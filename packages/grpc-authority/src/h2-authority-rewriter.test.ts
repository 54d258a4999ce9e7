// The HTTP/2 authority rewriter on byte streams: untouched traffic comes out byte for byte however
// it is chunked; a raw-path :authority comes out as localhost, in frames a fresh server-side HPACK
// decoder reads back to the same headers (also for every later block on the connection, also when
// split over CONTINUATION frames); trailers are left alone; protocol violations are refused with
// the right error code; the SETTINGS ACK a routed connection owes is dropped; the first request is
// told apart; the server-side watcher reports SETTINGS, RST_STREAM and GOAWAY.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { F, frame, hpack, parseFrames, PREFACE, T, type Frame } from '../test/h2-frames.js';
import { encodeInteger, HpackDecoder, type HeaderField } from './hpack.js';
import { H2ConnectionError, RequestAuthorityRewriter, ServerFrameWatcher } from './h2-authority-rewriter.js';

const RAW = '/var/lib/kubelet/device-plugins/kubelet.sock';
const START = Buffer.concat([PREFACE, frame(T.SETTINGS, 0, 0)]);

function request(authority: string): Buffer {
  return Buffer.concat([
    hpack.indexed(3),
    hpack.indexed(6),
    hpack.incremental(4, '/v1beta1.Registration/Register'),
    hpack.incremental(1, authority, true),
    hpack.incremental(31, 'application/grpc'),
    hpack.incremental('te', 'trailers'),
  ]);
}
// Dynamic table after request(): 62 te, 63 content-type, 64 :authority, 65 :path.
const REPEAT = Buffer.concat([3, 6, 65, 64, 63, 62].map((i) => hpack.indexed(i)));

/** Feeds `input` in chunks of the given sizes (cycled); returns the output joined. */
function run(
  input: Buffer,
  sizes: number[] = [input.length],
  rewriter = new RequestAuthorityRewriter(),
): Buffer {
  const out: Buffer[] = [];
  for (let at = 0, i = 0; at < input.length; i++) {
    const n = sizes[i % sizes.length]!;
    out.push(...rewriter.write(input.subarray(at, at + n)));
    at += n;
  }
  return Buffer.concat(out);
}

/** The frames after the preface, with each header block decoded as the server would. */
function serverView(output: Buffer): { frames: Frame[]; blocks: Map<number, HeaderField[][]> } {
  assert.deepEqual(output.subarray(0, PREFACE.length), PREFACE);
  const { frames, rest } = parseFrames(output.subarray(PREFACE.length));
  assert.equal(rest.length, 0);
  const decoder = new HpackDecoder();
  const blocks = new Map<number, HeaderField[][]>();
  let pending: Buffer[] = [];
  for (const f of frames) {
    if (f.type !== T.HEADERS && f.type !== T.CONTINUATION) continue;
    let fragment = f.payload;
    if (f.type === T.HEADERS) {
      const pad = f.flags & F.PADDED ? f.payload[0]! : 0;
      const start = (f.flags & F.PADDED ? 1 : 0) + (f.flags & F.PRIORITY ? 5 : 0);
      fragment = f.payload.subarray(start, f.payload.length - pad);
    }
    pending.push(fragment);
    if (f.flags & F.END_HEADERS) {
      const list = blocks.get(f.streamId) ?? [];
      list.push(decoder.decode(Buffer.concat(pending)).fields);
      blocks.set(f.streamId, list);
      pending = [];
    }
  }
  return { frames, blocks };
}

const pairs = (fields: HeaderField[] | undefined): [string, string][] =>
  (fields ?? []).map((f) => [f.name, f.value]);

test('a connection with valid authorities comes out byte for byte, however it is chunked', () => {
  const input = Buffer.concat([
    START,
    frame(T.WINDOW_UPDATE, 0, 0, Buffer.from([0, 1, 0, 0])),
    frame(T.HEADERS, F.END_HEADERS, 1, request('localhost')),
    frame(T.DATA, F.END_STREAM, 1, Buffer.alloc(40, 7)),
    frame(T.HEADERS, F.END_HEADERS | F.PADDED, 3, Buffer.of(3), REPEAT, Buffer.alloc(3)),
    frame(T.DATA, F.END_STREAM, 3, Buffer.alloc(20000, 1)),
    frame(T.PING, 0, 0, Buffer.alloc(8)),
  ]);
  for (const sizes of [[input.length], [1], [2, 3], [9], [10, 1, 100], [16384]]) {
    assert.deepEqual(run(input, sizes), input, `chunks of ${sizes.join(',')}`);
  }
});

test('a raw-path :authority becomes localhost, and every later block is re-encoded to match', () => {
  const input = Buffer.concat([
    START,
    frame(T.HEADERS, F.END_HEADERS, 1, request(RAW)),
    frame(T.DATA, F.END_STREAM, 1, Buffer.from('first')),
    frame(T.HEADERS, F.END_HEADERS | F.END_STREAM, 3, REPEAT),
    frame(T.HEADERS, F.END_HEADERS, 5, request('localhost')),
    frame(T.DATA, F.END_STREAM, 5, Buffer.from('third')),
  ]);
  const rewrites: [number, string | null][] = [];
  const rewriter = new RequestAuthorityRewriter({ onRewrite: (s, a) => rewrites.push([s, a]) });
  const whole = run(input, undefined, rewriter);
  assert.deepEqual(run(input, [1]), whole, 'the same bytes however the input is chunked');

  const { frames, blocks } = serverView(whole);
  const expected = [
    [':method', 'POST'],
    [':scheme', 'http'],
    [':path', '/v1beta1.Registration/Register'],
    [':authority', 'localhost'],
    ['content-type', 'application/grpc'],
    ['te', 'trailers'],
  ];
  for (const stream of [1, 3, 5])
    assert.deepEqual(pairs(blocks.get(stream)?.[0]), expected, `stream ${stream}`);
  assert.deepEqual(rewrites, [
    [1, RAW],
    [3, RAW],
  ]);
  assert.deepEqual(
    frames.map((f) => [f.type, f.flags, f.streamId]),
    [
      [T.SETTINGS, 0, 0],
      [T.HEADERS, F.END_HEADERS, 1],
      [T.DATA, F.END_STREAM, 1],
      [T.HEADERS, F.END_HEADERS | F.END_STREAM, 3],
      [T.HEADERS, F.END_HEADERS, 5],
      [T.DATA, F.END_STREAM, 5],
    ],
  );
  assert.equal(frames[5]!.payload.toString(), 'third');
});

test('a large rewritten block is split into frames of at most 16384 octets, keeping priority and END_STREAM', () => {
  const block = Buffer.concat([request(RAW), hpack.withoutIndexing('x-big', 'b'.repeat(40000))]);
  const priority = Buffer.from([0x80, 0, 0, 1, 200]);
  const cut = 10000;
  const input = Buffer.concat([
    START,
    frame(T.HEADERS, F.PRIORITY | F.END_STREAM, 1, priority, block.subarray(0, cut)),
    frame(T.CONTINUATION, 0, 1, block.subarray(cut, cut + 16000)),
    frame(T.CONTINUATION, F.END_HEADERS, 1, block.subarray(cut + 16000)),
  ]);
  const { frames, blocks } = serverView(run(input));
  assert.deepEqual(
    frames.slice(1).map((f) => [f.type, f.flags, f.payload.length <= 16384]),
    [
      [T.HEADERS, F.PRIORITY | F.END_STREAM, true],
      [T.CONTINUATION, 0, true],
      [T.CONTINUATION, F.END_HEADERS, true],
    ],
  );
  assert.deepEqual(frames[1]!.payload.subarray(0, 5), priority);
  const fields = blocks.get(1)![0]!;
  assert.equal(fields.find((f) => f.name === ':authority')?.value, 'localhost');
  assert.equal(fields.find((f) => f.name === 'x-big')?.value.length, 40000);
});

test('trailers are not given an :authority; a request with none is', () => {
  const trailers = Buffer.concat([hpack.withoutIndexing('x-trailer', 'v')]);
  const noAuthority = Buffer.concat([hpack.indexed(3), hpack.indexed(6), hpack.withoutIndexing(4, '/a/B')]);
  const withHost = Buffer.concat([noAuthority, hpack.withoutIndexing(38, 'example.com')]);
  const { blocks } = serverView(
    run(
      Buffer.concat([
        START,
        frame(T.HEADERS, F.END_HEADERS, 1, noAuthority),
        frame(T.HEADERS, F.END_HEADERS | F.END_STREAM, 1, trailers),
        frame(T.HEADERS, F.END_HEADERS | F.END_STREAM, 3, withHost),
      ]),
    ),
  );
  assert.deepEqual(pairs(blocks.get(1)?.[0]), [
    [':authority', 'localhost'],
    [':method', 'POST'],
    [':scheme', 'http'],
    [':path', '/a/B'],
  ]);
  assert.deepEqual(pairs(blocks.get(1)?.[1]), [['x-trailer', 'v']]);
  assert.equal(
    blocks.get(3)?.[0]?.some((f) => f.name === ':authority'),
    false,
    'a valid host stands in for :authority',
  );
});

test('protocol violations are refused with the code a server sends', () => {
  const h = (flags: number, stream: number, ...payload: Buffer[]): Buffer =>
    frame(T.HEADERS, flags, stream, ...payload);
  const cases: [string, Buffer, string, RegExp][] = [
    [
      'another frame inside a header block',
      Buffer.concat([h(0, 1, request(RAW)), frame(T.PING, 0, 0, Buffer.alloc(8))]),
      'PROTOCOL_ERROR',
      /CONTINUATION of stream 1 was due/,
    ],
    [
      'CONTINUATION on another stream',
      Buffer.concat([h(0, 1, request(RAW)), frame(T.CONTINUATION, F.END_HEADERS, 3)]),
      'PROTOCOL_ERROR',
      /CONTINUATION of stream 1/,
    ],
    [
      'CONTINUATION without HEADERS',
      frame(T.CONTINUATION, F.END_HEADERS, 1),
      'PROTOCOL_ERROR',
      /without HEADERS/,
    ],
    ['HEADERS on stream 0', h(F.END_HEADERS, 0, request(RAW)), 'PROTOCOL_ERROR', /stream 0/],
    [
      'PUSH_PROMISE from a client',
      frame(0x5, F.END_HEADERS, 1, Buffer.alloc(4)),
      'PROTOCOL_ERROR',
      /PUSH_PROMISE/,
    ],
    [
      'padding longer than the frame',
      h(F.END_HEADERS | F.PADDED, 1, Buffer.of(200), request(RAW)),
      'PROTOCOL_ERROR',
      /padding/,
    ],
    [
      'a header frame over the max frame size',
      h(F.END_HEADERS, 1, Buffer.alloc(16385)),
      'FRAME_SIZE_ERROR',
      /16385-octet/,
    ],
    [
      'an undecodable header block',
      h(F.END_HEADERS, 1, hpack.indexed(99)),
      'COMPRESSION_ERROR',
      /stream 1 cannot be decoded: index 99/,
    ],
    [
      'a table size update over the limit',
      h(F.END_HEADERS, 1, encodeInteger(8192, 5, 0x20)),
      'COMPRESSION_ERROR',
      /8192 > the allowed 4096/,
    ],
  ];
  for (const [name, frames, code, message] of cases) {
    assert.throws(
      () => run(Buffer.concat([START, frames])),
      (err: unknown) => err instanceof H2ConnectionError && err.code === code && message.test(err.message),
      name,
    );
  }
  // The server's SETTINGS raise the limits the client may use.
  const rewriter = new RequestAuthorityRewriter();
  rewriter.serverSettings({ headerTableSize: 8192, maxFrameSize: 32768 });
  const big = Buffer.concat([
    encodeInteger(8192, 5, 0x20),
    request('localhost'),
    hpack.withoutIndexing('x', 'y'.repeat(20000)),
  ]);
  const input = Buffer.concat([START, h(F.END_HEADERS, 1, big)]);
  assert.deepEqual(run(input, undefined, rewriter), input);
});

test('a client that does not send the preface is passed through untouched', () => {
  const rewriter = new RequestAuthorityRewriter();
  const http1 = Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  assert.deepEqual(run(http1, [3], rewriter), http1);
  assert.equal(rewriter.notHttp2, true);
});

test('the SETTINGS ACK a routed connection owes is dropped once, however it is chunked; later ones pass', () => {
  const ack = frame(T.SETTINGS, F.ACK, 0);
  const input = Buffer.concat([
    START,
    frame(T.WINDOW_UPDATE, 0, 0, Buffer.from([0, 1, 0, 0])),
    ack,
    frame(T.HEADERS, F.END_HEADERS, 1, request('localhost')),
    ack,
  ]);
  const expected = Buffer.concat([
    START,
    frame(T.WINDOW_UPDATE, 0, 0, Buffer.from([0, 1, 0, 0])),
    frame(T.HEADERS, F.END_HEADERS, 1, request('localhost')),
    ack,
  ]);
  for (const sizes of [[input.length], [1], [5], [7, 2, 30]]) {
    const rewriter = new RequestAuthorityRewriter();
    rewriter.dropNextSettingsAck();
    assert.equal(rewriter.settingsAcksToDrop, 1);
    assert.deepEqual(run(input, sizes, rewriter), expected, `chunks of ${sizes.join(', ')}`);
    assert.equal(rewriter.settingsAcksToDrop, 0);
  }
  // Without dropNextSettingsAck every ACK passes.
  assert.deepEqual(run(input), input);
});

test('firstRequest is the first request block as passed on; diverged once one is rewritten', () => {
  const rewriter = new RequestAuthorityRewriter();
  run(START, undefined, rewriter);
  assert.equal(rewriter.prefaceReceived, true);
  assert.equal(rewriter.firstRequest?.streamId, undefined);
  run(frame(T.HEADERS, F.END_HEADERS, 1, request('localhost')), [4], rewriter);
  assert.equal(rewriter.firstRequest?.streamId, 1);
  assert.equal(rewriter.diverged, false);
  run(frame(T.HEADERS, F.END_HEADERS, 3, request(RAW)), undefined, rewriter);
  assert.equal(rewriter.firstRequest?.streamId, 1, 'still the first');
  assert.equal(rewriter.diverged, true);

  const raw = new RequestAuthorityRewriter();
  run(Buffer.concat([START, frame(T.HEADERS, F.END_HEADERS, 1, request(RAW))]), undefined, raw);
  assert.equal(
    raw.firstRequest?.fields.find((f) => f.name === ':authority')?.value,
    'localhost',
    'after the rewrite',
  );
  assert.equal(new RequestAuthorityRewriter().prefaceReceived, false);
});

test('the server-side watcher reports SETTINGS, RST_STREAM and GOAWAY across any chunking', () => {
  const settings = Buffer.alloc(12);
  settings.writeUInt16BE(0x1, 0);
  settings.writeUInt32BE(8192, 2);
  settings.writeUInt16BE(0x5, 6);
  settings.writeUInt32BE(32768, 8);
  const goaway = Buffer.concat([Buffer.from([0, 0, 0, 5, 0, 0, 0, 1]), Buffer.from('why')]);
  const output = Buffer.concat([
    frame(T.SETTINGS, 0, 0, settings),
    frame(T.SETTINGS, F.ACK, 0),
    frame(T.HEADERS, F.END_HEADERS, 1, Buffer.alloc(30, 0x82)),
    frame(T.DATA, 0, 1, Buffer.alloc(100)),
    frame(T.RST_STREAM, 0, 1, Buffer.from([0, 0, 0, 1])),
    frame(T.GOAWAY, 0, 0, goaway),
  ]);
  for (const size of [output.length, 1, 4, 10]) {
    const seen: unknown[] = [];
    const watcher = new ServerFrameWatcher({
      settings: (s) => seen.push(['settings', s]),
      rstStream: (stream, code) => seen.push(['rst', stream, code]),
      goaway: (last, code, debug) => seen.push(['goaway', last, code, debug]),
    });
    for (let at = 0; at < output.length; at += size) watcher.write(output.subarray(at, at + size));
    assert.deepEqual(
      seen,
      [
        ['settings', { headerTableSize: 8192, maxFrameSize: 32768 }],
        ['rst', 1, 1],
        ['goaway', 5, 1, 'why'],
      ],
      `chunks of ${size}`,
    );
  }
});
