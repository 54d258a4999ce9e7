import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FaultStore, type FaultActuator } from './fault-store.js';
import { scenarioBodySchema, type DeviceState } from '@plugboard/api';
import { ScenarioRunner } from './scenarios.js';
import { waitFor } from '../../test/helpers.js';

function recorder(): FaultActuator & { on: Map<string, string> } {
  const on = new Map<string, string>();
  return { on, inject: (r, d, why) => on.set(`${r}/${d}`, why), clear: (r, d) => on.delete(`${r}/${d}`) };
}

const dir = mkdtempSync(join(tmpdir(), 'pb-faults-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a fault holds the device until its last fault is removed; TTL expiry clears it', async () => {
  const act = recorder();
  const cleared: string[] = [];
  const store = new FaultStore({
    stateDir: null,
    maxActive: 10,
    onCleared: (_f, cause) => cleared.push(cause),
  });
  store.attach(act);
  const a = store.add({ resource: 'r', deviceId: 'd0', reason: 'one' });
  const b = store.add({ resource: 'r', deviceId: 'd0', reason: 'two', ttlSeconds: 1 });
  assert.equal(act.on.get('r/d0'), 'two');
  store.remove(a.id);
  assert.equal(act.on.get('r/d0'), 'two', 'the other fault keeps the device faulted');
  await waitFor('TTL expiry', () => !store.get(b.id), 3000);
  assert.equal(act.on.has('r/d0'), false);
  assert.deepEqual(cleared, ['deleted', 'expired']);
  assert.equal(store.persistence.enabled, false);
  assert.throws(() => {
    for (let i = 0; i < 11; i++) store.add({ resource: 'r', deviceId: `x${i}`, reason: 'r' });
  }, /maxActive/);
  await store.close();
});

test("a fault the plugin refuses is the caller's error and is not kept; a restored one is kept as failed", () => {
  const refusing: FaultActuator = {
    inject: (r, d, _why, options) => {
      if (r === 'gone') throw new Error(`resource ${r} is not served by this gateway`);
      if (!options?.absentOk) throw new Error(`device "${d}" is not advertised by this resource`);
    },
    clear: () => {
      throw new Error('must not be called for a fault the plugin never took');
    },
  };
  const injected: (string | null | undefined)[] = [];
  const store = new FaultStore({
    stateDir: null,
    maxActive: 10,
    onInjected: (f) => injected.push(f.failure),
  });
  const restored = [
    {
      id: 'a',
      resource: 'gone',
      deviceId: 'd',
      reason: 'x',
      createdAt: '',
      expiresAt: null,
      scenarioId: null,
    },
    {
      id: 'b',
      resource: 'r',
      deviceId: 'unplugged',
      reason: 'y',
      createdAt: '',
      expiresAt: null,
      scenarioId: null,
    },
  ] as const;
  store.attach(
    refusing,
    restored.map((f) => ({ ...f, simulated: true as const })),
  );
  assert.equal(store.get('a')!.failure, 'could not be restored: resource gone is not served by this gateway');
  assert.equal(store.get('b')!.failure, null, 'a restored fault may hold a device that is absent now');
  assert.deepEqual(injected, [store.get('a')!.failure, null]);
  assert.throws(
    () => store.add({ resource: 'r', deviceId: 'nope', reason: 'z' }),
    /"nope" is not advertised/,
  );
  assert.equal(store.size, 2, 'the refused fault was not kept');
  assert.ok(store.remove('a'), 'a failed fault can be cleared without touching the plugin');
});

test('active faults persist across restarts; expired ones are cleared on restore', async () => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const clock = () => new Date(now);
  const s1 = new FaultStore({ stateDir: dir, maxActive: 10, now: clock });
  s1.attach(recorder());
  const keep = s1.add({ resource: 'r', deviceId: 'd1', reason: 'keep', ttlSeconds: 3600 });
  s1.add({ resource: 'r', deviceId: 'd2', reason: 'short', ttlSeconds: 5 });
  const forever = s1.add({ resource: 'r', deviceId: 'd3', reason: 'forever' });
  await s1.close();
  assert.equal(
    (JSON.parse(readFileSync(join(dir, 'faults.json'), 'utf8')) as { faults: unknown[] }).faults.length,
    3,
  );

  now += 10_000; // the gateway was down for 10 s: the 5 s fault expired meanwhile
  const act = recorder();
  const s2 = new FaultStore({ stateDir: dir, maxActive: 10, now: clock });
  const loaded = s2.loadPersisted();
  assert.deepEqual(
    loaded.expired.map((f) => f.reason),
    ['short'],
  );
  const causes: string[] = [];
  const s2b = new FaultStore({
    stateDir: dir,
    maxActive: 10,
    now: clock,
    onCleared: (_f, c) => causes.push(c),
  });
  s2b.attach(act, loaded.restored, loaded.expired);
  assert.deepEqual(causes, ['expired-while-down']);
  assert.deepEqual(
    s2b
      .list()
      .map((f) => f.id)
      .sort(),
    [keep.id, forever.id].sort(),
  );
  assert.equal(s2b.get(keep.id)!.expiresAt, keep.expiresAt, 'TTL is kept, not restarted');
  assert.deepEqual([...act.on.keys()].sort(), ['r/d1', 'r/d3']);
  await s2b.close();
  await s2.close();
});

