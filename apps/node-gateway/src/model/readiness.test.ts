import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readiness } from './readiness.js';
import { T0, registeredAtT0 } from './test-fixtures.js';
import type { DraDriverState, DraRegistrationPhase, RegistrationState, ResourceState } from '@plugboard/api';

const T1 = '2026-01-01T00:05:00.000Z';

function resource(name: string, registration: Partial<RegistrationState>): ResourceState {
  return {
    name,
    kubelet: { capacity: 1, allocatable: 1, allocated: 0, free: 1, healthy: 1, unhealthy: 0 },
    apiServer: null,
    registration: { ...registeredAtT0, ...registration },
    replicas: 1,
    deviceKeys: [],
  };
}

const never = { registeredAt: null, lastListAndWatchSend: null };
const waiting = {
  phase: 'waiting-for-kubelet' as const,
  waitingSince: T1,
  error: 'the kubelet closed the ListAndWatch stream',
};

for (const [what, resources, ready, detail] of [
  [
    'every plugin registered',
    [resource('a/gpu', {}), resource('a/nic', {})],
    true,
    /^all plugins registered/,
  ],
  ['no plugins at all', [], true, /^all plugins registered/],
  [
    'a plugin not registered since start',
    [
      resource('a/gpu', {}),
      resource('a/nic', { ...never, phase: 'registering', error: 'kubelet socket x not found' }),
    ],
    false,
    /^not registered with the kubelet: a\/nic \(registering: kubelet socket x not found\)$/,
  ],
  [
    'a plugin the kubelet let go of: still ready, named with since when and why',
    [resource('a/gpu', waiting), resource('a/nic', {})],
    true,
    /^ready; not held by the kubelet right now, .*: a\/gpu \(waiting-for-kubelet since 2026-01-01T00:05:00.000Z: the kubelet closed the ListAndWatch stream\)$/,
  ],
  [
    'registering again after a kubelet restart: still ready',
    [resource('a/gpu', { phase: 'registering', waitingSince: T1 })],
    true,
    /^ready; .*a\/gpu \(registering\)$/,
  ],
  [
    'a kubelet refusing a plugin that was registered before',
    [resource('a/gpu', { phase: 'failed', error: 'Register failed: resource name conflict' })],
    false,
    /a\/gpu \(failed: Register failed: resource name conflict\)/,
  ],
  ['stopped', [resource('a/gpu', { phase: 'stopped' })], false, /a\/gpu \(stopped\)/],
] as const) {
  test(`readiness: ${what}`, () => {
    const r = readiness(resources);
    assert.equal(r.ready, ready);
    assert.match(r.detail, detail);
  });
}

test('readiness: the DRA drivers the gateway runs count like plugins; drivers seen only in slices do not', () => {
  const driver = (
    name: string,
    phase: DraRegistrationPhase,
    registeredAt: string | null,
  ): DraDriverState => ({
    name,
    inProcess: true,
    registration: { phase, registeredAt, error: null },
    healthStreams: 0,
    publication: null,
    pools: {},
    counts: { published: 0, usable: 0, allocated: 0, free: 0, unhealthy: 0, tainted: 0 },
  });
  const elsewhere = { ...driver('nic.example.com', 'starting', null), inProcess: false, registration: null };
  const gpu = [resource('a/gpu', {})];
  assert.deepEqual(readiness(gpu, [driver('gpu.example.com', 'registering', null), elsewhere]), {
    ready: false,
    detail: 'not registered with the kubelet: DRA driver gpu.example.com (registering)',
  });
  assert.equal(readiness(gpu, [driver('gpu.example.com', 'registered', T0), elsewhere]).ready, true);
  const again = readiness(gpu, [driver('gpu.example.com', 'registering', T0)]);
  assert.equal(again.ready, true, 'registering again after a kubelet restart');
  assert.match(again.detail, /DRA driver gpu\.example\.com \(registering\)$/);
});
