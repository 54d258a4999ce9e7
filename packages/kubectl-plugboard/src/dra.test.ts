// The cells of DRA devices and claims, and the changes `watch` finds between two snapshots.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DraClaimRequest, DraState } from '@plugboard/api';
import { claimRequest, draClaim, draDevice, draNode, DRIVER } from '../test/fixtures.js';
import {
  changeText,
  claimDevicesText,
  claimPodsText,
  claimReasonText,
  draChanges,
  draHolderText,
  requestText,
  taintsText,
} from './dra.js';

describe('DRA cells', () => {
  const cases: [string, DraClaimRequest, string][] = [
    ['exact count', claimRequest({ count: 2 }), `gpu:2 ${DRIVER}`],
    ['all devices', claimRequest({ allocationMode: 'All' }), `gpu:all ${DRIVER}`],
    ['admin access', claimRequest({ adminAccess: true }), `gpu:1 ${DRIVER} admin`],
    [
      'first available',
      claimRequest({
        deviceClassName: null,
        firstAvailable: [
          {
            name: 'big',
            deviceClassName: 'big.example',
            allocationMode: 'ExactCount',
            count: 1,
            selectors: [],
          },
          { name: 'small', deviceClassName: 'small.example', allocationMode: 'All', count: 0, selectors: [] },
        ],
      }),
      'gpu:first-of(big:1 big.example|small:all small.example)',
    ],
  ];
  for (const [what, r, text] of cases)
    it(`request: ${what} → ${text}`, () => assert.equal(requestText(r), text));

  it('taints: distinct effects, "-" when none', () => {
    const t = (effect: 'NoSchedule' | 'NoExecute', source: string) => ({
      key: `${DRIVER}/unhealthy`,
      value: 'fault',
      effect,
      timeAdded: null,
      source,
    });
    assert.equal(taintsText(draDevice('n', 'gpu-0')), '-');
    assert.equal(
      taintsText(
        draDevice('n', 'gpu-0', {
          taints: [
            t('NoSchedule', 'ResourceSlice'),
            t('NoExecute', 'DeviceTaintRule r'),
            t('NoExecute', 'x'),
          ],
        }),
      ),
      'NoSchedule,NoExecute',
    );
  });

  it('claim devices mark unhealthy ones with "!" and name the driver only when there are two', () => {
    const dra = draNode().dra!;
    const claim = draClaim('ml', 'c', {
      devices: ['gpu-0', 'gpu-1'].map((device) => ({
        request: 'gpu',
        driver: DRIVER,
        pool: 'node-a',
        device,
        deviceKey: `${DRIVER}/node-a/${device}`,
        adminAccess: false,
      })),
    });
    assert.equal(claimDevicesText(claim, dra), 'gpu-0,gpu-1!');
    const nic = {
      ...claim.devices[0]!,
      driver: 'nic.example',
      device: 'eth0',
      deviceKey: 'nic.example/node-a/eth0',
    };
    assert.equal(
      claimDevicesText({ devices: [claim.devices[0]!, nic] }, dra),
      `${DRIVER}/gpu-0,nic.example/eth0`,
    );
    assert.equal(claimDevicesText(draClaim('ml', 'none'), dra), '-');
  });

  it("claim pods drop the claim's own namespace; reasons say pending, waiting or deleting", () => {
    assert.equal(claimPodsText(draClaim('ml', 'c', { reservedFor: ['ml/a', 'ml/b'] })), 'a,b');
    assert.equal(claimPodsText(draClaim('ml', 'c')), '-');
    assert.equal(claimReasonText(draClaim('ml', 'c', { pendingReason: 'no devices' })), 'no devices');
    assert.equal(claimReasonText(draClaim('ml', 'c')), 'waiting for the scheduler');
    assert.equal(claimReasonText(draClaim('ml', 'c', { phase: 'prepared', deleting: true })), 'deleting');
    assert.equal(claimReasonText(draClaim('ml', 'c', { phase: 'prepared' })), '-');
  });

  it('device holders: the claims and the pods they are reserved for', () => {
    const dra = draNode().dra!;
    assert.deepEqual(draHolderText(dra.devices[`${DRIVER}/node-a/gpu-0`]!), {
      claim: 'ml/trainer-gpu',
      pod: 'ml/trainer',
    });
    assert.deepEqual(draHolderText(dra.devices[`${DRIVER}/node-a/gpu-2`]!), { claim: '-', pod: '-' });
  });
});

describe('draChanges', () => {
  const gpu = (n: number) => `${DRIVER}/node-a/gpu-${n}`;
  const base = draNode().dra!;
  const healed = (): DraState => ({
    ...base,
    devices: {
      ...base.devices,
      [gpu(1)]: {
        ...base.devices[gpu(1)]!,
        health: 'Healthy',
        reason: 'fault cleared',
        kubeletHealth: 'Healthy',
        taints: [],
        fault: null,
      },
    },
  });

  it('the first snapshot is the baseline; an unchanged section is no change', () => {
    assert.deepEqual(draChanges(undefined, base), []);
    assert.deepEqual(draChanges(base, base), []);
    assert.deepEqual(draChanges(base, draNode().dra), [], 'equal copies (a re-sent snapshot) too');
    assert.deepEqual(draChanges(base, undefined), []);
  });

  it('a healed device: health (with the reason), what the kubelet was told, taints, fault', () => {
    const changes = draChanges(base, healed());
    assert.deepEqual(changes, [
      {
        kind: 'device',
        key: gpu(1),
        field: 'health',
        from: 'Unhealthy',
        to: 'Healthy',
        reason: 'fault cleared',
      },
      { kind: 'device', key: gpu(1), field: 'kubeletHealth', from: 'Unhealthy', to: 'Healthy' },
      { kind: 'device', key: gpu(1), field: 'taints', from: 'NoExecute', to: '-' },
      { kind: 'device', key: gpu(1), field: 'fault', from: 'active', to: '-' },
    ]);
    assert.equal(
      changeText('node-a', changes[0]!),
      `node-a device ${gpu(1)}: health Unhealthy → Healthy (fault cleared)`,
    );
    assert.equal(
      changeText('node-a', changes[1]!),
      `node-a device ${gpu(1)}: kubelet told Unhealthy → Healthy`,
    );
  });

  it('claims: a phase change, deletion, a new claim and one that is gone', () => {
    const { 'ml/waiter-gpu': waiter, 'ml/trainer-gpu': trainer } = base.claims;
    const next: DraState = {
      ...base,
      claims: {
        'ml/trainer-gpu': { ...trainer!, deleting: true },
        'ml/waiter-gpu': { ...waiter!, phase: 'reserved', pendingReason: null },
        'ml/new': draClaim('ml', 'new', { pendingReason: 'no devices' }),
      },
    };
    const changes = draChanges(base, next);
    assert.deepEqual(changes, [
      { kind: 'claim', key: 'ml/trainer-gpu', field: 'deleting', from: 'no', to: 'yes' },
      { kind: 'claim', key: 'ml/waiter-gpu', field: 'phase', from: 'pending', to: 'reserved' },
      { kind: 'claim', key: 'ml/new', field: 'present', from: null, to: 'pending', reason: 'no devices' },
    ]);
    assert.equal(changeText('node-a', changes[1]!), 'node-a claim ml/waiter-gpu: phase pending → reserved');
    assert.equal(changeText('node-a', changes[2]!), 'node-a claim ml/new: new (pending)');
    const gone = draChanges(next, { ...next, claims: {} });
    assert.equal(gone.length, 3);
    assert.equal(changeText('node-a', gone[0]!), 'node-a claim ml/trainer-gpu: gone');
  });
});
