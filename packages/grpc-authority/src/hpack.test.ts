// The HPACK codec against RFC 7541's own examples (Appendix C: integers, request and response
// sequences with and without Huffman coding, with eviction), the refusals §4–§6 require, and
// round trips of the non-indexing encoder.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { HUFFMAN_CODES, HUFFMAN_CODE_LENGTHS } from './hpack-huffman.js';
import {
  decodeInteger,
  encodeHeaderBlockWithoutIndexing,
  encodeInteger,
  encodeString,
  HpackDecoder,
  HpackError,
  huffmanDecode,
  huffmanEncode,
  type HeaderField,
} from './hpack.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const pairs = (fields: HeaderField[]): [string, string][] => fields.map((f) => [f.name, f.value]);

test('integers (C.1) encode and decode with every prefix', () => {
  assert.deepEqual(encodeInteger(10, 5), hex('0a'));
  assert.deepEqual(encodeInteger(1337, 5), hex('1f9a0a'));
  assert.deepEqual(encodeInteger(42, 8), hex('2a'));
  for (const prefix of [4, 5, 6, 7, 8]) {
    for (const value of [0, 1, (1 << prefix) - 2, (1 << prefix) - 1, 1 << prefix, 1337, 2 ** 31 - 1]) {
      const cursor = { pos: 0 };
      assert.equal(decodeInteger(encodeInteger(value, prefix), cursor, prefix), value);
    }
  }
  assert.throws(() => decodeInteger(hex('1fffffffff0f'), { pos: 0 }, 5), HpackError, 'overflow');
  assert.throws(() => decodeInteger(hex('1f9a'), { pos: 0 }, 5), HpackError, 'truncated');
});

const REQUESTS: [string, string][][] = [
  [
    [':method', 'GET'],
    [':scheme', 'http'],
    [':path', '/'],
    [':authority', 'www.example.com'],
  ],
  [
    [':method', 'GET'],
    [':scheme', 'http'],
    [':path', '/'],
    [':authority', 'www.example.com'],
    ['cache-control', 'no-cache'],
  ],
  [
    [':method', 'GET'],
    [':scheme', 'https'],
    [':path', '/index.html'],
    [':authority', 'www.example.com'],
    ['custom-key', 'custom-value'],
  ],
];
const RESPONSES: [string, string][][] = [
  [
    [':status', '302'],
    ['cache-control', 'private'],
    ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'],
    ['location', 'https://www.example.com'],
  ],
  [
    [':status', '307'],
    ['cache-control', 'private'],
    ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'],
    ['location', 'https://www.example.com'],
  ],
  [
    [':status', '200'],
    ['cache-control', 'private'],
    ['date', 'Mon, 21 Oct 2013 20:13:22 GMT'],
    ['location', 'https://www.example.com'],
    ['content-encoding', 'gzip'],
    ['set-cookie', 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1'],
  ],
];

const SEQUENCES = [
  {
    name: 'C.3 requests without Huffman coding',
    tableSize: 4096,
    expected: REQUESTS,
    sizes: [57, 110, 164],
    blocks: [
      '8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
      '8286 84be 5808 6e6f 2d63 6163 6865',
      '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65',
    ],
  },
  {
    name: 'C.4 requests with Huffman coding',
    tableSize: 4096,
    expected: REQUESTS,
    sizes: [57, 110, 164],
    blocks: [
      '8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff',
      '8286 84be 5886 a8eb 1064 9cbf',
      '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf',
    ],
  },
  {
    name: 'C.5 responses without Huffman coding, evicting from a 256-octet table',
    tableSize: 256,
    expected: RESPONSES,
    sizes: [222, 222, 215],
    blocks: [
      `4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
       2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70
       6c65 2e63 6f6d`,
      '4803 3330 37c1 c0bf',
      `88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d
       54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049
       5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e
       3d31`,
    ],
  },
  {
    name: 'C.6 responses with Huffman coding, evicting from a 256-octet table',
    tableSize: 256,
    expected: RESPONSES,
    sizes: [222, 222, 215],
    blocks: [
      `4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
       2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3`,
      '4883 640e ffc1 c0bf',
      `88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
       77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
       9587 3160 65c0 03ed 4ee5 b106 3d50 07`,
    ],
  },
];

for (const seq of SEQUENCES) {
  test(`RFC 7541 ${seq.name}`, () => {
    const decoder = new HpackDecoder(seq.tableSize);
    seq.blocks.forEach((block, i) => {
      const { fields, tableSizeUpdates } = decoder.decode(hex(block));
      assert.deepEqual(pairs(fields), seq.expected[i]);
      assert.deepEqual(tableSizeUpdates, []);
      assert.equal(decoder.tableSize.size, seq.sizes[i], `table size after block ${i + 1}`);
    });
  });
}

test('the Huffman code is RFC 7541 Appendix B', () => {
  // Spot checks against the appendix; the RFC vectors above exercise the rest.
  const expected: [number, number, number][] = [
    [0x30, 0x0, 5], // '0'
    [0x61, 0x3, 5], // 'a'
    [0x20, 0x14, 6], // ' '
    [0x7e, 0x1ffd, 13], // '~'
    [0x00, 0x1ff8, 13],
    [0xff, 0x3ffffee, 26],
    [256, 0x3fffffff, 30], // EOS
  ];
  for (const [symbol, code, length] of expected) {
    assert.equal(HUFFMAN_CODES[symbol], code, `code of ${symbol}`);
    assert.equal(HUFFMAN_CODE_LENGTHS[symbol], length, `length of ${symbol}`);
  }
  // Kraft equality: a complete prefix code.
  assert.equal(
    HUFFMAN_CODE_LENGTHS.reduce((sum, l) => sum + 2 ** -l, 0),
    1,
  );
});

test('Huffman round-trips every octet and refuses EOS and bad padding (§5.2)', () => {
  const all = String.fromCharCode(...Array.from({ length: 256 }, (_, i) => i));
  const coded = huffmanEncode(all);
  assert.equal(huffmanDecode(coded, 0, coded.length), all);
  fc.assert(
    fc.property(
      fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)) }),
      (s) => {
        const b = huffmanEncode(s);
        return huffmanDecode(b, 0, b.length) === s;
      },
    ),
  );
  // EOS spelled out in full (30 ones, then 2 bits of padding).
  assert.throws(() => huffmanDecode(hex('ffffffff'), 0, 4), /EOS/);
  // 'a' (00011) then 11 one-bits of padding: longer than 7 bits.
  assert.throws(() => huffmanDecode(hex('1fff'), 0, 2), /longer than 7 bits/);
  // 'a' then padding 000 instead of 111.
  assert.throws(() => huffmanDecode(hex('18'), 0, 1), /prefix of EOS/);
  assert.equal(huffmanDecode(hex('1f'), 0, 1), 'a');
});

