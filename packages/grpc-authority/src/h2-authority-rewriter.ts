// Lets Node's HTTP/2 server accept the `:authority` a grpc-go server accepts.
//
// Why: grpc-go before ~1.57, grpc-java and older Python gRPC send the raw socket path (e.g.
// "/var/lib/kubelet/device-plugins/kubelet.sock") as `:authority` when they dial a Unix socket,
// as do kubelets before 1.26 dialling a plugin. nghttp2, under Node's http2 and so under
// @grpc/grpc-js, checks `:authority` against RFC 3986's authority characters ('/' is not one)
// unless HTTP messaging checks are off (NGHTTP2_OPT_NO_HTTP_MESSAGING), and resets the stream with
// RST_STREAM PROTOCOL_ERROR before the application sees it. Node 20 has no option to turn that
// check off (its http2 options reach nghttp2 only for table sizes, limits and padding;
// `strictFieldWhitespaceValidation`, from Node 24.2, is about whitespace only). A grpc-go server —
// a real kubelet — accepts any `:authority`.
//
// What: a Duplex put between a client's socket and grpc-js (through Server.createConnectionInjector)
// for a connection whose first request needs it. It passes every byte through untouched except
// request header blocks whose `:authority` nghttp2 would refuse (or that have neither `:authority`
// nor `host`): those are decoded with the connection's HPACK state (hpack.ts), get
// `:authority: localhost` (what grpc-go ≥ 1.57 and modern kubelets send) and are re-encoded without
// indexing — so the server's HPACK table never holds an entry the client's does not — into HEADERS
// + CONTINUATION frames of at most 16384 octets (the smallest SETTINGS_MAX_FRAME_SIZE, so every
// peer accepts them), dropping padding and keeping the PRIORITY fields and END_STREAM. After the
// first rewrite the client's and the server's HPACK tables differ, so every later header block on
// that connection is re-encoded the same way. Header blocks are always decoded (to track the
// client's table); the other frames are forwarded as slices of the chunks read.
//
// Only connections that need it pass through it (routeConnection, below): each connection is read
// up to its first request, and one whose headers nghttp2 accepts — every current client: grpc-go ≥
// 1.57, grpc-js and kubelets ≥ 1.26 send `localhost` — is handed to the server as the socket
// itself, so its bytes go from libuv to nghttp2 in C++ as with bindAsync.
//
// Cost (bench/authority-rewriter.bench.ts; Node 20, 2 busy cores): a few µs per header block to
// decode, a few more to rewrite. On a rewritten connection most of the cost is elsewhere: bytes pass
// through a JS stream (which Node's http2 wraps in a JSStreamSocket) instead of going from libuv to
// nghttp2 in C++ — about +50 % server CPU per unary call (+0.1–0.2 ms) with one call in flight, a
// few % with 16. A natively routed connection costs what bindAsync costs per call; routing it
// (an early SETTINGS, its first header block decoded once, its first octets put back) adds a
// fraction of a millisecond of server CPU once per connection.
//
// It also reports refusals with a reason: a header block it cannot decode (a COMPRESSION_ERROR: it
// sends GOAWAY and closes, as a grpc-go server does), frames out of order, a client that does not
// speak HTTP/2, and — watching the server's frames on their way out — any RST_STREAM or GOAWAY the
// server sends with an error code other than NO_ERROR and CANCEL, with nghttp2's reason
// (h2-request-checks.ts) where one can be told from the request's headers. A natively routed
// connection is not watched: there only an error Node's HTTP/2 layer closes it with is reported
// (Node 20 tells JS nothing of a RST_STREAM nghttp2 sends, nor of a GOAWAY for a non-fatal error).
// Its first request was checked before it went native, and clients send the same kind of headers
// on every request of a connection.

import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { encodeHeaderBlockWithoutIndexing, HpackDecoder, HpackError, type HeaderField } from './hpack.js';
import { isValidAuthority, requestHeaderProblem } from './h2-request-checks.js';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const FRAME_HEADER_LENGTH = 9;

// RFC 9113 §6 frame types and flags.
const HEADERS = 0x1;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const PUSH_PROMISE = 0x5;
const GOAWAY = 0x7;
const CONTINUATION = 0x9;
const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const PRIORITY = 0x20;
const SETTINGS_HEADER_TABLE_SIZE = 0x1;
const SETTINGS_MAX_FRAME_SIZE = 0x5;

/** RFC 9113 §7 error codes, by value. */
export const H2_ERROR_CODES = [
  'NO_ERROR',
  'PROTOCOL_ERROR',
  'INTERNAL_ERROR',
  'FLOW_CONTROL_ERROR',
  'SETTINGS_TIMEOUT',
  'STREAM_CLOSED',
  'FRAME_SIZE_ERROR',
  'REFUSED_STREAM',
  'CANCEL',
  'COMPRESSION_ERROR',
  'CONNECT_ERROR',
  'ENHANCE_YOUR_CALM',
  'INADEQUATE_SECURITY',
  'HTTP_1_1_REQUIRED',
] as const;
export type H2ErrorCode = (typeof H2_ERROR_CODES)[number];
const errorName = (code: number): string => H2_ERROR_CODES[code] ?? `0x${code.toString(16)}`;
const errorCode = (name: H2ErrorCode): number => H2_ERROR_CODES.indexOf(name);