test('an unwritable state dir turns persistence off with a reason, faults still work in memory', async () => {
  const ro = join(dir, 'ro');
  writeFileSync(ro, 'not a directory');
  const store = new FaultStore({ stateDir: join(ro, 'state'), maxActive: 10 });
  assert.equal(store.persistence.enabled, false);
  assert.match(store.persistence.reason!, /not writable/);
  const act = recorder();
  store.attach(act);
  store.add({ resource: 'r', deviceId: 'd', reason: 'x' });
  assert.equal(act.on.size, 1);
  await store.close();
  if (process.getuid?.() !== 0) {
    const locked = mkdtempSync(join(dir, 'locked-'));
    chmodSync(locked, 0o500);
    assert.equal(new FaultStore({ stateDir: locked, maxActive: 1 }).persistence.enabled, false);
  }
});

test('persistence writes off the event loop, in order: a change during a write is written after it', async () => {
  const stateDir = mkdtempSync(join(dir, 'async-'));
  const file = join(stateDir, 'faults.json');
  const onDisk = (): string[] => {
    try {
      return (JSON.parse(readFileSync(file, 'utf8')) as { faults: { deviceId: string }[] }).faults.map(
        (f) => f.deviceId,
      );
    } catch {
      return [];
    }
  };
  const store = new FaultStore({ stateDir, maxActive: 100 });
  store.attach(recorder());
  store.add({ resource: 'r', deviceId: 'a', reason: 'x' });
  assert.deepEqual(onDisk(), [], 'nothing is written synchronously by add()');
  await waitFor('the first write', () => onDisk().length === 1, 3000, 5);
  // A burst: one write (or two) for all of it, never an older list after a newer one.
  const ids = Array.from({ length: 30 }, (_, i) => `b${i}`);
  for (const id of ids) store.add({ resource: 'r', deviceId: id, reason: 'x' });
  const first = store.list()[0]!;
  store.remove(first.id);
  await store.close();
  assert.deepEqual(onDisk().sort(), [...ids].sort(), 'close() flushes the latest list');
  assert.equal(store.persistence.enabled, true);
});

function devices(): DeviceState[] {
  return Array.from({ length: 8 }, (_, i) => ({
    key: `r/g${i}`,
    resource: 'r',
    id: `g${i}`,
    health: 'Healthy' as const,
    reason: null,
    since: '',
    numaNodes: [i < 4 ? 0 : 1],
    replicaOf: null,
    kubeletHealth: 'Healthy' as const,
    fault: null,
    faulted: false,
    allocation: null,
  }));
}

