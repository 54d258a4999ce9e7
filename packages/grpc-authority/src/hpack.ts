// A small HPACK codec (RFC 7541), just what h2-authority-rewriter.ts needs to rewrite a request's
// header block on its way to Node's HTTP/2 server: a decoder that keeps a connection's dynamic
// table in step with the client's encoder, and an encoder that never indexes, so that what it
// sends leaves the receiving decoder's dynamic table untouched. (The npm `hpack.js` is unmaintained
// and streams through readable-stream 2; this is ~250 lines with the RFC's own test vectors.)
//
// Names and values are latin1 strings — one char per octet — so any octets round-trip unchanged
// and an entry's size (RFC 7541 §4.1: name octets + value octets + 32) is name.length +
// value.length + 32.

import { HUFFMAN_CODE_LENGTHS, HUFFMAN_CODES, HUFFMAN_DECODER, HUFFMAN_EOS } from './hpack-huffman.js';

export interface HeaderField {
  name: string;
  value: string;
  /** Sent as "never indexed" (RFC 7541 §6.2.3): re-encoded the same way. */
  neverIndex?: boolean;
}

export interface DecodedHeaderBlock {
  fields: HeaderField[];
  /** Dynamic table size updates at the start of the block (§4.2), in order. */
  tableSizeUpdates: number[];
}

/** A header block that cannot be decoded: a COMPRESSION_ERROR for the whole connection (RFC 9113 §4.3). */
export class HpackError extends Error {
  override readonly name = 'HpackError';
}

// RFC 7541 Appendix A.
const STATIC_TABLE: readonly (readonly [string, string])[] = [
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];

const STATIC_NAME_INDEX = new Map<string, number>();
const STATIC_FIELD_INDEX = new Map<string, Map<string, number>>();
STATIC_TABLE.forEach(([name, value], i) => {
  if (!STATIC_NAME_INDEX.has(name)) STATIC_NAME_INDEX.set(name, i + 1);
  if (value === '') return;
  const byValue = STATIC_FIELD_INDEX.get(name) ?? new Map<string, number>();
  byValue.set(value, i + 1);
  STATIC_FIELD_INDEX.set(name, byValue);
});

/** The default SETTINGS_HEADER_TABLE_SIZE (RFC 9113 §6.5.2). */
export const DEFAULT_HEADER_TABLE_SIZE = 4096;

/**
 * Decodes one connection's header blocks, in order, keeping its dynamic table (§2.3.2) as the
 * peer's encoder keeps it. A thrown HpackError leaves the table unusable: the connection must end.
 */
export class HpackDecoder {
  // Newest entry last; entries are evicted from the front.
  readonly #entries: (readonly [string, string])[] = [];
  #size = 0;
  #maxSize: number;
  /** The largest size a table size update may ask for: our side's SETTINGS_HEADER_TABLE_SIZE. */
  maxAllowedSize: number;

  constructor(maxAllowedSize = DEFAULT_HEADER_TABLE_SIZE) {
    this.maxAllowedSize = maxAllowedSize;
    this.#maxSize = maxAllowedSize;
  }

  /** The dynamic table's current size in the RFC's accounting, and its entry count (for tests). */
  get tableSize(): { size: number; entries: number; maxSize: number } {
    return { size: this.#size, entries: this.#entries.length, maxSize: this.#maxSize };
  }

  decode(block: Buffer): DecodedHeaderBlock {
    const fields: HeaderField[] = [];
    const tableSizeUpdates: number[] = [];
    const cursor = { pos: 0 };
    while (cursor.pos < block.length) {
      const first = block[cursor.pos]!;
      if (first & 0x80) {
        // §6.1 Indexed Header Field.
        const [name, value] = this.#lookup(decodeInteger(block, cursor, 7));
        fields.push({ name, value });
      } else if (first & 0x40) {
        // §6.2.1 Literal Header Field with Incremental Indexing.
        const field = this.#literal(block, cursor, 6);
        this.#add(field.name, field.value);
        fields.push(field);
      } else if (first & 0x20) {
        // §6.3 Dynamic Table Size Update: only before the first field of a block (§4.2).
        const size = decodeInteger(block, cursor, 5);
        if (fields.length > 0) throw new HpackError('dynamic table size update after a header field');
        if (size > this.maxAllowedSize) {
          throw new HpackError(`dynamic table size update to ${size} > the allowed ${this.maxAllowedSize}`);
        }
        this.#maxSize = size;
        this.#evict(0);
        tableSizeUpdates.push(size);
      } else {
        // §6.2.2 without indexing (0000xxxx) and §6.2.3 never indexed (0001xxxx).
        const field = this.#literal(block, cursor, 4);
        if (first & 0x10) field.neverIndex = true;
        fields.push(field);
      }
    }
    return { fields, tableSizeUpdates };
  }

  #literal(block: Buffer, cursor: { pos: number }, prefixBits: number): HeaderField {
    const index = decodeInteger(block, cursor, prefixBits);
    const name = index === 0 ? decodeString(block, cursor) : this.#lookup(index)[0];
    return { name, value: decodeString(block, cursor) };
  }

