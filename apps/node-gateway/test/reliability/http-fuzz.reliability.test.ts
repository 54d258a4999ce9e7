// Property-based fuzzing (fast-check) of every gateway endpoint: methods, paths (unknown IDs, path
// traversal, bad percent-encoding), queries, bodies (malformed JSON/YAML, wrong types, unknown
// resources and devices, oversized), content types, with and without a token; then raw garbage on
// the HTTP socket and disallowed WebSocket frames and upgrade queries. Every case answers a 4xx
// problem+json (or a read's 2xx) or closes cleanly — never a 5xx, never a crash — and changes no state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import fc from 'fast-check';
import { WebSocket } from 'ws';
import { report, sized } from './figures.js';
import { api, bearer, GPU, NIC, snapshotOf, startRig, TOKEN } from './harness.js';

const HTTP_RUNS = sized(300, 5000);
const WS_RUNS = sized(40, 400);
const MAX_BODY = 4096;

const idArb = fc.oneof(
  fc.constantFrom(
    '..',
    '.',
    '%2e%2e',
    '..%2f..%2fetc%2fpasswd',
    '%2F',
    '%00',
    '%',
    '%zz',
    'a%2fb',
    '~1',
    'gpu-0',
    '%E2%80%AE',
    'x'.repeat(300),
  ),
  fc.webSegment(),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
);
const pathArb = fc.oneof(
  fc.constantFrom(
    '/api/v1/node',
    '/api/v1/summary',
    '/api/v1/faults',
    '/api/v1/scenarios',
    '/api/v1/stream',
    '/metrics',
    '/healthz',
    '/readyz',
    '/',
    '/api',
    '/api/v2/node',
    '//api//v1//faults//',
  ),
  idArb.map((id) => `/api/v1/faults/${id}`),
  idArb.map((id) => `/api/v1/scenarios/${id}`),
  fc
    .tuple(fc.constantFrom('node', 'summary', 'faults', 'scenarios', 'stream'), idArb, idArb)
    .map(([k, a, b]) => `/api/v1/${k}/${a}/${b}`),
  fc.webPath(),
);
const queryArb = fc.option(
  fc.dictionary(
    fc.constantFrom('resource', 'deviceId', 'view', 'since', 'x', '__proto__'),
    fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom(GPU, 'gpu-0', '-1', '1e309', 'NaN')),
    { maxKeys: 3 },
  ),
  { nil: undefined },
);
/** Fault-shaped bodies, each with at least one defect. */
const badFaultArb = fc.oneof(
  fc.record({
    resource: fc.constant('plugboard.example/none'),
    deviceId: fc.constant('gpu-0'),
    reason: fc.string({ minLength: 1, maxLength: 20 }),
  }),
  fc.record({
    resource: fc.constantFrom(GPU, NIC),
    deviceId: fc.oneof(
      fc.constantFrom('../gpu-0', 'gpu-999', '', 'gpu-0/../../x'),
      fc.string({ maxLength: 20 }).map((s) => `zz-${s}`),
    ),
    reason: fc.string({ minLength: 1, maxLength: 20 }),
  }),
  fc.record({
    resource: fc.constant(GPU),
    deviceId: fc.constant('gpu-0'),
    reason: fc.oneof(fc.integer(), fc.constant(''), fc.constant(null), fc.constant('r'.repeat(513))),
  }),
  fc.record({
    resource: fc.constant(GPU),
    deviceId: fc.constant('gpu-0'),
    reason: fc.constant('r'),
    ttlSeconds: fc.oneof(
      fc.constant(0),
      fc.constant(-1),
      fc.constant(1.5),
      fc.constant('60'),
      fc.constant(1e12),
    ),
  }),
  fc.record({
    resource: fc.constant(GPU),
    deviceId: fc.constant('gpu-0'),
    reason: fc.constant('r'),
    extra: fc.jsonValue(),
  }),
);
const badScenarioArb = fc.oneof(
  fc.record({
    action: fc.constantFrom('fail-devices', 'flap-device', 'fail-numa-node'),
    resource: fc.constant('plugboard.example/none'),
    count: fc.constant(1),
    deviceId: fc.constant('gpu-0'),
    periodMs: fc.constant(5),
    numaNode: fc.constant(-1),
    ttlSeconds: fc.constant(10),
  }),
  fc.record({ action: fc.string({ maxLength: 12 }).map((s) => `no-such-${s}`) }),
  fc.record({
    name: fc.string(),
    steps: fc.array(
      fc.record({
        at: fc.oneof(fc.string(), fc.integer({ min: -5, max: -1 })),
        action: fc.constant('heal-all'),
      }),
      { minLength: 1, maxLength: 3 },
    ),
  }),
);
const bodyArb = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.constantFrom(
    '{',
    '{"resource":',
    'null',
    '[]',
    '"x"',
    '1',
    'true',
    '\u0000',
    '{"__proto__":{"admin":true}}',
    '- a\n- b',
    'a: [',
    '*x',
    '&a [*a, *a]',
  ),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'),
  badFaultArb.map((v) => JSON.stringify(v)),
  badScenarioArb.map((v) => JSON.stringify(v)),
  fc
    .constantFrom(MAX_BODY + 1, 100_000)
    .map((n) => JSON.stringify({ resource: GPU, deviceId: 'gpu-0', reason: 'x'.repeat(n) })),
);
const methodArb = fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'HEAD', 'OPTIONS');
/** Real routes most of the time (so bodies reach validation), anything at all otherwise. */
const routeArb = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(['POST', '/api/v1/faults'], ['POST', '/api/v1/scenarios']) },
  {
    weight: 2,
    arbitrary: fc.tuple(
      fc.constantFrom('GET', 'DELETE'),
      idArb.map((id) => `/api/v1/faults/${id}`),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(
      fc.constantFrom('GET', 'DELETE'),
      idArb.map((id) => `/api/v1/scenarios/${id}`),
    ),
  },
  { weight: 3, arbitrary: fc.tuple(methodArb, pathArb) },
);
const requestArb = fc.record({
  route: routeArb,
  query: queryArb,
  body: fc.option(bodyArb, { nil: undefined, freq: 8 }),
  contentType: fc.option(
    fc.oneof(
      { weight: 6, arbitrary: fc.constant('application/json') },
      { weight: 2, arbitrary: fc.constant('application/yaml') },
      {
        weight: 2,
        arbitrary: fc.constantFrom(
          'text/plain',
          'application/merge-patch+json',
          'multipart/form-data; boundary=x',
          '',
          'application/json; charset=utf-16',
        ),
      },
    ),
    { nil: undefined, freq: 8 },
  ),
  token: fc.constantFrom<string | undefined>(TOKEN, TOKEN, undefined, 'not-the-token-0000000000'),
});