/** Re-encoded header frames are at most this large: every peer accepts it (RFC 9113 §4.2). */
const REENCODED_FRAME_SIZE = 16384;
/** A header block larger than this is refused rather than buffered (nghttp2's own limit is lower). */
const MAX_HEADER_BLOCK = 256 * 1024;
/** How many recent requests' headers are kept to explain a stream reset. */
const RECENT_REQUESTS = 16;

/** The authority a rewritten request gets. */
export const REWRITTEN_AUTHORITY = 'localhost';

/** The client broke the connection; it gets GOAWAY with this code and is closed. */
export class H2ConnectionError extends Error {
  override readonly name = 'H2ConnectionError';
  constructor(
    readonly code: H2ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

interface HeaderBlock {
  streamId: number;
  flags: number;
  priority: Buffer | null;
  fragments: Buffer[];
  size: number;
  /** The frames as received (header + payload), forwarded as they are when nothing changes. */
  raw: Buffer[];
}

interface FrameInProgress {
  header: Buffer;
  type: number;
  flags: number;
  streamId: number;
  left: number;
  parts: Buffer[];
}

/**
 * The client→server half: feed it what the client sends, in order; it returns what to hand the
 * server. Throws H2ConnectionError when the client breaks the protocol in a way it cannot pass on.
 */
export class RequestAuthorityRewriter {
  readonly #decoder = new HpackDecoder();
  readonly #authority: string;
  readonly #onRewrite: (streamId: number, authority: string | null) => void;
  #prefaceLeft = PREFACE.length;
  #notHttp2 = false;
  readonly #head = Buffer.alloc(FRAME_HEADER_LENGTH);
  #headFill = 0;
  #passLeft = 0;
  #frame: FrameInProgress | null = null;
  #block: HeaderBlock | null = null;
  #diverged = false;
  #lastStreamId = 0;
  #lastForwardedStreamId = 0;
  #maxFrameSize = REENCODED_FRAME_SIZE;
  readonly #recent = new Map<number, HeaderField[]>();
  #settingsAcksToDrop = 0;
  #firstRequest: { streamId: number; fields: HeaderField[] } | null = null;

  constructor(
    options: {
      authority?: string;
      /** A request's `:authority` was replaced (`authority` is the one it had, null if none). */
      onRewrite?: (streamId: number, authority: string | null) => void;
    } = {},
  ) {
    this.#authority = options.authority ?? REWRITTEN_AUTHORITY;
    this.#onRewrite = options.onRewrite ?? (() => undefined);
  }

  /** True once the client's first octets were not the HTTP/2 preface: all is passed on as is. */
  get notHttp2(): boolean {
    return this.#notHttp2;
  }

  /** True once the client's whole connection preface (the 24-octet magic) has been read. */
  get prefaceReceived(): boolean {
    return this.#prefaceLeft === 0 && !this.#notHttp2;
  }

  /** True once a header block has been re-encoded: the server's HPACK state is no longer the client's. */
  get diverged(): boolean {
    return this.#diverged;
  }

  /**
   * The connection's first request, once its header block is complete: its stream and its header
   * fields as passed on (after any rewrite).
   */
  get firstRequest(): { readonly streamId: number; readonly fields: readonly HeaderField[] } | null {
    return this.#firstRequest;
  }

  /**
   * A SETTINGS frame was sent to the client from outside the server's HTTP/2 layer: the client's
   * next SETTINGS ACK answers it and is dropped, as that layer would take it for the ACK of its own
   * SETTINGS (and the real one for an unexpected ACK, a connection error).
   */
  dropNextSettingsAck(): void {
    this.#settingsAcksToDrop++;
  }

  /** How many SETTINGS ACKs are still to be dropped. */
  get settingsAcksToDrop(): number {
    return this.#settingsAcksToDrop;
  }

  /** The highest stream whose headers reached the server (for GOAWAY's last-stream-id). */
  get lastForwardedStreamId(): number {
    return this.#lastForwardedStreamId;
  }

  /** The request headers of a recent stream (after any rewrite), to explain its reset. */
  requestHeaders(streamId: number): readonly HeaderField[] | undefined {
    return this.#recent.get(streamId);
  }

  /** The server's SETTINGS, as sent to the client: the client may use them from now on. */
  serverSettings(settings: { headerTableSize?: number; maxFrameSize?: number }): void {
    // The larger of the old and new values until the client has seen the change: being lenient
    // costs nothing, as the server still enforces its own limits.
    if (settings.headerTableSize !== undefined) {
      this.#decoder.maxAllowedSize = Math.max(this.#decoder.maxAllowedSize, settings.headerTableSize);
    }
    if (settings.maxFrameSize !== undefined) {
      this.#maxFrameSize = Math.max(this.#maxFrameSize, settings.maxFrameSize);
    }
  }

  write(chunk: Buffer): Buffer[] {
    if (this.#notHttp2) return [chunk];
    const out: Buffer[] = [];
    // chunk[passFrom, pos) is passed on as one slice when something else must be emitted, or at the end.
    let passFrom = 0;
    let pos = 0;
    const flush = (end: number): void => {
      if (end > passFrom) out.push(chunk.subarray(passFrom, end));
      passFrom = end;
    };
    while (pos < chunk.length) {
      if (this.#prefaceLeft > 0) {
        const n = Math.min(this.#prefaceLeft, chunk.length - pos);
        const at = PREFACE.length - this.#prefaceLeft;
        if (!chunk.subarray(pos, pos + n).equals(PREFACE.subarray(at, at + n))) {
          // Not HTTP/2 (an HTTP/1 request, say): the server refuses it in its own way.
          this.#notHttp2 = true;
          flush(chunk.length);
          return out;
        }
        this.#prefaceLeft -= n;
        pos += n;
        continue;
      }
      if (this.#passLeft > 0) {
        const n = Math.min(this.#passLeft, chunk.length - pos);
        this.#passLeft -= n;
        pos += n;
        continue;
      }
      const frame = this.#frame;
      if (frame) {
        const n = Math.min(frame.left, chunk.length - pos);
        frame.parts.push(chunk.subarray(pos, pos + n));
        frame.left -= n;
        pos += n;
        passFrom = pos;
        if (frame.left === 0) {
          this.#frame = null;
          for (const b of this.#headerFrame(frame)) out.push(b);
        }
        continue;
      }

      // A frame header: in place when whole in this chunk, else gathered in #head across chunks.
      const frameStart = pos;
      let header: Buffer;
      let at: number;
      if (this.#headFill === 0 && chunk.length - pos >= FRAME_HEADER_LENGTH) {
        header = chunk;
        at = pos;
        pos += FRAME_HEADER_LENGTH;
      } else {
        const n = Math.min(FRAME_HEADER_LENGTH - this.#headFill, chunk.length - pos);
        chunk.copy(this.#head, this.#headFill, pos, pos + n);
        this.#headFill += n;
        pos += n;
        flush(frameStart);
        passFrom = pos;
        if (this.#headFill < FRAME_HEADER_LENGTH) continue;
        this.#headFill = 0;
        header = this.#head;
        at = 0;
      }
      const length = header.readUIntBE(at, 3);
      const type = header[at + 3]!;
      const flags = header[at + 4]!;
      const streamId = header.readUInt32BE(at + 5) & 0x7fffffff;

      if (this.#block && (type !== CONTINUATION || streamId !== this.#block.streamId)) {
        throw new H2ConnectionError(
          'PROTOCOL_ERROR',
          `frame of type ${type} on stream ${streamId} where CONTINUATION of stream ${this.#block.streamId} was due`,
        );
      }
      if (type === HEADERS || type === CONTINUATION) {
        if (type === CONTINUATION && !this.#block) {
          throw new H2ConnectionError('PROTOCOL_ERROR', `CONTINUATION on stream ${streamId} without HEADERS`);
        }
        if (streamId === 0) throw new H2ConnectionError('PROTOCOL_ERROR', 'HEADERS on stream 0');
        if (length > this.#maxFrameSize) {
          throw new H2ConnectionError(
            'FRAME_SIZE_ERROR',
            `${length}-octet header frame on stream ${streamId} (max ${this.#maxFrameSize})`,
          );
        }
        if (header === chunk) flush(frameStart);
        passFrom = pos;
        const held: FrameInProgress = {
          // In place it stays valid (chunks are not reused); #head is, so it is copied.
          header: header === chunk ? chunk.subarray(at, at + FRAME_HEADER_LENGTH) : Buffer.from(header),
          type,
          flags,
          streamId,
          left: length,
          parts: [],
        };
        if (length > 0) this.#frame = held;
        else for (const b of this.#headerFrame(held)) out.push(b);
      } else if (type === PUSH_PROMISE) {
        throw new H2ConnectionError('PROTOCOL_ERROR', 'PUSH_PROMISE from a client');
      } else if (
        type === SETTINGS &&
        flags & ACK &&
        length === 0 &&
        streamId === 0 &&
        this.#settingsAcksToDrop > 0
      ) {
        this.#settingsAcksToDrop--;
        if (header === chunk) flush(frameStart);
        passFrom = pos;
      } else {
        if (header !== chunk) out.push(Buffer.from(header));
        this.#passLeft = length;
      }
    }
    flush(chunk.length);
    return out;
  }

  /** A whole HEADERS or CONTINUATION frame: what to send on, once its header block is complete. */
  #headerFrame(frame: FrameInProgress): Buffer[] {
    const payload = frame.parts.length === 1 ? frame.parts[0]! : Buffer.concat(frame.parts);
    let block = this.#block;
    if (frame.type === HEADERS) {
      let offset = 0;
      let padding = 0;
      if (frame.flags & PADDED) {
        if (payload.length < 1)
          throw new H2ConnectionError('FRAME_SIZE_ERROR', 'PADDED HEADERS without a pad length');
        padding = payload[0]!;
        offset = 1;
      }
      let priority: Buffer | null = null;
      if (frame.flags & PRIORITY) {
        if (payload.length < offset + 5) {
          throw new H2ConnectionError(
            'FRAME_SIZE_ERROR',
            'HEADERS with PRIORITY shorter than its priority fields',
          );
        }
        priority = payload.subarray(offset, offset + 5);
        offset += 5;
      }
      if (padding > payload.length - offset) {
        throw new H2ConnectionError(
          'PROTOCOL_ERROR',
          `HEADERS on stream ${frame.streamId}: padding longer than the frame`,
        );
      }
      const fragment =
        offset === 0 && padding === 0 ? payload : payload.subarray(offset, payload.length - padding);
      block = {
        streamId: frame.streamId,
        flags: frame.flags,
        priority,
        fragments: [fragment],
        size: fragment.length,
        raw: [],
      };
      this.#block = block;
    } else {
      block!.fragments.push(payload);
      block!.size += payload.length;
    }
    block!.raw.push(frame.header, payload);
    if (block!.size > MAX_HEADER_BLOCK) {
      throw new H2ConnectionError(
        'ENHANCE_YOUR_CALM',
        `header block on stream ${block!.streamId} over ${MAX_HEADER_BLOCK} octets`,
      );
    }
    if ((frame.flags & END_HEADERS) === 0) return [];
    this.#block = null;
    return this.#headerBlock(block!);
  }

  #headerBlock(block: HeaderBlock): Buffer[] {
    // Client streams are odd and increasing: a HEADERS on a stream not seen before is a request, a
    // later one its trailers.
    const isRequest = block.streamId > this.#lastStreamId;
    if (isRequest) this.#lastStreamId = block.streamId;
    let decoded;
    try {
      decoded = this.#decoder.decode(
        block.fragments.length === 1 ? block.fragments[0]! : Buffer.concat(block.fragments),
      );
    } catch (err) {
      if (!(err instanceof HpackError)) throw err;
      throw new H2ConnectionError(
        'COMPRESSION_ERROR',
        `header block of stream ${block.streamId} cannot be decoded: ${err.message}`,
      );
    }
    const rewritten = isRequest && this.#fixAuthority(block.streamId, decoded.fields);
    if (isRequest) {
      this.#firstRequest ??= { streamId: block.streamId, fields: decoded.fields };
      this.#recent.set(block.streamId, decoded.fields);
      if (this.#recent.size > RECENT_REQUESTS) this.#recent.delete(this.#recent.keys().next().value!);
    }
    this.#lastForwardedStreamId = Math.max(this.#lastForwardedStreamId, block.streamId);
    if (!rewritten && !this.#diverged) return block.raw;
    this.#diverged = true;
    return headerFrames(
      block.streamId,
      block.flags & END_STREAM,
      block.priority,
      encodeHeaderBlockWithoutIndexing(decoded.fields, decoded.tableSizeUpdates),
    );
  }

  /** Gives the request a `:authority` nghttp2 accepts if it has none; true if it changed `fields`. */
  #fixAuthority(streamId: number, fields: HeaderField[]): boolean {
    let validHost = false;
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i]!;
      if (field.name === ':authority') {
        if (isValidAuthority(field.value)) return false;
        this.#onRewrite(streamId, field.value);
        fields[i] = { name: ':authority', value: this.#authority };
        return true;
      }
      if (field.name === 'host' && isValidAuthority(field.value)) validHost = true;
    }
    if (validHost) return false;
    // nghttp2 refuses a request with neither :authority nor host; grpc-go accepts it.
    this.#onRewrite(streamId, null);
    fields.unshift({ name: ':authority', value: this.#authority });
    return true;
  }
}

function frameHeader(length: number, type: number, flags: number, streamId: number): Buffer {
  const header = Buffer.allocUnsafe(FRAME_HEADER_LENGTH);
  header.writeUIntBE(length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return header;
}

/** A header block as HEADERS (+ CONTINUATION) frames of at most REENCODED_FRAME_SIZE octets. */
export function headerFrames(
  streamId: number,
  endStream: number,
  priority: Buffer | null,
  block: Buffer,
): Buffer[] {
  const frames: Buffer[] = [];
  const first = Math.min(block.length, REENCODED_FRAME_SIZE - (priority ? priority.length : 0));
  const flags =
    (endStream ? END_STREAM : 0) | (priority ? PRIORITY : 0) | (first === block.length ? END_HEADERS : 0);
  frames.push(frameHeader(first + (priority ? priority.length : 0), HEADERS, flags, streamId));
  if (priority) frames.push(priority);
  frames.push(block.subarray(0, first));
  for (let at = first; at < block.length; at += REENCODED_FRAME_SIZE) {
    const end = Math.min(block.length, at + REENCODED_FRAME_SIZE);
    frames.push(frameHeader(end - at, CONTINUATION, end === block.length ? END_HEADERS : 0, streamId));
    frames.push(block.subarray(at, end));
  }
  return frames;
}

/** A GOAWAY frame (RFC 9113 §6.8) with `reason` as its debug data. */
export function goawayFrame(lastStreamId: number, code: H2ErrorCode, reason: string): Buffer {
  const debug = Buffer.from(reason, 'utf8');
  const payload = Buffer.allocUnsafe(8);
  payload.writeUInt32BE(lastStreamId, 0);
  payload.writeUInt32BE(errorCode(code), 4);
  return Buffer.concat([frameHeader(8 + debug.length, GOAWAY, 0, 0), payload, debug]);
}

/**
 * The server→client half: reads frame headers as they pass and reports the few frames that matter
 * (SETTINGS, RST_STREAM, GOAWAY). It never changes a byte.
 */
export class ServerFrameWatcher {
  readonly #head = Buffer.alloc(FRAME_HEADER_LENGTH);
  #headFill = 0;
  #skip = 0;
  #frame: { type: number; flags: number; streamId: number; left: number; parts: Buffer[] } | null = null;

  constructor(
    private readonly on: {
      settings(settings: { headerTableSize?: number; maxFrameSize?: number }): void;
      rstStream(streamId: number, code: number): void;
      goaway(lastStreamId: number, code: number, debug: string): void;
    },
  ) {}

  write(chunk: Buffer): void {
    let pos = 0;
    while (pos < chunk.length) {
      if (this.#skip > 0) {
        const n = Math.min(this.#skip, chunk.length - pos);
        this.#skip -= n;
        pos += n;
        continue;
      }
      const frame = this.#frame;
      if (frame) {
        const n = Math.min(frame.left, chunk.length - pos);
        frame.parts.push(chunk.subarray(pos, pos + n));
        frame.left -= n;
        pos += n;
        if (frame.left === 0) {
          this.#frame = null;
          this.#report(frame.type, frame.flags, frame.streamId, Buffer.concat(frame.parts));
        }
        continue;
      }
      let header = chunk;
      let at = pos;
      if (this.#headFill === 0 && chunk.length - pos >= FRAME_HEADER_LENGTH) {
        pos += FRAME_HEADER_LENGTH;
      } else {
        const n = Math.min(FRAME_HEADER_LENGTH - this.#headFill, chunk.length - pos);
        chunk.copy(this.#head, this.#headFill, pos, pos + n);
        this.#headFill += n;
        pos += n;
        if (this.#headFill < FRAME_HEADER_LENGTH) continue;
        this.#headFill = 0;
        header = this.#head;
        at = 0;
      }
      const length = header.readUIntBE(at, 3);
      const type = header[at + 3]!;
      const flags = header[at + 4]!;
      const streamId = header.readUInt32BE(at + 5) & 0x7fffffff;
      const wanted = type === RST_STREAM || type === GOAWAY || (type === SETTINGS && (flags & ACK) === 0);
      if (!wanted) this.#skip = length;
      else if (length === 0) this.#report(type, flags, streamId, Buffer.alloc(0));
      else this.#frame = { type, flags, streamId, left: length, parts: [] };
    }
  }

  #report(type: number, _flags: number, streamId: number, payload: Buffer): void {
    if (type === SETTINGS) {
      const settings: { headerTableSize?: number; maxFrameSize?: number } = {};
      for (let at = 0; at + 6 <= payload.length; at += 6) {
        const id = payload.readUInt16BE(at);
        const value = payload.readUInt32BE(at + 2);
        if (id === SETTINGS_HEADER_TABLE_SIZE) settings.headerTableSize = value;
        if (id === SETTINGS_MAX_FRAME_SIZE) settings.maxFrameSize = value;
      }
      this.on.settings(settings);
    } else if (type === RST_STREAM && payload.length >= 4) {
      this.on.rstStream(streamId, payload.readUInt32BE(0));
    } else if (type === GOAWAY && payload.length >= 8) {
      this.on.goaway(
        payload.readUInt32BE(0) & 0x7fffffff,
        payload.readUInt32BE(4),
        payload.toString('utf8', 8),
      );
    }
  }
}

/** A refused connection or stream, with the reason. */
export interface H2Refusal {
  scope: 'connection' | 'stream';
  /** The stream refused; for a connection, the last stream the server acted on. */
  streamId: number;
  /**
   * The HTTP/2 error code sent (RFC 9113 §7); for a connection served natively, the error Node's
   * HTTP/2 layer closed it with (ERR_HTTP2_…): which frame it sent is not known there.
   */
  code: string;
  reason: string;
}

export interface AuthorityRewritingOptions {
  /** A connection or stream was refused: by this layer or by the server's HTTP/2 layer. */
  onRefused?: (refusal: H2Refusal) => void;
  /** The connection's first rewritten `:authority` (null: the request had none). */
  onRewritten?: (e: { streamId: number; authority: string | null }) => void;
}

/**
 * Codes a server resets streams or closes connections with in normal operation (a call cancelled
 * or done early, a shutdown, a connection past its age): not refusals.
 */
const ORDINARY_CLOSES = new Set([errorCode('NO_ERROR'), errorCode('CANCEL')]);

/** A RequestAuthorityRewriter that reports a connection's first rewrite through `onRewritten`. */
function connectionRewriter(options: AuthorityRewritingOptions): RequestAuthorityRewriter {
  let reported = false;
  return new RequestAuthorityRewriter({
    onRewrite: (streamId, authority) => {
      if (reported) return;
      reported = true;
      options.onRewritten?.({ streamId, authority });
    },
  });
}

function connectionError(err: unknown): H2ConnectionError {
  // Anything but an H2ConnectionError would be a bug here: still one connection's, not the process's.
  return err instanceof H2ConnectionError
    ? err
    : new H2ConnectionError(
        'INTERNAL_ERROR',
        `rewriting failed: ${err instanceof Error ? err.message : String(err)}`,
      );
}

function notHttp2Refusal(chunk: Buffer): H2Refusal {
  const start = chunk.subarray(0, 16).toString('latin1');
  return {
    scope: 'connection',
    streamId: 0,
    code: 'PROTOCOL_ERROR',
    reason: `not an HTTP/2 client: no connection preface (got ${JSON.stringify(start)}…)`,
  };
}

/** What a RequestAuthorityRewriter made of a connection's first octets, before the server took over. */
export interface ConnectionStart {
  rewriter: RequestAuthorityRewriter;
  /** Its output so far: the server's HTTP/2 layer reads it first. */
  output: Buffer[];
}

/**
 * `socket` as a Duplex for Node's HTTP/2 server, with the client's header blocks passed through a
 * RequestAuthorityRewriter and the server's frames watched by a ServerFrameWatcher. `start`
 * continues a connection whose first octets routeConnection has already read.
 */
export class AuthorityRewritingSocket extends Duplex {
  readonly #socket: Socket;
  readonly #rewriter: RequestAuthorityRewriter;
  readonly #watcher: ServerFrameWatcher;
  readonly #onRefused: (refusal: H2Refusal) => void;
  #connectionReported = false;

  constructor(socket: Socket, options: AuthorityRewritingOptions = {}, start?: ConnectionStart) {
    super({ allowHalfOpen: true });
    this.#socket = socket;
    this.#onRefused = options.onRefused ?? (() => undefined);
    this.#rewriter = start?.rewriter ?? connectionRewriter(options);
    this.#watcher = new ServerFrameWatcher({
      settings: (settings) => this.#rewriter.serverSettings(settings),
      rstStream: (streamId, code) => {
        if (ORDINARY_CLOSES.has(code)) return;
        const headers = this.#rewriter.requestHeaders(streamId);
        const problem = headers ? requestHeaderProblem(headers) : null;
        this.#onRefused({
          scope: 'stream',
          streamId,
          code: errorName(code),
          reason:
            problem ??
            (code === errorCode('REFUSED_STREAM') ? 'too many concurrent streams' : 'reset by the server'),
        });
      },
      goaway: (lastStreamId, code, debug) => {
        if (ORDINARY_CLOSES.has(code)) return;
        this.#reportConnection({
          scope: 'connection',
          streamId: lastStreamId,
          code: errorName(code),
          reason: debug || 'closed by the server',
        });
      },
    });

    if (start) this.#pushAll(start.output);
    // routeConnection hands over a socket whose 'end' it has seen (the client half-closed first).
    if (socket.readableEnded) this.push(null);
    else socket.on('end', () => this.push(null));
    socket.on('data', (chunk: Buffer) => this.#fromClient(chunk));
    // An error is followed by 'close'; a client going away is not worth a report.
    socket.on('error', () => undefined);
    socket.on('close', () => this.destroy());
  }

  #fromClient(chunk: Buffer): void {
    const wasHttp2 = !this.#rewriter.notHttp2;
    let out: Buffer[];
    try {
      out = this.#rewriter.write(chunk);
    } catch (err) {
      this.#refuse(connectionError(err));
      return;
    }
    if (wasHttp2 && this.#rewriter.notHttp2) this.#reportConnection(notHttp2Refusal(chunk));
    this.#pushAll(out);
  }

  #pushAll(out: Buffer[]): void {
    let more = true;
    for (const b of out) more = this.push(b);
    if (!more) this.#socket.pause();
  }

  /** Refuses the connection as a grpc-go server would: GOAWAY with the reason, then close. */
  #refuse(err: H2ConnectionError): void {
    const lastStreamId = this.#rewriter.lastForwardedStreamId;
    this.#reportConnection({
      scope: 'connection',
      streamId: lastStreamId,
      code: err.code,
      reason: err.message,
    });
    this.#socket.removeAllListeners('data');
    this.#socket.end(goawayFrame(lastStreamId, err.code, err.message));
    this.destroy();
  }

  #reportConnection(refusal: H2Refusal): void {
    if (this.#connectionReported) return;
    this.#connectionReported = true;
    this.#onRefused(refusal);
  }

  override _read(): void {
    this.#socket.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#toClient([chunk], callback);
  }

  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    this.#toClient(
      chunks.map((c) => c.chunk),
      callback,
    );
  }

  #toClient(chunks: Buffer[], callback: (error?: Error | null) => void): void {
    const socket = this.#socket;
    if (socket.writableEnded || socket.destroyed) {
      callback();
      return;
    }
    let more = true;
    if (chunks.length > 1) socket.cork();
    for (const chunk of chunks) {
      this.#watcher.write(chunk);
      more = socket.write(chunk);
    }
    if (chunks.length > 1) socket.uncork();
    if (more) callback();
    else socket.once('drain', () => callback());
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#socket.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // Whatever was written (a GOAWAY) still goes out before the socket closes.
    this.#socket.destroySoon();
    callback(error);
  }
}

// ---- Routing: the native path unless the first request needs the rewriter ----

/** An empty SETTINGS frame: the server's connection preface, saying "all defaults". */
const EMPTY_SETTINGS = frameHeader(0, SETTINGS, 0, 0);
/** How long a connection may take to send its first request before it is served through the rewriter. */
export const FIRST_REQUEST_TIMEOUT_MS = 1000;
/** How many octets may come before the first request (and the SETTINGS ACK) before the same. */
export const MAX_START_OCTETS = 64 * 1024;

/** How a connection was handed to the server (routeConnection). */
export type ConnectionRoute = 'native' | 'rewriting' | 'refused';

/** Why a connection goes through the rewriter. */
export type RewritingReason =
  /** Its first request's `:authority` is one nghttp2 refuses, or it has another header nghttp2 refuses. */
  | 'first-request'
  /** No first request within FIRST_REQUEST_TIMEOUT_MS. */
  | 'idle'
  /** More than MAX_START_OCTETS before its first request was complete. */
  | 'long-start'
  /** The client half-closed before its first request was complete. */
  | 'ended';

export type RoutedConnection =
  | { route: 'native'; connection: Socket }
  | { route: 'rewriting'; connection: AuthorityRewritingSocket; reason: RewritingReason }
  | { route: 'refused' };

export interface ConnectionRoutingOptions extends AuthorityRewritingOptions {
  /** FIRST_REQUEST_TIMEOUT_MS unless given (tests). */
  firstRequestTimeoutMs?: number;
}

/**
 * Reads the start of a client's connection — up to its first complete request header block — and
 * hands the server, once, either the socket itself (the native path: libuv to nghttp2 in C++, no JS
 * per frame, as bindAsync serves) or an AuthorityRewritingSocket (every octet through JS).
 *
 * The server speaks first: every gRPC client waits for the server's SETTINGS before its first
 * request (grpc-go's newHTTP2Client blocks until it has read the server preface, and older grpc-go
 * addrConns waited for it before using a transport; grpc-java's transport is ready on the first
 * SETTINGS; grpc-js waits for 'remoteSettings'), and the server's HTTP/2 layer sends its SETTINGS
 * only once it has the connection. So once the client's preface is in, an empty SETTINGS goes out
 * from here, and the client's ACK of it is dropped: the server's HTTP/2 layer would take it for the
 * ACK of its own SETTINGS, and the real one for an unexpected ACK (a connection error). That layer
 * sends its own SETTINGS when it takes over; a second SETTINGS is ordinary HTTP/2. The first block
 * is decoded with the default 4096-octet table limit, as the client has seen no other server
 * SETTINGS when it sends it (the client's own SETTINGS_HEADER_TABLE_SIZE sizes the server's
 * encoder, not this decoder).
 *
 * Native when the first request's headers are ones nghttp2 accepts (h2-request-checks.ts) and the
 * ACK is in: the octets read are put back (`socket.unshift`) for Node's HTTP/2 server, whose
 * ServerHttp2Session feeds a socket's buffered octets (`socket.readableLength`) to nghttp2 on the
 * tick after `consume()` took over the socket's handle. Otherwise the rewriter that has read those
 * octets goes on: a raw-path `:authority` is rewritten and a stream nghttp2 resets is logged with
 * its reason. A connection with no complete first request within FIRST_REQUEST_TIMEOUT_MS (a client
 * that connects ahead of its first call), or after MAX_START_OCTETS, or that half-closes, goes
 * through the rewriter too — a request it sends later may carry a raw path, which only the rewriter
 * can serve: slower, never wrong. What the native path cannot serve is a raw-path `:authority` in a
 * later request of a connection whose first request had a valid one; clients set the authority
 * once per channel (grpc-go, grpc-java, grpc-js), so none does that.
 *
 * A client that does not send the HTTP/2 preface is reported and handed over natively, untouched,
 * for the server to refuse in its own way; a header block that cannot be decoded among the first
 * octets is refused here (SETTINGS, then GOAWAY, as AuthorityRewritingSocket refuses).
 */
export function routeConnection(
  socket: Socket,
  options: ConnectionRoutingOptions,
  onRouted: (routed: RoutedConnection) => void,
): void {
  const rewriter = connectionRewriter(options);
  const output: Buffer[] = [];
  let octetsRead = 0;
  let settingsSent = false;

  const sendSettings = (): void => {
    if (settingsSent || !rewriter.prefaceReceived) return;
    settingsSent = true;
    socket.write(EMPTY_SETTINGS);
    rewriter.dropNextSettingsAck();
  };
  const stop = (): void => {
    clearTimeout(timer);
    socket.off('data', onData);
    socket.off('end', onEnd);
    socket.off('close', stop);
  };
  const native = (reported: boolean): void => {
    stop();
    if (!reported && options.onRefused) reportSessionError(socket, options.onRefused);
    socket.pause();
    if (output.length > 0) socket.unshift(output.length === 1 ? output[0]! : Buffer.concat(output));
    output.length = 0;
    // Handed over outside the read callback, as Node's HTTP/2 server gets a fresh connection.
    process.nextTick(() => {
      if (!socket.destroyed) onRouted({ route: 'native', connection: socket });
    });
  };
  const rewriting = (reason: RewritingReason): void => {
    stop();
    if (socket.destroyed) return;
    const connection = new AuthorityRewritingSocket(socket, options, { rewriter, output });
    onRouted({ route: 'rewriting', connection, reason });
  };
  const refuse = (err: H2ConnectionError): void => {
    stop();
    // A server's first frame is SETTINGS, also before a GOAWAY.
    sendSettings();
    const lastStreamId = rewriter.lastForwardedStreamId;
    options.onRefused?.({ scope: 'connection', streamId: lastStreamId, code: err.code, reason: err.message });
    socket.end(goawayFrame(lastStreamId, err.code, err.message));
    socket.destroySoon();
    onRouted({ route: 'refused' });
  };

  function onData(chunk: Buffer): void {
    octetsRead += chunk.length;
    try {
      for (const b of rewriter.write(chunk)) output.push(b);
    } catch (err) {
      refuse(connectionError(err));
      return;
    }
    if (rewriter.notHttp2) {
      options.onRefused?.(notHttp2Refusal(chunk));
      native(true);
      return;
    }
    sendSettings();
    const first = rewriter.firstRequest;
    if (first && (rewriter.diverged || requestHeaderProblem(first.fields) !== null)) {
      rewriting('first-request');
    } else if (first && rewriter.settingsAcksToDrop === 0) {
      // Only once the ACK of the early SETTINGS is in (and out of `output`): nothing of this
      // connection will pass through JS again to drop it.
      native(false);
    } else if (octetsRead > MAX_START_OCTETS) {
      rewriting('long-start');
    }
  }
  function onEnd(): void {
    rewriting('ended');
  }

  const timer = setTimeout(
    () => rewriting('idle'),
    options.firstRequestTimeoutMs ?? FIRST_REQUEST_TIMEOUT_MS,
  );
  timer.unref();
  socket.on('data', onData);
  socket.on('end', onEnd);
  socket.on('close', stop);
  // An error is followed by 'close'. Kept after the hand-over: an error before the server's own
  // listener is attached must not be an uncaught one.
  socket.on('error', ignoreError);
}

const ignoreError = (): void => undefined;

/**
 * Reports the error Node's HTTP/2 layer destroys a native connection's socket with, if any (a
 * fatal nghttp2 error, too many invalid frames); a client going away is not a refusal. Outside
 * routeConnection, so that the listener does not keep what it read alive for the connection's life.
 */
function reportSessionError(socket: Socket, onRefused: (refusal: H2Refusal) => void): void {
  socket.once('error', (err: NodeJS.ErrnoException) => {
    if (err.code?.startsWith('ERR_HTTP2') !== true) return;
    onRefused({ scope: 'connection', streamId: 0, code: err.code, reason: err.message });
  });
}
