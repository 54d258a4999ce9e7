// Content negotiation for the documents the slice serves whole (discovery, OpenAPI): the Accept
// header parsed the way kube-apiserver's handlers parse it (github.com/munnerz/goautoneg, used by
// k8s.io/apiserver pkg/endpoints/handlers/negotiation and k8s.io/kube-openapi pkg/handler{,3}), and
// the shape such a handler answers with, serialised once so that its ETag is the hash of the bytes.

import { createHash } from 'node:crypto';
import { statusObject } from './http.js';

export interface MediaRange {
  /** Lower-cased, `*` for a wildcard. */
  type: string;
  subtype: string;
  /** Parameters other than `q` (`g`, `v`, `as`, `profile`…); names lower-cased, values as sent. */
  params: Record<string, string>;
  q: number;
}

/**
 * The clauses of an Accept header, most preferred first: by `q`, then concrete types before
 * wildcards (goautoneg's order), otherwise as sent. Clauses with `q=0` are dropped. A missing or
 * empty header means `*∕*`.
 */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (header === undefined || header.trim() === '') return [{ type: '*', subtype: '*', params: {}, q: 1 }];
  const ranges: MediaRange[] = [];
  for (const clause of header.split(',')) {
    const [mediaType = '', ...rawParams] = clause.split(';');
    const mt = mediaType.trim().toLowerCase();
    let type: string;
    let subtype: string;
    if (mt === '*') [type, subtype] = ['*', '*'];
    else {
      const slash = mt.indexOf('/');
      if (slash <= 0 || slash === mt.length - 1) continue;
      [type, subtype] = [mt.slice(0, slash), mt.slice(slash + 1)];
    }
    const params: Record<string, string> = {};
    let q = 1;
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const name = p.slice(0, eq).trim().toLowerCase();
      const value = p
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (name === 'q') q = Number.isFinite(Number(value)) ? Number(value) : 0;
      else params[name] = value;
    }
    if (q > 0) ranges.push({ type, subtype, params, q });
  }
  const wildness = (r: MediaRange) => (r.type === '*' ? 2 : 0) + (r.subtype === '*' ? 1 : 0);
  return ranges
    .map((r, i) => ({ r, i }))
    .sort((a, b) => b.r.q - a.r.q || wildness(a.r) - wildness(b.r) || a.i - b.i)
    .map(({ r }) => r);
}

/** Whether a clause accepts `type/subtype` (wildcards included); its parameters are not looked at. */
export function rangeMatches(range: MediaRange, type: string, subtype: string): boolean {
  return (range.type === '*' || range.type === type) && (range.subtype === '*' || range.subtype === subtype);
}

/** What a document handler answers; `null` from a handler means the path is not one of its own. */
export interface DocumentResponse {
  status: number;
  contentType: string;
  /**
   * The document (or Status) as a JSON value; a string for a non-JSON body (a redirect's HTML); the
   * decoded message for a protobuf body.
   */
  body: unknown;
  /**
   * The exact bytes to send: `JSON.stringify(body)` for JSON (the ETag is the hash of these), the
   * encoded message for protobuf; prepared once per document rather than per request. Empty for
   * 304 Not Modified.
   */
  serialized: string | Uint8Array;
  headers?: Record<string, string>;
}

/** A document serialised once, with the ETag kube-apiserver would give it: SHA-512, upper-case hex. */
export interface CachedDocument {
  body: unknown;
  serialized: string;
  /** Unquoted; the `ETag` header is this in double quotes. */
  hash: string;
}

export function cacheDocument(body: unknown): CachedDocument {
  const serialized = JSON.stringify(body);
  return { body, serialized, hash: createHash('sha512').update(serialized).digest('hex').toUpperCase() };
}

/** Whether an If-None-Match header matches an (unquoted) ETag, as net/http's ServeContent checks it. */
export function ifNoneMatchHits(ifNoneMatch: string | undefined, hash: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === `"${hash}"` || t === `W/"${hash}"`;
  });
}

/** A JSON document response. */
export function documentResponse(
  status: number,
  contentType: string,
  doc: Pick<CachedDocument, 'body' | 'serialized'>,
  headers?: Record<string, string>,
): DocumentResponse {
  return { status, contentType, body: doc.body, serialized: doc.serialized, ...(headers ? { headers } : {}) };
}

/** 304 Not Modified: the validators again, no body. */
export function notModified(headers: Record<string, string>): DocumentResponse {
  return { status: 304, contentType: '', body: undefined, serialized: '', headers };
}

/** A Kubernetes `Status` failure (the body kube-apiserver sends with its errors). */
export function statusResponse(code: number, reason: string, message: string): DocumentResponse {
  const body = statusObject(code, reason, message);
  return { status: code, contentType: 'application/json', body, serialized: JSON.stringify(body) };
}
