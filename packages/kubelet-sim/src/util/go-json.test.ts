// Go's encoding/json output: struct order, sorted map keys, nil as null, HTML-safe escaping, and the
// same text whichever path (JSON.stringify, or member by member for index-like map keys) wrote it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GoMap, goJson, goString } from './go-json.js';

test('structs keep their field order, maps are sorted, undefined is omitted, null is nil', () => {
  assert.equal(
    goJson({ B: 1, A: new GoMap({ z: {}, a: [] }), C: undefined, D: null, E: ['x'] }),
    '{"B":1,"A":{"a":[],"z":{}},"D":null,"E":["x"]}',
  );
});

test('strings are escaped as Go escapes them (<, >, &, U+2028, U+2029; quotes and control characters)', () => {
  assert.equal(
    goString('a<b>&c\u2028\u2029"\\\n\t\u0001'),
    '"a\\u003cb\\u003e\\u0026c\\u2028\\u2029\\"\\\\\\n\\t\\u0001"',
  );
  assert.equal(goJson({ 'k<': 'v&' }), '{"k\\u003c":"v\\u0026"}');
});

test("map keys that look like array indexes keep Go's byte order", () => {
  assert.equal(goJson(new GoMap({ '9': 1, '10': 2, a: 3 })), '{"10":2,"9":1,"a":3}');
});
