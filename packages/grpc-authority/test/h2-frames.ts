// Test helpers: HTTP/2 frames by hand (RFC 9113 §4.1) and a raw client over a socket, to send
// exactly the bytes an old grpc-go or grpc-java client sends — which no Node client will.

import { connect, type Socket } from 'node:net';
import { encodeInteger, encodeString, HpackDecoder, type HeaderField } from '../src/hpack.js';

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
export const T = {
  DATA: 0x0,
  HEADERS: 0x1,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;
export const F = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
  /** A HEADERS frame's header block, decoded (by RawH2Client, for frames from the server). */
  headers?: HeaderField[];
}

export function frame(type: number, flags: number, streamId: number, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const header = Buffer.alloc(9);
  header.writeUIntBE(body.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, body]);
}

/** Splits bytes into whole frames; `rest` is an incomplete tail. */
export function parseFrames(bytes: Buffer): { frames: Frame[]; rest: Buffer } {
  const frames: Frame[] = [];
  let at = 0;
  while (bytes.length - at >= 9) {
    const length = bytes.readUIntBE(at, 3);
    if (bytes.length - at < 9 + length) break;
    frames.push({
      type: bytes[at + 3]!,
      flags: bytes[at + 4]!,
      streamId: bytes.readUInt32BE(at + 5) & 0x7fffffff,
      payload: bytes.subarray(at + 9, at + 9 + length),
    });
    at += 9 + length;
  }
  return { frames, rest: bytes.subarray(at) };
}

// HPACK representations (RFC 7541 §6), for writing header blocks by hand.
export const hpack = {
  indexed: (index: number): Buffer => encodeInteger(index, 7, 0x80),
  /** Literal with incremental indexing: the entry joins both sides' dynamic tables. */
  incremental: (name: string | number, value: string, huffman = false): Buffer =>
    Buffer.concat([
      typeof name === 'number'
        ? encodeInteger(name, 6, 0x40)
        : Buffer.concat([Buffer.of(0x40), encodeString(name, huffman)]),
      encodeString(value, huffman),
    ]),
  withoutIndexing: (name: string | number, value: string, huffman = false): Buffer =>
    Buffer.concat([
      typeof name === 'number'
        ? encodeInteger(name, 4, 0x00)
        : Buffer.concat([Buffer.of(0x00), encodeString(name, huffman)]),
      encodeString(value, huffman),
    ]),
};

/** A gRPC length-prefixed message (uncompressed). */
export function grpcMessage(message: Uint8Array): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

/**
 * A raw HTTP/2 client connection: writes whatever bytes it is given after the preface and an empty
 * SETTINGS, acknowledges the server's SETTINGS, and decodes the server's header blocks.
 */
export class RawH2Client {
  readonly frames: Frame[] = [];
  readonly #decoder = new HpackDecoder();
  #buffered: Buffer = Buffer.alloc(0);
  #waiters: (() => void)[] = [];
  closed = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      const { frames, rest } = parseFrames(Buffer.concat([this.#buffered, chunk]));
      this.#buffered = Buffer.from(rest);
      for (const f of frames) {
        if (f.type === T.SETTINGS && !(f.flags & F.ACK)) socket.write(frame(T.SETTINGS, F.ACK, 0));
        // Node's server sends small blocks: one frame, neither padding nor priority.
        if (f.type === T.HEADERS) f.headers = this.#decoder.decode(f.payload).fields;
        this.frames.push(f);
      }
      this.#wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.#wake();
    });
    socket.on('error', () => undefined);
  }

  static async connect(
    path: string,
    preface: Buffer = Buffer.concat([PREFACE, frame(T.SETTINGS, 0, 0)]),
  ): Promise<RawH2Client> {
    const socket = connect(path);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(preface);
    return new RawH2Client(socket);
  }

  send(...bytes: Buffer[]): void {
    this.socket.write(Buffer.concat(bytes));
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }

  /** Waits for a frame matching `match` (searching those already received too). */
  async waitFor(match: (f: Frame) => boolean, what: string, timeoutMs = 5000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.find(match);
      if (found) return found;
      if (this.closed) throw new Error(`connection closed while waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits until the connection is closed by the server. */
  async waitClosed(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the server to close');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now());
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The header blocks the server sent on `streamId`, in order. */
  headerBlocks(streamId: number): HeaderField[][] {
    return this.frames.filter((f) => f.streamId === streamId && f.headers).map((f) => f.headers!);
  }

  close(): void {
    this.socket.destroy();
  }
}

/** A header field's value in a decoded block. */
export function field(fields: readonly HeaderField[], name: string): string | undefined {
  return fields.find((f) => f.name === name)?.value;
}