test(`${HTTP_RUNS} fuzzed HTTP requests + raw garbage + ${WS_RUNS} WebSocket cases: 4xx problem+json or a clean close, never 5xx, no state change`, async (t) => {
  const rig = await startRig({ gateway: { http: { maxBodyBytes: MAX_BODY, mutationRateLimit: null } } });
  t.after(() => rig.stop());
  const url = rig.gw.url;
  const stateOf = async () => {
    const s = await snapshotOf(url);
    const scenarios = (await api(url, '/api/v1/scenarios')).body!.items;
    return JSON.stringify({
      faults: s.faults,
      scenarios,
      health: Object.values(s.devices).map((d) => `${d.key}:${d.health}`),
    });
  };
  const before = await stateOf();
  const statuses = new Map<number, number>();
  let ran = 0;

  await fc.assert(
    fc.asyncProperty(requestArb, async ({ route: [method, path], ...rest }) => {
      const r = { method, path, ...rest };
      const qs = r.query ? `?${new URLSearchParams(r.query).toString()}` : '';
      const headers: Record<string, string> = {};
      if (r.contentType !== undefined) headers['content-type'] = r.contentType;
      if (r.token) headers.authorization = `Bearer ${r.token}`;
      const hasBody = r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD';
      const res = await api(url, `${r.path}${qs}`, {
        method: r.method,
        headers,
        ...(hasBody ? { body: r.body } : {}),
      });
      ran++;
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      assert.ok(res.status < 500, `${r.method} ${r.path}${qs} → ${res.status} ${res.text.slice(0, 300)}`);
      if (res.status >= 400 && r.method !== 'HEAD') {
        assert.equal(
          res.type,
          'application/problem+json',
          `${r.method} ${r.path}: ${res.status} ${res.type}`,
        );
        assert.equal(res.body?.status, res.status);
      }
      if (res.status < 300) {
        const read = r.method === 'GET' || r.method === 'HEAD';
        // fetch resolves dot segments ("x/%2e%2e" is "..") before sending: check what was sent.
        const sent = new URL(`${url}${r.path}`).pathname;
        // Collection DELETEs (stop every scenario, clear every matching fault) succeed with nothing
        // to act on: the state check below holds them to changing nothing.
        const clearAll = r.method === 'DELETE' && /^\/api\/v1\/(scenarios|faults)\/*$/.test(sent);
        assert.ok(
          read || clearAll,
          `a fuzzed mutation succeeded: ${r.method} ${r.path} ${String(r.body).slice(0, 200)}`,
        );
      }
      assert.equal(
        await stateOf(),
        before,
        `state changed by ${r.method} ${r.path}${qs} ${String(r.body).slice(0, 200)}`,
      );
    }),
    { numRuns: HTTP_RUNS, seed: Number(process.env.PLUGBOARD_FUZZ_SEED ?? 8), endOnFailure: true },
  );

  // Raw garbage on the HTTP socket: the server drops it (400 or a close), nothing else.
  const raw = [
    'GARBAGE\r\n\r\n',
    'GET /api/v1/node HTTP/9.9\r\n\r\n',
    `GET /${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    `GET /api/v1/node HTTP/1.1\r\nHost: x\r\n${'X-A: b\r\n'.repeat(5000)}\r\n`,
    'POST /api/v1/faults HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    'POST /api/v1/faults HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\nAuthorization: Bearer x\r\n\r\nfffffffff\r\n',
    '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03',
  ];
  for (const payload of raw) {
    const answer = await new Promise<string>((resolve) => {
      const s = connect(new URL(url).port as unknown as number, '127.0.0.1');
      let got = '';
      s.on('data', (d) => (got += d.toString('latin1')));
      s.on('error', () => resolve(got));
      s.on('close', () => resolve(got));
      s.write(payload);
      setTimeout(() => s.destroy(), 1000).unref();
    });
    const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1];
    assert.ok(
      status === undefined || Number(status) < 500,
      `raw ${JSON.stringify(payload.slice(0, 40))} → ${answer.slice(0, 100)}`,
    );
  }

  // WebSocket: bad upgrade queries are 400 problem+json; any client frame closes the stream.
  const wsBase = `${url.replace('http', 'ws')}/api/v1/stream`;
  let wsCases = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        view: fc.option(
          fc.oneof(fc.constantFrom('full', 'summary', 'FULL', ''), fc.string({ maxLength: 10 })),
          { nil: undefined },
        ),
        since: fc.option(
          fc.oneof(fc.constantFrom('0', '-1', '1e3', '99999999999999999999', 'abc'), fc.nat().map(String)),
          { nil: undefined },
        ),
        frame: fc.oneof(
          fc.string({ maxLength: 100 }).map((s) => ({ data: s, binary: false })),
          fc.uint8Array({ maxLength: 100 }).map((a) => ({ data: Buffer.from(a), binary: true })),
          fc.constant({ data: Buffer.alloc(5000, 1), binary: true }),
        ),
      }),
      async (c) => {
        const q = new URLSearchParams();
        if (c.view !== undefined) q.set('view', c.view);
        if (c.since !== undefined) q.set('since', c.since);
        const outcome = await new Promise<{ status?: number; type?: string; code?: number; opened: boolean }>(
          (resolve) => {
            const ws = new WebSocket(`${wsBase}?${q.toString()}`);
            let opened = false;
            ws.on('unexpected-response', (_req, res) => {
              res.resume();
              resolve({ status: res.statusCode, type: res.headers['content-type'], opened });
              ws.terminate();
            });
            ws.on('open', () => {
              opened = true;
              ws.send(c.frame.data, { binary: c.frame.binary });
            });
            ws.on('error', () => undefined);
            ws.on('close', (code) => resolve({ code, opened }));
          },
        );
        wsCases++;
        if (!outcome.opened) {
          assert.equal(outcome.status, 400, JSON.stringify({ c, outcome }));
          assert.equal(outcome.type, 'application/problem+json');
        } else {
          // 1008: clients must not send; 1009: a frame over the 4 KiB limit.
          assert.ok(outcome.code === 1008 || outcome.code === 1009, JSON.stringify({ code: outcome.code }));
        }
      },
    ),
    { numRuns: WS_RUNS, seed: 8, endOnFailure: true },
  );
  assert.equal(await stateOf(), before);
  assert.equal((await fetch(`${url}/healthz`)).status, 200);
  assert.equal((await api(url, '/api/v1/faults', { headers: bearer() })).status, 200);
  report(t, { scenario: 'http-fuzz', figure: 'HTTP requests fuzzed', value: ran });
  report(t, { scenario: 'http-fuzz', figure: 'raw garbage requests', value: raw.length });
  report(t, { scenario: 'http-fuzz', figure: 'WebSocket cases fuzzed', value: wsCases });
  report(t, {
    scenario: 'http-fuzz',
    figure: 'answers by status',
    value: [...statuses]
      .sort((a, b) => a[0] - b[0])
      .map(([s, n]) => `${s}×${n}`)
      .join(' '),
  });
});
