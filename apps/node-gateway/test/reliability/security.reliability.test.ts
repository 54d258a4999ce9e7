// Security of the gateway's mutations. Every mutating endpoint: no token → 401, a token whose
// SubjectAccessReview is denied → 403 naming the reason, faults disabled → 403 saying how to enable
// them; the stream refuses any client message (1008) and browser Origins not on the allow-list;
// mutations are rate-limited per client (429 + Retry-After) before any TokenReview; and no token,
// secret or request body reaches the logs. kubelet-sim's API slice has no TokenReview or
// SubjectAccessReview, so the API proxy in front of it answers just those two (a tiny fake, below);
// everything else is the sim.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { report } from './figures.js';
import { KubeApiProxy } from './kube-proxy.js';
import {
  api,
  capturedLogger,
  GPU,
  JSON_TYPE,
  snapshotOf,
  startRig,
  TOKEN,
  waitFor,
  type ApiAnswer,
} from './harness.js';

const ALICE = 'alice-token-a1b2c3d4e5f6a7b8c9d0'; // authenticated, allowed
const BOB = 'bob-token-0f9e8d7c6b5a4f3e2d1c'; // authenticated, SubjectAccessReview denies
const MALLORY = 'mallory-token-5555555555555555'; // unknown to the API server
const BODY_MARKER = 'body-marker-7d1e0c55c1b04b7e';

interface Review {
  spec: { token?: string; user?: string; resourceAttributes?: Record<string, string> };
}

/** TokenReview + SubjectAccessReview, the two endpoints kubelet-sim's API slice lacks. */
function authApi(reviews: Review[]) {
  return (req: IncomingMessage, body: string, res: ServerResponse): boolean => {
    const send = (value: unknown) =>
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (req.method === 'POST' && req.url?.startsWith('/apis/authentication.k8s.io/v1/tokenreviews')) {
      const review = JSON.parse(body) as Review;
      reviews.push(review);
      const user = review.spec.token === ALICE ? 'alice' : review.spec.token === BOB ? 'bob' : null;
      send({
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        status: user
          ? { authenticated: true, user: { username: user, groups: ['system:authenticated'] } }
          : { authenticated: false, error: 'invalid bearer token' },
      });
      return true;
    }
    if (req.method === 'POST' && req.url?.startsWith('/apis/authorization.k8s.io/v1/subjectaccessreviews')) {
      const review = JSON.parse(body) as Review;
      reviews.push(review);
      const allowed = review.spec.user === 'alice';
      send({
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        status: {
          allowed,
          reason: allowed
            ? 'RBAC: allowed by ClusterRoleBinding "plugboard-operators"'
            : 'RBAC: no rule allows create on faults.plugboard.io',
        },
      });
      return true;
    }
    return false;
  };
}

/** Every mutating endpoint, with a body that would succeed for an authorized caller. */
function mutations(faultId: string, scenarioId: string): { name: string; path: string; init: RequestInit }[] {
  return [
    {
      name: 'POST /api/v1/faults',
      path: '/api/v1/faults',
      init: {
        method: 'POST',
        headers: JSON_TYPE,
        body: JSON.stringify({ resource: GPU, deviceId: 'gpu-1', reason: `drill ${BODY_MARKER}` }),
      },
    },
    { name: 'DELETE /api/v1/faults/{id}', path: `/api/v1/faults/${faultId}`, init: { method: 'DELETE' } },
    {
      name: 'POST /api/v1/scenarios',
      path: '/api/v1/scenarios',
      init: {
        method: 'POST',
        headers: JSON_TYPE,
        body: JSON.stringify({ action: 'fail-devices', resource: GPU, count: 1, ttlSeconds: 60 }),
      },
    },
    {
      name: 'DELETE /api/v1/scenarios/{id}',
      path: `/api/v1/scenarios/${scenarioId}`,
      init: { method: 'DELETE' },
    },
    { name: 'DELETE /api/v1/scenarios', path: '/api/v1/scenarios', init: { method: 'DELETE' } },
  ];
}

/** Admitting a pod through the gateway (kubelet-sim's placement API): a mutation like the faults. */
const podAdmission = {
  name: 'POST /api/v1/pods',
  path: '/api/v1/pods',
  init: {
    method: 'POST',
    headers: JSON_TYPE,
    body: JSON.stringify({
      metadata: { name: 'security-check', namespace: 'default' },
      spec: { containers: [{ name: 'main', resources: { limits: { [GPU]: 1 } } }] },
    }),
  },
};

const withAuth = (init: RequestInit, authorization?: string): RequestInit => ({
  ...init,
  headers: { ...(init.headers as Record<string, string>), ...(authorization ? { authorization } : {}) },
});

const isProblem = (r: ApiAnswer, status: number, type: string) =>
  r.status === status &&
  r.type === 'application/problem+json' &&
  r.body?.type === `urn:plugboard:problem:${type}`;