test('scenario bodies: inline steps and timeline documents (YAML durations), with errors naming fields', () => {
  const inline = scenarioBodySchema.parse({ action: 'fail-numa-node', numaNode: 1, ttlSeconds: 30 });
  assert.equal(inline.steps[0]!.action, 'fail-numa-node');
  assert.equal(inline.ttlSeconds, 30);
  const doc = scenarioBodySchema.parse({
    name: 'numa-outage',
    steps: [
      { at: '10s', node: 'gpu-node-a', action: 'fail-numa-node', numaNode: 1 },
      { at: '40s', node: 'gpu-node-a', action: 'heal-numa-node', numaNode: 1 },
      { at: '1m', node: 'gpu-node-b', action: 'restart-kubelet' },
    ],
  });
  assert.deepEqual(
    doc.steps.map((s) => s.at),
    [10_000, 40_000, 60_000],
  );
  const bad = scenarioBodySchema.safeParse({
    action: 'flap-device',
    resource: 'r',
    deviceId: 'g',
    ttlSeconds: 5,
  });
  assert.equal(bad.success, false);
  assert.match(JSON.stringify(bad.error?.issues), /periodMs/);
  assert.equal(scenarioBodySchema.safeParse({ steps: [{ at: 'soon', action: 'heal-all' }] }).success, false);
});

test('scenario runner: NUMA outage, random devices (seeded), flap, node filter, stop clears', async () => {
  const act = recorder();
  const store = new FaultStore({ stateDir: null, maxActive: 100 });
  store.attach(act);
  const runner = new ScenarioRunner({ nodeName: 'gpu-node-a', faults: store, devices });
  const s = runner.start(
    scenarioBodySchema.parse({
      steps: [
        { action: 'fail-numa-node', numaNode: 1 },
        { action: 'restart-kubelet', node: 'gpu-node-b' },
        { at: '50ms', action: 'heal-numa-node', numaNode: 1 },
      ],
      ttlSeconds: 60,
    }),
  );
  assert.deepEqual([...act.on.keys()].sort(), ['r/g4', 'r/g5', 'r/g6', 'r/g7']);
  assert.equal(runner.get(s.id)!.steps[1]!.status, 'skipped');
  await waitFor('heal step', () => act.on.size === 0, 2000);
  assert.equal(runner.stop(s.id), true);

  const pick = (seed: number) => {
    const r = runner.start(
      scenarioBodySchema.parse({ action: 'fail-devices', resource: 'r', count: 3, seed, ttlSeconds: 60 }),
    );
    const ids = [...act.on.keys()].sort();
    runner.stop(r.id);
    return ids;
  };
  assert.equal(pick(7).length, 3);
  assert.deepEqual(pick(7), pick(7));
  assert.equal(act.on.size, 0, 'stop clears the scenario faults');

  const flap = runner.start(
    scenarioBodySchema.parse({
      action: 'flap-device',
      resource: 'r',
      deviceId: 'g2',
      periodMs: 20,
      ttlSeconds: 60,
    }),
  );
  let transitions = 0;
  let last = act.on.has('r/g2');
  await waitFor(
    '4 flaps',
    () => {
      const nowOn = act.on.has('r/g2');
      if (nowOn !== last) transitions++;
      last = nowOn;
      return transitions >= 4;
    },
    3000,
  );
  runner.stop(flap.id);
  assert.equal(act.on.size, 0);
  const ttl = runner.start(
    scenarioBodySchema.parse({ action: 'fail-devices', resource: 'r', deviceIds: ['g0'], ttlSeconds: 1 }),
  );
  assert.equal(act.on.size, 1);
  await waitFor('scenario TTL', () => !runner.get(ttl.id) && act.on.size === 0, 3000);
  runner.close();
  await store.close();
});

