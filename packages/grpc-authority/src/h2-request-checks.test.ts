// nghttp2's request checks as h2-request-checks.ts mirrors them: which authorities pass, and the
// reason given for each kind of request nghttp2 resets.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isValidAuthority, requestHeaderProblem } from './h2-request-checks.js';

test('isValidAuthority: RFC 3986 authority characters, not a path', () => {
  const cases: [string, boolean][] = [
    ['localhost', true],
    ['localhost:50051', true],
    ['[::1]:80', true],
    ['user@host', true],
    ['%2Fvar%2Flib', true],
    ['', true],
    ['/var/lib/kubelet/device-plugins/kubelet.sock', false],
    ['unix:/tmp/x.sock', false],
    ['unix:///tmp/x.sock', false],
    ['a b', false],
    ['host\u00e9', false],
  ];
  for (const [value, valid] of cases) assert.equal(isValidAuthority(value), valid, JSON.stringify(value));
});

test('requestHeaderProblem names what nghttp2 refuses', () => {
  const base: [string, string][] = [
    [':method', 'POST'],
    [':scheme', 'http'],
    [':path', '/v1beta1.Registration/Register'],
    [':authority', 'localhost'],
    ['content-type', 'application/grpc'],
    ['te', 'trailers'],
  ];
  const cases: [string, [string, string][], string | null][] = [
    ['a gRPC request', base, null],
    [
      'a host instead of :authority',
      [...base.filter(([n]) => n !== ':authority'), ['host', 'localhost']],
      null,
    ],
    ['a header nghttp2 drops', [...base, ['bad name', 'x']], null],
    [
      'a raw-path :authority',
      base.map(([n, v]) => [n, n === ':authority' ? '/tmp/x.sock' : v]),
      ':authority "/tmp/x.sock" has characters nghttp2 refuses (it allows only RFC 3986 authority characters)',
    ],
    ['no :authority or host', base.filter(([n]) => n !== ':authority'), 'neither :authority nor host'],
    ['no :path', base.filter(([n]) => n !== ':path'), 'no :path'],
    ['an empty :path', base.map(([n, v]) => [n, n === ':path' ? '' : v]), ':path is empty'],
    [
      'an unknown pseudo-header',
      [...base.slice(0, 4), [':foo', 'x'], ...base.slice(4)],
      'unknown pseudo-header ":foo"',
    ],
    [
      'a pseudo-header after a regular one',
      [...base, [':method', 'GET']],
      'pseudo-header :method after a regular header',
    ],
    ['a repeated pseudo-header', [[':method', 'POST'], ...base], 'more than one :method'],
    ['an upper-case name', [...base, ['X-Foo', 'x']], 'header name "X-Foo" has upper-case letters'],
    [
      'a connection-specific header',
      [...base, ['connection', 'keep-alive']],
      'connection-specific header "connection" (RFC 9113 §8.2.2)',
    ],
    [
      'te other than trailers',
      base.map(([n, v]) => [n, n === 'te' ? 'gzip' : v]),
      'te: "gzip" (HTTP/2 allows only "trailers")',
    ],
    [
      'a bad content-length',
      [...base, ['content-length', '12a']],
      'invalid or repeated content-length "12a"',
    ],
  ];
  for (const [name, fields, problem] of cases) {
    assert.equal(requestHeaderProblem(fields.map(([n, v]) => ({ name: n, value: v }))), problem, name);
  }
  assert.equal(requestHeaderProblem([{ name: 'grpc-status', value: '0' }], true), null);
  assert.equal(
    requestHeaderProblem([{ name: ':path', value: '/' }], true),
    'pseudo-header :path in trailers',
  );
});
