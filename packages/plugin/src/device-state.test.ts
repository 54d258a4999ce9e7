import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DeviceState } from './device-state.js';
import { SimulatedSource } from './sources/simulated.js';
import type { DeviceSource, PluginDevice } from './types.js';

function setup(options: { replicas?: number; exclude?: string[] } = {}) {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const source = new SimulatedSource({ count: 3, numaNodes: [0], idPrefix: 'gpu' });
  const state = new DeviceState({ source, ...options, now: () => new Date(now) });
  const lists: PluginDevice[][] = [];
  const health: { deviceId: string; health: string }[] = [];
  state.on('devices', (d) => lists.push(d));
  state.on('health', (e) => health.push({ deviceId: e.deviceId, health: e.health }));
  state.attach();
  return { source, state, lists, health, tick: (ms: number) => (now += ms) };
}

describe('DeviceState (fault overlay, exclude, replicas)', () => {
  it('excludes IDs and refuses faults on them', () => {
    const { state } = setup({ exclude: ['gpu-1'] });
    assert.deepEqual(
      state.devices().map((d) => d.id),
      ['gpu-0', 'gpu-2'],
    );
    assert.throws(() => state.injectFault('gpu-1', 'x'), { code: 'not-found' });
    assert.throws(() => state.injectFault('nope', 'x'), {
      code: 'not-found',
      message: /"nope" is not advertised/,
    });
  });

  it('a fault turns a device Unhealthy with reason and transition time; clearing heals it', () => {
    const { state, lists, health, tick } = setup();
    const before = state.devices()[0]!.since;
    tick(1000);
    state.injectFault('gpu-0', 'XID 48');
    const d = state.get('gpu-0')!;
    assert.deepEqual([d.health, d.reason], ['Unhealthy', 'XID 48']);
    assert.notEqual(d.since, before);
    assert.equal(d.since, '2026-01-01T00:00:01.000Z');
    tick(1000);
    state.clearFault('gpu-0');
    assert.deepEqual(
      [state.get('gpu-0')!.health, state.get('gpu-0')!.reason, state.get('gpu-0')!.since],
      ['Healthy', null, '2026-01-01T00:00:02.000Z'],
    );
    assert.deepEqual(health, [
      { deviceId: 'gpu-0', health: 'Unhealthy' },
      { deviceId: 'gpu-0', health: 'Healthy' },
    ]);
    assert.equal(lists.length, 3); // initial + 2 changes
  });

  it('clearing a fault does not heal a device the source reports unhealthy', () => {
    const { state, source } = setup();
    state.injectFault('gpu-2', 'drill');
    source.markUnhealthy('gpu-2', 'ECC');
    state.clearFault('gpu-2');
    assert.deepEqual([state.get('gpu-2')!.health, state.get('gpu-2')!.reason], ['Unhealthy', 'ECC']);
    source.heal('gpu-2');
    assert.equal(state.get('gpu-2')!.health, 'Healthy');
  });

  it('replicas: <id>::<k>, a physical fault marks every replica, a replica fault only itself', () => {
    const { state } = setup({ replicas: 2 });
    assert.deepEqual(
      state.devices().map((d) => d.id),
      ['gpu-0::0', 'gpu-0::1', 'gpu-1::0', 'gpu-1::1', 'gpu-2::0', 'gpu-2::1'],
    );
    assert.equal(state.get('gpu-1::1')!.replicaOf, 'gpu-1');
    state.injectFault('gpu-1', 'thermal');
    assert.deepEqual(
      state
        .devices()
        .filter((d) => d.health === 'Unhealthy')
        .map((d) => d.id),
      ['gpu-1::0', 'gpu-1::1'],
    );
    state.clearFault('gpu-1');
    state.injectFault('gpu-2::1', 'one share');
    assert.deepEqual(
      state
        .devices()
        .filter((d) => d.health === 'Unhealthy')
        .map((d) => d.id),
      ['gpu-2::1'],
    );
    assert.equal(state.physicalId('gpu-2::1'), 'gpu-2');
  });

  it('a fault outlives its device: unplugged it stays held, and it returns Unhealthy in the list that re-adds it', () => {
    const plugged = new Set(['usb-0', 'usb-1']);
    const listeners = new Set<() => void>();
    const source: DeviceSource = {
      kind: 'test',
      start: () => Promise.resolve(),
      stop: () => Promise.resolve(),
      list: () =>
        [...plugged].map((id) => ({
          id,
          health: 'Healthy' as const,
          reason: null,
          numaNodes: [],
          deviceNodes: [],
        })),
      subscribe: (fn) => (listeners.add(fn), () => listeners.delete(fn)),
    };
    const replug = (id: string, on: boolean) => {
      if (on) plugged.add(id);
      else plugged.delete(id);
      for (const fn of listeners) fn();
    };
    for (const replicas of [1, 2]) {
      const state = new DeviceState({ source, replicas });
      const lists: PluginDevice[][] = [];
      state.on('devices', (d) => lists.push(d));
      state.attach();
      state.injectFault('usb-1', 'drill');
      replug('usb-1', false);
      assert.ok(lists.at(-1)!.every((d) => d.id !== 'usb-1' && d.replicaOf !== 'usb-1'));
      assert.deepEqual(
        [...state.faults()],
        [['usb-1', 'drill']],
        'the fault is kept while the device is absent',
      );
      assert.equal(state.present('usb-1'), false);
      replug('usb-1', true);
      const back = lists.at(-1)!.filter((d) => d.id === 'usb-1' || d.replicaOf === 'usb-1');
      assert.equal(back.length, replicas);
      assert.ok(
        back.every((d) => d.health === 'Unhealthy' && d.reason === 'drill'),
        'never listed Healthy on its way back',
      );
      assert.equal(state.present('usb-1'), true);
      // Cleared while absent: it comes back Healthy.
      replug('usb-1', false);
      state.clearFault('usb-1');
      replug('usb-1', true);
      assert.ok(state.devices().every((d) => d.health === 'Healthy'));
      state.detach();
    }
  });

  it('an absent device takes a fault only with absentOk (a restored fault)', () => {
    const { state } = setup();
    assert.throws(() => state.injectFault('gpu-7', 'x'), { code: 'not-found' });
    state.injectFault('gpu-7', 'restored', { absentOk: true });
    assert.equal(state.faults().get('gpu-7'), 'restored');
    assert.equal(state.present('gpu-7'), false);
    state.clearFault('gpu-7');
    assert.equal(state.faults().size, 0);
    assert.throws(() => state.clearFault('gpu-7'), { code: 'not-found' });
  });

  it('no event when nothing changed', () => {
    const { state, lists } = setup();
    state.refresh();
    state.refresh();
    assert.equal(lists.length, 1);
    assert.equal(state.version, 1);
  });
});