  #lookup(index: number): readonly [string, string] {
    if (index === 0) throw new HpackError('index 0');
    if (index <= STATIC_TABLE.length) return STATIC_TABLE[index - 1]!;
    const entry = this.#entries[this.#entries.length - (index - STATIC_TABLE.length)];
    if (!entry) {
      throw new HpackError(
        `index ${index} beyond the table (${STATIC_TABLE.length}+${this.#entries.length})`,
      );
    }
    return entry;
  }

  #add(name: string, value: string): void {
    const size = name.length + value.length + 32;
    // §4.4: an entry larger than the table empties it and is not added.
    this.#evict(size);
    if (size <= this.#maxSize) {
      this.#entries.push([name, value]);
      this.#size += size;
    }
  }

  /** Evicts until `room` more octets fit (or the table is empty). */
  #evict(room: number): void {
    while (this.#size + room > this.#maxSize && this.#entries.length > 0) {
      const [name, value] = this.#entries.shift()!;
      this.#size -= name.length + value.length + 32;
    }
  }
}

// Integers beyond this are refused: no sane index, length or table size comes near it.
const MAX_INTEGER = 2 ** 31 - 1;

/** §5.1: an integer with an N-bit prefix at cursor.pos; advances the cursor. */
export function decodeInteger(block: Uint8Array, cursor: { pos: number }, prefixBits: number): number {
  const max = (1 << prefixBits) - 1;
  if (cursor.pos >= block.length) throw new HpackError('truncated integer');
  let value = block[cursor.pos++]! & max;
  if (value < max) return value;
  for (let multiplier = 1; ; multiplier *= 128) {
    if (cursor.pos >= block.length) throw new HpackError('truncated integer');
    const byte = block[cursor.pos++]!;
    value += (byte & 0x7f) * multiplier;
    if (value > MAX_INTEGER) throw new HpackError('integer overflow');
    if ((byte & 0x80) === 0) return value;
  }
}

/** §5.2: a string literal (raw or Huffman-coded) at cursor.pos; advances the cursor. */
function decodeString(block: Buffer, cursor: { pos: number }): string {
  if (cursor.pos >= block.length) throw new HpackError('truncated string');
  const huffman = (block[cursor.pos]! & 0x80) !== 0;
  const length = decodeInteger(block, cursor, 7);
  const start = cursor.pos;
  const end = start + length;
  if (end > block.length) throw new HpackError(`string of ${length} octets overruns the block`);
  cursor.pos = end;
  return huffman ? huffmanDecode(block, start, end) : block.toString('latin1', start, end);
}

// Decoded strings are assembled here: header blocks are decoded one at a time, synchronously.
let scratch = Buffer.allocUnsafe(4096);

/**
 * Decodes the Huffman-coded octets bytes[start, end) into a latin1 string, refusing what §5.2 says
 * a decoder must: the EOS symbol, padding longer than 7 bits, padding other than EOS's leading ones.
 */
export function huffmanDecode(bytes: Uint8Array, start: number, end: number): string {
  // Every code is at least 5 bits long.
  const most = Math.ceil(((end - start) * 8) / 5);
  if (scratch.length < most) scratch = Buffer.allocUnsafe(most);
  const out = scratch;
  const { next, symbol, pendingBits, pendingAllOnes } = HUFFMAN_DECODER;
  let n = 0;
  let state = 0;
  for (let i = start; i < end; i++) {
    const byte = bytes[i]!;
    let t = 16 * state + (byte >> 4);
    let s = symbol[t]!;
    if (s >= 0) {
      if (s === HUFFMAN_EOS) throw new HpackError('Huffman-coded string contains EOS');
      out[n++] = s;
    }
    state = next[t]!;
    t = 16 * state + (byte & 0xf);
    s = symbol[t]!;
    if (s >= 0) {
      if (s === HUFFMAN_EOS) throw new HpackError('Huffman-coded string contains EOS');
      out[n++] = s;
    }
    state = next[t]!;
  }
  if (pendingBits[state]! > 7) throw new HpackError('Huffman padding longer than 7 bits');
  if (!pendingAllOnes[state]) throw new HpackError('Huffman padding is not a prefix of EOS');
  return out.toString('latin1', 0, n);
}

