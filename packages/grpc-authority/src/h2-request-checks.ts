// What nghttp2 — the HTTP/2 library inside Node's http2 server, which @grpc/grpc-js serves with —
// checks in a request's header list before it lets the stream through (nghttp2_http.c,
// nghttp2_http_on_header and nghttp2_http_on_request_headers). A request failing one of these is
// reset with RST_STREAM PROTOCOL_ERROR and the application never hears of it; a grpc-go server
// (what a real kubelet is) is more lenient, notably about `:authority`. h2-authority-rewriter.ts
// uses isValidAuthority to decide what to rewrite, and requestHeaderProblem to say why the server
// reset a stream when it does.

// nghttp2's VALID_AUTHORITY_CHARS: RFC 3986 unreserved, sub-delims, ':', '@', '[', ']', '%'.
// Not '/', so a raw socket path ("/var/lib/kubelet/device-plugins/kubelet.sock") is refused.
const AUTHORITY_CHARS = new Uint8Array(256);
for (const c of "-._~!$&'()*+,;=:@[]%") AUTHORITY_CHARS[c.charCodeAt(0)] = 1;
for (let c = 0x30; c <= 0x39; c++) AUTHORITY_CHARS[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) AUTHORITY_CHARS[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) AUTHORITY_CHARS[c] = 1;

/** Whether nghttp2 accepts `value` as a request's `:authority` (or `host`). */
export function isValidAuthority(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c > 0xff || AUTHORITY_CHARS[c] === 0) return false;
  }
  return true;
}

const PSEUDO_HEADERS = new Set([':method', ':scheme', ':path', ':authority', ':protocol']);
const CONNECTION_SPECIFIC = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);

// RFC 9110 tchar, lower case only (nghttp2_check_header_name).
const TOKEN_CHARS = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~") TOKEN_CHARS[c.charCodeAt(0)] = 1;
for (let c = 0x30; c <= 0x39; c++) TOKEN_CHARS[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) TOKEN_CHARS[c] = 1;

function isToken(s: string, from = 0): boolean {
  if (s.length <= from) return false;
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0xff || TOKEN_CHARS[c] === 0) return false;
  }
  return true;
}

/** nghttp2_check_header_value: no control characters other than HTAB, no DEL. */
function hasControlChars(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return true;
  }
  return false;
}

/**
 * The first reason nghttp2 would reset a stream whose request header list is `fields` (`trailers`
 * for a stream's second HEADERS), or null if it finds none. For diagnostics: it is run only after
 * the server has reset a stream. (Invalid regular headers nghttp2 merely drops are not reported.)
 */
export function requestHeaderProblem(
  fields: readonly { name: string; value: string }[],
  trailers = false,
): string | null {
  const seen = new Set<string>();
  let regularSeen = false;
  for (const { name, value } of fields) {
    if (name.startsWith(':')) {
      if (trailers) return `pseudo-header ${name} in trailers`;
      if (!PSEUDO_HEADERS.has(name)) return `unknown pseudo-header ${JSON.stringify(name)}`;
      if (regularSeen) return `pseudo-header ${name} after a regular header`;
      if (seen.has(name)) return `more than one ${name}`;
      if (name === ':authority' && !isValidAuthority(value)) {
        return `:authority ${JSON.stringify(value)} has characters nghttp2 refuses (it allows only RFC 3986 authority characters)`;
      }
      if (name === ':method' && !isToken(value.toLowerCase()))
        return `:method ${JSON.stringify(value)} is not a token`;
      if (name === ':path' && value === '') return ':path is empty';
      if (name === ':scheme' && !/^[A-Za-z][A-Za-z0-9+.-]*$/.test(value)) {
        return `:scheme ${JSON.stringify(value)} is not a URI scheme`;
      }
      if (hasControlChars(value)) return `${name} has control characters`;
    } else {
      regularSeen = true;
      if (/[A-Z]/.test(name)) return `header name ${JSON.stringify(name)} has upper-case letters`;
      if (!isToken(name)) continue; // nghttp2 drops such a header rather than refusing the stream
      if (CONNECTION_SPECIFIC.has(name))
        return `connection-specific header ${JSON.stringify(name)} (RFC 9113 §8.2.2)`;
      if (name === 'te' && value.toLowerCase() !== 'trailers') {
        return `te: ${JSON.stringify(value)} (HTTP/2 allows only "trailers")`;
      }
      if (name === 'content-length' && (seen.has(name) || !/^[0-9]+$/.test(value))) {
        return `invalid or repeated content-length ${JSON.stringify(value)}`;
      }
      if (name === 'host' && seen.has(name)) return 'more than one host header';
    }
    seen.add(name);
  }
  if (trailers) return null;
  // gRPC is never CONNECT, so all three are required.
  for (const required of [':method', ':scheme', ':path']) if (!seen.has(required)) return `no ${required}`;
  if (!seen.has(':authority') && !seen.has('host')) return 'neither :authority nor host';
  return null;
}
