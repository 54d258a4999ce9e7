import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGatewayConfig } from '../config.js';
import { parseHistoryQuery, parseSince } from './history-query.js';

const RESOURCES = [{ name: 'plugboard.example/gpu', simulated: { count: 1 } }];
const NOW = Date.parse('2026-01-01T12:00:00Z');

test('since: epoch ms, ISO-8601 with a zone, or a duration ago; anything else is null', () => {
  const cases: [string, number | null][] = [
    ['1767268800000', 1767268800000],
    ['2026-01-01T11:00:00Z', NOW - 3_600_000],
    ['2026-01-01T13:30:00.5+02:00', NOW - 30 * 60_000 + 500],
    ['15m', NOW - 15 * 60_000],
    ['6h', NOW - 6 * 3_600_000],
    ['1d', NOW - 86_400_000],
    ['500ms', NOW - 500],
    ['2026-01-01T11:00:00', null],
    ['2026-02-30T11:00:00Z', null],
    ['-5m', null],
    ['yesterday', null],
    ['', null],
  ];
  for (const [raw, want] of cases) {
    const got = parseSince(raw, NOW);
    assert.equal(got, want, raw);
  }
});

test('the query: unknown parameters 400, unknown resource 404 naming the known ones', () => {
  const known = (n: string) => n === 'r/a';
  const names = () => ['r/a'];
  const q = (s: string) => parseHistoryQuery(new URLSearchParams(s), NOW, known, names);
  assert.deepEqual(q(''), {});
  assert.deepEqual(q('resource=r%2Fa&since=1h'), { resource: 'r/a', since: NOW - 3_600_000 });
  assert.throws(() => q('resource=r%2Fb'), { code: 'not-found', message: /"r\/b".*r\/a/ });
  assert.throws(() => q('resource='), { code: 'bad-request' });
  assert.throws(() => q('since=later'), { code: 'bad-request', message: /since must be/ });
  assert.throws(() => q('step=10s'), { code: 'bad-request', message: /unknown query parameter "step"/ });
});

test('gateway.history config: defaults cover 24 h in three tiers; bad tiers name the field', () => {
  const c = parseGatewayConfig({ resources: RESOURCES, gateway: { nodeName: 'n' } });
  assert.equal(c.history.enabled, true);
  assert.deepEqual(
    c.history.tiers.map((t) => [t.resolutionMs, t.retentionMs]),
    [
      [10_000, 3_600_000],
      [60_000, 21_600_000],
      [300_000, 86_400_000],
    ],
  );
  const bad: [unknown, RegExp][] = [
    [
      [
        { resolutionMs: 10_000, retentionMs: 60_000 },
        { resolutionMs: 15_000, retentionMs: 120_000 },
      ],
      /larger multiple/,
    ],
    [[{ resolutionMs: 100, retentionMs: 86_400_000 }], /at most 100000 buckets/],
    [[{ resolutionMs: 50, retentionMs: 1000 }], /history\.tiers/],
    [[], /history\.tiers/],
  ];
  for (const [tiers, want] of bad) {
    assert.throws(
      () =>
        parseGatewayConfig(
          { resources: RESOURCES, gateway: { nodeName: 'n', history: { tiers } } },
          { source: 'gw.yaml' },
        ),
      (err: Error) => {
        assert.match(err.message, /gw\.yaml/);
        assert.match(err.message, want);
        return true;
      },
      JSON.stringify(tiers),
    );
  }
});
