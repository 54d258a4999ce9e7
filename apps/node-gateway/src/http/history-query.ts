// GET /api/v1/history query parsing: `resource` (optional, must be a resource or DRA driver the node
// serves or served) and `since` (optional: epoch ms, an ISO-8601 timestamp, or a duration ago such
// as "15m", "6h").
// Unknown parameters are refused so a typo does not silently return everything.
import { GatewayError } from '../errors.js';
import type { HistoryQuery } from '../model/history.js';

const KNOWN = new Set(['resource', 'since']);
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Parses `since` into epoch ms; null when it is none of the accepted forms. */
export function parseSince(raw: string, now: number): number | null {
  if (/^\d{1,16}$/.test(raw)) return Number(raw);
  const d = /^(\d{1,9})(ms|s|m|h|d)$/.exec(raw);
  if (d) return now - Number(d[1]) * UNIT_MS[d[2] as keyof typeof UNIT_MS];
  // ISO-8601 date-time with a zone, as every timestamp in this API.
  const iso = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.exec(raw);
  if (iso) {
    // Date.parse rolls 2026-02-30 over into March: refuse calendar dates that do not exist.
    const [y, m, d] = [Number(iso[1]), Number(iso[2]), Number(iso[3])];
    if (new Date(Date.UTC(y, m - 1, d)).getUTCDate() !== d || m < 1 || m > 12) return null;
    const t = Date.parse(raw);
    return Number.isNaN(t) ? null : t;
  }
  return null;
}

export function parseHistoryQuery(
  params: URLSearchParams,
  now: number,
  knownResource: (name: string) => boolean,
  knownNames: () => string[],
): HistoryQuery {
  for (const key of params.keys()) {
    if (!KNOWN.has(key))
      throw new GatewayError(
        'bad-request',
        `unknown query parameter "${key.slice(0, 40)}"; use resource and since`,
      );
  }
  const query: HistoryQuery = {};
  const resource = params.get('resource');
  if (resource !== null) {
    if (!resource || resource.length > 253)
      throw new GatewayError('bad-request', 'resource must be 1–253 characters');
    if (!knownResource(resource)) {
      throw new GatewayError(
        'not-found',
        `no history for resource "${resource.slice(0, 80)}"; this node has: ${knownNames().join(', ') || 'none'}`,
      );
    }
    query.resource = resource;
  }
  const sinceRaw = params.get('since');
  if (sinceRaw !== null) {
    const since = parseSince(sinceRaw, now);
    if (since === null) {
      throw new GatewayError(
        'bad-request',
        `since must be epoch milliseconds, an ISO-8601 timestamp or a duration ago like 15m or 6h; got "${sinceRaw.slice(0, 40)}"`,
      );
    }
    query.since = since;
  }
  return query;
}