const state = async (url: string) => {
  const s = await snapshotOf(url);
  const scenarios = (await api(url, '/api/v1/scenarios')).body!.items;
  return JSON.stringify({
    faults: s.faults,
    pods: Object.keys(s.pods),
    scenarios,
    health: Object.values(s.devices).map((d) => d.health),
  });
};

function wsClose(
  url: string,
  options: { origin?: string; send?: string } = {},
): Promise<{ opened: boolean; code: number; status?: number }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, options.origin ? { origin: options.origin } : {});
    let opened = false;
    ws.on('unexpected-response', (_req, res) => {
      resolve({ opened, code: 0, status: res.statusCode });
      res.resume();
      ws.terminate();
    });
    ws.on('open', () => {
      opened = true;
      if (options.send !== undefined) ws.send(options.send);
      else ws.close(1000);
    });
    ws.on('error', () => undefined);
    ws.on('close', (code) => resolve({ opened, code }));
  });
}

test('every mutation: 401 without a token, 403 when SubjectAccessReview denies, 403 with faults disabled; stream and Origin refusals; 429 + Retry-After; clean logs', async (t) => {
  const reviews: Review[] = [];
  let proxy!: KubeApiProxy;
  const { logger, lines } = capturedLogger('trace');
  const rig = await startRig({
    logger,
    gateway: async (sim, dir) => {
      proxy = new KubeApiProxy(sim.url, { extra: authApi(reviews) });
      await proxy.start();
      return {
        kube: {
          mode: 'kubeconfig',
          kubeconfig: proxy.writeKubeconfig(sim.kubeconfigPath, join(dir, 'proxy-kubeconfig')),
        },
        auth: { kubernetes: { enabled: true } },
        stream: { allowedOrigins: ['https://dash.example'] },
        http: { maxBodyBytes: 65536, mutationRateLimit: { perSecond: 1000, burst: 1000 } },
      };
    },
  });
  t.after(async () => {
    await rig.stop();
    await proxy.stop();
  });
  const url = rig.gw.url;
  const alice = `Bearer ${ALICE}`;
  // Created by an authorized caller; its reason is the device's health reason from then on (logged
  // and shown, like any health reason). The refused and invalid requests below carry BODY_MARKER.
  const fault = await api(
    url,
    '/api/v1/faults',
    withAuth(
      {
        method: 'POST',
        headers: JSON_TYPE,
        body: JSON.stringify({ resource: GPU, deviceId: 'gpu-1', reason: 'drill' }),
      },
      alice,
    ),
  );
  assert.equal(fault.status, 201, fault.text);
  const scenario = await api(url, '/api/v1/scenarios', withAuth(mutations('x', 'y')[2]!.init, alice));
  assert.equal(scenario.status, 201, scenario.text);
  const endpoints = mutations(fault.body!.id as string, scenario.body!.id as string);
  const sar = reviews.find((r) => r.spec.resourceAttributes);
  assert.deepEqual(sar?.spec.resourceAttributes, {
    verb: 'create',
    group: 'plugboard.io',
    resource: 'faults',
    name: rig.sim.nodeName,
  });

  const before = await state(url);
  let refused = 0;
  for (const e of [...endpoints, podAdmission]) {
    for (const [who, authorization, status, type, detail] of [
      ['no token', undefined, 401, 'unauthorized', /needs Authorization: Bearer/],
      [
        'not a bearer token',
        `Basic ${Buffer.from(`admin:${MALLORY}`).toString('base64')}`,
        401,
        'unauthorized',
        /must be "Bearer <token>"/,
      ],
      ['unknown token', `Bearer ${MALLORY}`, 401, 'unauthorized', /did not authenticate/],
      [
        'token lacking rights',
        `Bearer ${BOB}`,
        403,
        'forbidden',
        /bob may not do this: RBAC: no rule allows create on faults\.plugboard\.io/,
      ],
    ] as const) {
      const r = await api(url, e.path, withAuth(e.init, authorization));
      assert.ok(isProblem(r, status, type), `${e.name} with ${who}: ${r.status} ${r.text}`);
      assert.match(String(r.body!.detail), detail, `${e.name} with ${who}`);
      if (status === 401) assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer/);
      refused++;
    }
  }
  // Invalid bodies from an authorized caller: 422 (unknown field) and 413 (oversized), body not echoed to logs.
  const invalid = await api(
    url,
    '/api/v1/faults',
    withAuth(
      {
        method: 'POST',
        headers: JSON_TYPE,
        body: JSON.stringify({ resource: GPU, deviceId: 'gpu-2', reason: 'x', secret: BODY_MARKER }),
      },
      alice,
    ),
  );
  assert.ok(isProblem(invalid, 422, 'invalid-body'), invalid.text);
  const oversized = await api(
    url,
    '/api/v1/faults',
    withAuth(
      {
        method: 'POST',
        headers: JSON_TYPE,
        body: JSON.stringify({ resource: GPU, deviceId: 'gpu-2', reason: BODY_MARKER.repeat(3000) }),
      },
      alice,
    ),
  );
  assert.ok(isProblem(oversized, 413, 'payload-too-large'), oversized.text);
  assert.equal(await state(url), before, 'refused mutations changed nothing');

  // Mutation over the stream: the stream is read-only, any frame closes it with 1008.
  const streamUrl = `${url.replace('http', 'ws')}/api/v1/stream`;
  for (const frame of [
    '{"op":"inject","resource":"plugboard.example/gpu","deviceId":"gpu-0"}',
    `Bearer ${ALICE}`,
    '',
  ]) {
    const r = await wsClose(streamUrl, { send: frame });
    assert.deepEqual(r, { opened: true, code: 1008 });
  }
  assert.equal(await state(url), before, 'stream frames changed nothing');
  // Origin allow-list.
  assert.deepEqual(await wsClose(streamUrl, { origin: 'https://evil.example' }), {
    opened: false,
    code: 0,
    status: 403,
  });
  assert.equal((await wsClose(streamUrl, { origin: 'https://dash.example' })).opened, true);
  assert.equal((await wsClose(streamUrl, { origin: url })).opened, true, 'same origin');
  assert.equal((await wsClose(streamUrl)).opened, true, 'no Origin (not a browser)');

  // The authorized caller still can: admit the pod (once the kubelet-sim control API is found
  // through the proxy), then clean up through the API.
  const admitted = await waitFor('pod admission by an authorized caller', async () => {
    const r = await api(url, podAdmission.path, withAuth(podAdmission.init, alice));
    return r.status === 201 ? r : null;
  });
  assert.equal(admitted.status, 201);
  // The authorized caller still can: clean up through the API.
  assert.equal((await api(url, endpoints[1]!.path, withAuth(endpoints[1]!.init, alice))).status, 204);
  assert.equal((await api(url, endpoints[4]!.path, withAuth(endpoints[4]!.init, alice))).status, 204);

  // Faults disabled (static token this time): 403 with the reason, for every mutating endpoint.
  await rig.gw.stop();
  const off = await rig.startGateway({ kube: { mode: 'disabled' }, faults: { enabled: false } }, logger);
  for (const e of mutations('some-id', 'some-id')) {
    const r = await api(off.url, e.path, withAuth(e.init, `Bearer ${TOKEN}`));
    assert.ok(isProblem(r, 403, 'faults-disabled'), `${e.name}: ${r.status} ${r.text}`);
    assert.match(
      String(r.body!.detail),
      /fault injection is disabled on this gateway \(set gateway\.faults\.enabled: true or --enable-faults\)/,
    );
    refused++;
  }
  // Rate limit: applied per client before authorization, so a flood costs no TokenReview. One token
  // every 1,000 s: at 0.5 per second a token came back while six requests took 2 s under load.
  await off.stop();
  const limited = await rig.startGateway(
    {
      kube: { mode: 'disabled' },
      http: { maxBodyBytes: 65536, mutationRateLimit: { perSecond: 0.001, burst: 3 } },
    },
    logger,
  );
  const answers: ApiAnswer[] = [];
  const plain = {
    method: 'POST',
    headers: JSON_TYPE,
    body: JSON.stringify({ resource: GPU, deviceId: 'gpu-3', reason: 'drill' }),
  };
  for (let i = 0; i < 6; i++)
    answers.push(
      await api(limited.url, '/api/v1/faults', withAuth(plain, i % 2 ? undefined : `Bearer ${TOKEN}`)),
    );
  assert.deepEqual(
    answers.map((a) => a.status),
    [201, 401, 201, 429, 429, 429],
  );
  const tooMany = answers[3]!;
  assert.ok(isProblem(tooMany, 429, 'rate-limited'), tooMany.text);
  assert.match(tooMany.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
  assert.match(String(tooMany.body!.detail), /gateway\.http\.mutationRateLimit/);
  assert.equal((await api(limited.url, '/api/v1/faults')).status, 200, 'reads are not limited');

  // Logs: no token, no secret, no request body.
  await waitFor('logs flushed', () => lines.length > 0);
  const text = lines.join('');
  for (const secret of [
    ALICE,
    BOB,
    MALLORY,
    TOKEN,
    'Bearer ',
    BODY_MARKER,
    Buffer.from(`admin:${MALLORY}`).toString('base64'),
  ]) {
    assert.ok(!text.includes(secret), `the logs contain ${secret.slice(0, 12)}…`);
  }
  assert.ok(
    lines.some((l) => l.includes('"by":"alice"')),
    'who did it is logged (by identity, not token)',
  );
  report(t, {
    scenario: 'security',
    figure: 'refused mutations (401/403) with no state change',
    value: refused,
  });
  report(t, {
    scenario: 'security',
    figure: 'stream frames refused (1008) / foreign Origins refused (403)',
    value: '3 / 1',
  });
  report(t, { scenario: 'security', figure: 'log lines scanned for secrets', value: lines.length });
});