test('DRA faults: the taint travels to the actuator, is persisted and restored, follows the remaining fault; a slice name is kept as the source ID', async () => {
  const calls: string[] = [];
  const act: FaultActuator = {
    inject: (r, d, why, o) =>
      void calls.push(`inject ${r}/${d} ${why} ${o?.taint ?? '-'}${o?.absentOk ? ' absentOk' : ''}`),
    clear: (r, d) => void calls.push(`clear ${r}/${d}`),
    resolve: (_r, d) => (d === '0000-3b-00-0-5d1a2c' ? '0000:3b:00.0' : d),
  };
  const stateDir = mkdtempSync(join(dir, 'dra-'));
  const s1 = new FaultStore({ stateDir, maxActive: 10 });
  s1.attach(act);
  const byName = s1.add({
    resource: 'gpu.example.com',
    deviceId: '0000-3b-00-0-5d1a2c',
    reason: 'lost',
    taint: 'NoExecute',
  });
  assert.equal(byName.deviceId, '0000:3b:00.0');
  assert.equal(byName.taint, 'NoExecute');
  const plain = s1.add({ resource: 'gpu.example.com', deviceId: '0000:3b:00.0', reason: 'ecc' });
  assert.equal(plain.taint, undefined, 'no taint key unless asked for');
  assert.deepEqual(s1.list({ resource: 'gpu.example.com', deviceId: '0000-3b-00-0-5d1a2c' }).length, 2);
  s1.remove(plain.id);
  // The remaining fault asked for a taint: re-applied with it.
  assert.equal(calls.at(-1), 'inject gpu.example.com/0000:3b:00.0 lost NoExecute absentOk');
  await s1.close();

  calls.length = 0;
  const s2 = new FaultStore({ stateDir, maxActive: 10 });
  const loaded = s2.loadPersisted();
  s2.attach(act, loaded.restored, loaded.expired);
  assert.deepEqual(calls, ['inject gpu.example.com/0000:3b:00.0 lost NoExecute absentOk']);
  assert.equal(s2.get(byName.id)?.taint, 'NoExecute');
  await s2.close();
});

test('scenario runner: DRA devices fail with the step taint; device-plugin devices of the same step without it', () => {
  const taints = new Map<string, string | null>();
  const act: FaultActuator = {
    inject: (r, d, _why, o) => void taints.set(`${r}/${d}`, o?.taint ?? null),
    clear: (r, d) => void taints.delete(`${r}/${d}`),
  };
  const store = new FaultStore({ stateDir: null, maxActive: 100 });
  store.attach(act);
  const mixed = [
    { resource: 'a/gpu', id: 'g0', replicaOf: null, numaNodes: [0], health: 'Healthy' as const },
    {
      resource: 'gpu.example.com',
      id: 'gpu-0',
      replicaOf: null,
      numaNodes: [0],
      health: 'Healthy' as const,
      dra: true,
    },
    {
      resource: 'gpu.example.com',
      id: 'gpu-1',
      replicaOf: null,
      numaNodes: [1],
      health: 'Healthy' as const,
      dra: true,
    },
  ];
  const runner = new ScenarioRunner({ nodeName: 'n', faults: store, devices: () => mixed });
  runner.start(
    scenarioBodySchema.parse({ action: 'fail-numa-node', numaNode: 0, taint: 'NoSchedule', ttlSeconds: 60 }),
  );
  assert.deepEqual(Object.fromEntries(taints), { 'a/gpu/g0': null, 'gpu.example.com/gpu-0': 'NoSchedule' });
  runner.stopAll();
  runner.start(
    scenarioBodySchema.parse({
      action: 'fail-devices',
      resource: 'gpu.example.com',
      count: 2,
      taint: 'NoExecute',
      ttlSeconds: 60,
    }),
  );
  assert.deepEqual(Object.fromEntries(taints), {
    'gpu.example.com/gpu-0': 'NoExecute',
    'gpu.example.com/gpu-1': 'NoExecute',
  });
  runner.close();
});