/** Huffman-encodes a latin1 string. */
export function huffmanEncode(value: string): Buffer {
  let bits = 0;
  for (let i = 0; i < value.length; i++) bits += HUFFMAN_CODE_LENGTHS[octetAt(value, i)]!;
  const out = Buffer.allocUnsafe(Math.ceil(bits / 8));
  let n = 0;
  // Fewer than 8 bits are pending between symbols, so acc * 2^30 + code stays an exact integer.
  let acc = 0;
  let accBits = 0;
  for (let i = 0; i < value.length; i++) {
    const symbol = octetAt(value, i);
    const length = HUFFMAN_CODE_LENGTHS[symbol]!;
    acc = acc * 2 ** length + HUFFMAN_CODES[symbol]!;
    accBits += length;
    while (accBits >= 8) {
      accBits -= 8;
      const byte = Math.floor(acc / 2 ** accBits);
      out[n++] = byte;
      acc -= byte * 2 ** accBits;
    }
  }
  // Pad with EOS's most significant bits: all ones.
  if (accBits > 0) out[n++] = (acc << (8 - accBits)) | (0xff >> accBits);
  return out;
}

function octetAt(value: string, i: number): number {
  const c = value.charCodeAt(i);
  if (c > 0xff) throw new HpackError(`not an octet string: char ${c} at ${i}`);
  return c;
}

/** §5.1: `value` with an N-bit prefix; `flags` fills the first octet's bits above the prefix. */
export function encodeInteger(value: number, prefixBits: number, flags = 0): Buffer {
  const out = Buffer.allocUnsafe(6);
  return out.subarray(0, writeInteger(out, 0, value, prefixBits, flags));
}

/** Writes an integer at out[pos] (room for 6 octets: values up to 2^31); returns the end. */
function writeInteger(out: Buffer, pos: number, value: number, prefixBits: number, flags: number): number {
  const max = (1 << prefixBits) - 1;
  if (value < max) {
    out[pos++] = flags | value;
    return pos;
  }
  out[pos++] = flags | max;
  let rest = value - max;
  while (rest >= 128) {
    out[pos++] = (rest % 128) | 0x80;
    rest = Math.floor(rest / 128);
  }
  out[pos++] = rest;
  return pos;
}

/** §5.2: a string literal, Huffman-coded or raw. */
export function encodeString(value: string, huffman = false): Buffer {
  if (huffman) {
    const coded = huffmanEncode(value);
    return Buffer.concat([encodeInteger(coded.length, 7, 0x80), coded]);
  }
  for (let i = 0; i < value.length; i++) octetAt(value, i);
  const out = Buffer.allocUnsafe(6 + value.length);
  return out.subarray(0, writeRawString(out, 0, value));
}

function writeRawString(out: Buffer, pos: number, value: string): number {
  pos = writeInteger(out, pos, value.length, 7, 0);
  // A JS loop beats the call into C++ for the short strings headers are.
  if (value.length > 64) return pos + out.write(value, pos, 'latin1');
  for (let i = 0; i < value.length; i++) out[pos++] = value.charCodeAt(i);
  return pos;
}

/**
 * Encodes a header block that never touches the receiver's dynamic table: the given table size
 * updates first, then each field as a static-table index when the static table holds it exactly,
 * else as a literal without indexing (never indexed when the field was), with a static-table name
 * index where there is one. Strings are sent raw: on a Unix socket the octets Huffman would save
 * are not worth its CPU. Names and values are latin1 strings, as HpackDecoder returns them.
 */
export function encodeHeaderBlockWithoutIndexing(
  fields: readonly HeaderField[],
  tableSizeUpdates: readonly number[] = [],
): Buffer {
  // At most 6 octets per integer: a representation, a name length and a value length per field.
  let size = 6 * tableSizeUpdates.length;
  for (const { name, value } of fields) size += 18 + name.length + value.length;
  const out = Buffer.allocUnsafe(size);
  let pos = 0;
  for (const update of tableSizeUpdates) pos = writeInteger(out, pos, update, 5, 0x20);
  for (const { name, value, neverIndex } of fields) {
    const exact = neverIndex ? undefined : STATIC_FIELD_INDEX.get(name)?.get(value);
    if (exact !== undefined) {
      pos = writeInteger(out, pos, exact, 7, 0x80);
      continue;
    }
    const nameIndex = STATIC_NAME_INDEX.get(name) ?? 0;
    pos = writeInteger(out, pos, nameIndex, 4, neverIndex ? 0x10 : 0x00);
    if (nameIndex === 0) pos = writeRawString(out, pos, name);
    pos = writeRawString(out, pos, value);
  }
  return out.subarray(0, pos);
}