test('dynamic table size updates: at the start only, within the allowed size, evicting', () => {
  const decoder = new HpackDecoder(4096);
  decoder.decode(hex('8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d'));
  assert.equal(decoder.tableSize.entries, 1);
  // Two updates (to 0, then to 100) empty the table and shrink it.
  const { fields, tableSizeUpdates } = decoder.decode(
    Buffer.concat([hex('20'), encodeInteger(100, 5, 0x20), hex('82')]),
  );
  assert.deepEqual(tableSizeUpdates, [0, 100]);
  assert.deepEqual(pairs(fields), [[':method', 'GET']]);
  assert.deepEqual(decoder.tableSize, { size: 0, entries: 0, maxSize: 100 });
  // An entry larger than the table empties it and is not added (§4.4).
  decoder.decode(Buffer.concat([hex('40'), encodeString('k'), encodeString('v'.repeat(80))]));
  assert.equal(decoder.tableSize.entries, 0);

  assert.throws(
    () => new HpackDecoder(4096).decode(Buffer.concat([hex('82'), hex('20')])),
    /after a header field/,
  );
  assert.throws(() => new HpackDecoder(4096).decode(encodeInteger(4097, 5, 0x20)), /> the allowed 4096/);
});

test('malformed blocks are HpackErrors', () => {
  const cases: [string, Buffer, RegExp][] = [
    ['index 0', hex('80'), /index 0/],
    ['index past the dynamic table', hex('be'), /beyond the table/],
    ['literal name index past the table', hex('7f00'), /beyond the table/],
    ['string longer than the block', Buffer.concat([hex('0085'), Buffer.from('ab')]), /overruns the block/],
    ['name without a value', Buffer.concat([hex('00'), encodeString('x')]), /truncated string/],
  ];
  for (const [name, block, error] of cases) {
    assert.throws(
      () => new HpackDecoder().decode(block),
      (err: unknown) => err instanceof HpackError && error.test(err.message),
      name,
    );
  }
});

test('the non-indexing encoder round-trips and leaves the decoder table empty', () => {
  const fields: HeaderField[] = [
    { name: ':method', value: 'POST' },
    { name: ':scheme', value: 'http' },
    { name: ':path', value: '/v1beta1.Registration/Register' },
    { name: ':authority', value: 'localhost' },
    { name: 'content-type', value: 'application/grpc' },
    { name: 'te', value: 'trailers' },
    { name: 'x-secret', value: 'hidden', neverIndex: true },
    { name: 'x-octets', value: '\u00ff\u0000\u007f' },
  ];
  const block = encodeHeaderBlockWithoutIndexing(fields, [0, 4096]);
  // After the updates (20, 3fe11f): :method POST and :scheme http are static entries 3 and 6.
  assert.deepEqual(block.subarray(0, 6), hex('20 3fe11f 83 86'));
  const decoder = new HpackDecoder();
  const decoded = decoder.decode(block);
  assert.deepEqual(decoded.tableSizeUpdates, [0, 4096]);
  assert.deepEqual(
    decoded.fields.map((f) => ({ ...f, neverIndex: f.neverIndex ?? false })),
    fields.map((f) => ({ ...f, neverIndex: f.neverIndex ?? false })),
  );
  assert.equal(decoder.tableSize.entries, 0);

  const octet = fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c));
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          name: fc.string({ unit: octet, minLength: 1 }),
          value: fc.string({ unit: octet }),
          neverIndex: fc.boolean(),
        }),
      ),
      (random) => {
        const d = new HpackDecoder();
        const back = d.decode(encodeHeaderBlockWithoutIndexing(random)).fields;
        assert.deepEqual(
          back.map((f) => [f.name, f.value, f.neverIndex ?? false]),
          random.map((f) => [f.name, f.value, f.neverIndex]),
        );
        assert.equal(d.tableSize.entries, 0);
      },
    ),
  );
});
