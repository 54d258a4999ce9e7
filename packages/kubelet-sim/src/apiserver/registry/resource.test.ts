// The DeviceTaintRule strategy through the generic store (RestStorage): timeAdded defaulted on
// create and update and bumped when the effect changes (pkg/registry/resource/devicetaintrule
// strategy.go PrepareForUpdate), the status reset on create and kept on update, the generation, a
// PUT without resourceVersion refused (AllowUnconditionalUpdate false for v1) while a patch is not,
// and a delete answered with a Status. The ResourceSlice strategy: every device taint's timeAdded
// defaulted on create, update and patch (SetDefaults_DeviceTaint), none taken from the stored slice.
// Both store a given timeAdded as metav1.Time encodes it: UTC, whole seconds.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HttpError } from '../http.js';
import { ObjectStore, ResourceVersionClock, type KubeObject } from '../object-store.js';
import { findResource } from '../resources.js';
import { RestStorage } from '../rest-storage.js';
import { resourceStrategies } from './resource.js';

function storage(resource = 'devicetaintrules'): RestStorage {
  const info = findResource('resource.k8s.io', 'v1', resource);
  assert.ok(info, `${resource} is served`);
  const store = new ObjectStore(info.kind, `${info.kind}List`, false, new ResourceVersionClock(), 10);
  const strategy = resourceStrategies().get(`resource.k8s.io/${resource}`);
  assert.ok(strategy);
  return new RestStorage(info, store, strategy);
}

const body = (effect: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'resource.k8s.io/v1',
  kind: 'DeviceTaintRule',
  metadata: { name: 'gpu-maintenance' },
  spec: {
    deviceSelector: { driver: 'gpu.example.com' },
    taint: { key: 'example.com/maintenance', effect, ...extra },
  },
  status: {
    conditions: [
      {
        type: 'EvictionInProgress',
        status: 'True',
        reason: 'Sent',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ],
  },
});
const taintOf = (o: unknown) => (o as { spec: { taint: Record<string, unknown> } }).spec.taint;
const WHOLE_SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

describe('DeviceTaintRule strategy', () => {
  it('create: timeAdded defaulted to now in whole seconds, a given one kept, status dropped, generation 1', () => {
    const s = storage();
    const created = s.create(undefined, body('NoSchedule'));
    assert.match(String(taintOf(created)['timeAdded']), WHOLE_SECONDS);
    assert.ok(Math.abs(Date.parse(String(taintOf(created)['timeAdded'])) - Date.now()) < 60_000);
    assert.equal(created['status'], undefined);
    assert.equal(created.metadata['generation'], 1);
    const given = storage().create(undefined, body('NoSchedule', { timeAdded: '2025-06-01T12:00:00Z' }));
    assert.equal(taintOf(given)['timeAdded'], '2025-06-01T12:00:00Z');
  });

  it('update: a changed effect with the old timeAdded gets a new one; an unchanged effect keeps it', () => {
    const s = storage();
    const created = s.create(undefined, body('NoSchedule', { timeAdded: '2025-06-01T12:00:00Z' }));
    const relabelled = s.update(undefined, 'gpu-maintenance', {
      ...created,
      metadata: { ...created.metadata, labels: { team: 'ops' } },
      spec: { ...(created['spec'] as object), taint: { ...taintOf(created), value: 'planned' } },
    });
    assert.equal(taintOf(relabelled)['timeAdded'], '2025-06-01T12:00:00Z', 'same effect: time kept');
    assert.equal(relabelled.metadata['generation'], 2);
    const escalated = s.update(undefined, 'gpu-maintenance', {
      ...relabelled,
      spec: { ...(relabelled['spec'] as object), taint: { ...taintOf(relabelled), effect: 'NoExecute' } },
    });
    assert.notEqual(taintOf(escalated)['timeAdded'], '2025-06-01T12:00:00Z', 'new effect: new time');
    assert.match(String(taintOf(escalated)['timeAdded']), WHOLE_SECONDS);
    assert.equal(escalated.metadata['generation'], 3);
    // A patch that changes the effect bumps it too, without touching the stored object it started from.
    const patched = s.patch(undefined, 'gpu-maintenance', 'application/merge-patch+json', {
      spec: { taint: { effect: 'None', timeAdded: taintOf(escalated)['timeAdded'] } },
    });
    assert.equal(taintOf(patched)['effect'], 'None');
    assert.equal(taintOf(escalated)['effect'], 'NoExecute', 'the previous object is not mutated');
  });

  it('the status only through the status subresource; the spec is kept there', () => {
    const s = storage();
    const created = s.create(undefined, body('NoExecute'));
    const withStatus = s.update(
      undefined,
      'gpu-maintenance',
      { ...body('None'), metadata: created.metadata },
      true,
    );
    assert.equal(taintOf(withStatus)['effect'], 'NoExecute', 'a status write keeps the spec');
    assert.equal((withStatus['status'] as { conditions: unknown[] }).conditions.length, 1);
    const main = s.update(undefined, 'gpu-maintenance', { ...withStatus, status: {} });
    assert.deepEqual(main['status'], withStatus['status'], 'a main write keeps the status');
  });

  it('a PUT without resourceVersion is refused (v1 forbids unconditional updates); a patch is not', () => {
    const s = storage();
    const created = s.create(undefined, body('NoSchedule'));
    const { resourceVersion: _rv, ...metadata } = created.metadata;
    assert.throws(
      () => s.update(undefined, 'gpu-maintenance', { ...created, metadata }),
      (err: unknown) =>
        err instanceof HttpError &&
        err.status === 422 &&
        err.message ===
          'devicetaintrules.resource.k8s.io "gpu-maintenance" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update' &&
        (err.details?.['kind'] as string) === 'devicetaintrules',
    );
    const patched = s.patch(undefined, 'gpu-maintenance', 'application/merge-patch+json', {
      metadata: { labels: { a: 'b' } },
    });
    assert.equal((patched.metadata['labels'] as Record<string, string>)['a'], 'b');
  });

  it('delete answers a Success Status naming the rule', () => {
    const s = storage();
    const created: KubeObject = s.create(undefined, body('NoSchedule'));
    assert.deepEqual(s.delete(undefined, 'gpu-maintenance'), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: {
        name: 'gpu-maintenance',
        group: 'resource.k8s.io',
        kind: 'devicetaintrules',
        uid: created.metadata.uid,
      },
    });
  });
});

describe('ResourceSlice strategy', () => {
  type Taint = { key: string; value?: string; effect: string; timeAdded?: string };
  const slice = (taints: Record<string, Taint[]>) => ({
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceSlice',
    metadata: { name: 'node-a-gpu' },
    spec: {
      driver: 'gpu.example.com',
      nodeName: 'node-a',
      pool: { name: 'node-a', generation: 1, resourceSliceCount: 1 },
      devices: ['gpu-0', 'gpu-1', 'gpu-2'].map((name) => ({
        name,
        ...(taints[name] ? { taints: taints[name] } : {}),
      })),
    },
  });
  const taintsOf = (o: unknown, device: number) =>
    (o as { spec: { devices: { taints?: Taint[] }[] } }).spec.devices[device]!.taints;
  const OLD = '2025-06-01T12:00:00Z';
  /** Milliseconds of the current second: a time stamped from now on is not before it. */
  const second = () => Math.floor(Date.now() / 1000) * 1000;
  const stampedSince = (t: string | undefined, since: number) => {
    assert.match(String(t), WHOLE_SECONDS);
    assert.ok(Date.parse(String(t)) >= since && Date.parse(String(t)) <= Date.now(), `${t}: stamped now`);
  };

  it('create: every taint without timeAdded gets the current second, a given one is kept', () => {
    const since = second();
    const created = storage('resourceslices').create(
      undefined,
      slice({
        'gpu-0': [
          { key: 'example.com/ecc', value: 'uncorrectable', effect: 'NoExecute' },
          { key: 'example.com/maintenance', effect: 'NoSchedule', timeAdded: OLD },
        ],
        'gpu-2': [{ key: 'example.com/ecc', effect: 'None' }],
      }),
    );
    stampedSince(taintsOf(created, 0)![0]!.timeAdded, since);
    assert.equal(taintsOf(created, 0)![1]!.timeAdded, OLD);
    assert.equal(taintsOf(created, 1), undefined, 'a device without taints gets none');
    stampedSince(taintsOf(created, 2)![0]!.timeAdded, since);
    assert.equal(created.metadata['generation'], 1);
  });

  it('update and patch: a taint sent without timeAdded gets a new one, not the stored one', () => {
    const since = second();
    const s = storage('resourceslices');
    const ecc = { key: 'example.com/ecc', value: 'uncorrectable', effect: 'NoExecute' };
    const created = s.create(undefined, slice({ 'gpu-0': [{ ...ecc, timeAdded: OLD }] }));
    // The same taint, its time left out: the strategy keeps nothing from the stored slice.
    const sent = slice({ 'gpu-0': [ecc], 'gpu-1': [{ ...ecc, timeAdded: OLD }] });
    const updated = s.update(undefined, 'node-a-gpu', { ...sent, metadata: created.metadata });
    stampedSince(taintsOf(updated, 0)![0]!.timeAdded, since);
    assert.notEqual(taintsOf(updated, 0)![0]!.timeAdded, OLD);
    assert.equal(taintsOf(updated, 1)![0]!.timeAdded, OLD, 'a given time is kept');
    assert.equal(updated.metadata['generation'], 2);
    // Written back as read: nothing to default, the spec (and so the generation) unchanged.
    const same = s.update(undefined, 'node-a-gpu', updated);
    assert.deepEqual(same['spec'], updated['spec']);
    assert.equal(same.metadata['generation'], 2);
    const patched = s.patch(undefined, 'node-a-gpu', 'application/json-patch+json', [
      {
        op: 'add',
        path: '/spec/devices/2/taints',
        value: [{ key: 'example.com/ecc', effect: 'NoSchedule' }],
      },
    ]);
    stampedSince(taintsOf(patched, 2)![0]!.timeAdded, since);
    assert.equal(taintsOf(updated, 2), undefined, 'the previous object is not mutated');
    assert.deepEqual(taintsOf(patched, 1), taintsOf(updated, 1));
  });

  it('a given timeAdded is stored as metav1.Time encodes it: UTC, the fraction dropped', () => {
    const s = storage('resourceslices');
    const created = s.create(
      undefined,
      slice({
        'gpu-0': [{ key: 'example.com/ecc', effect: 'NoExecute', timeAdded: '2026-11-27T16:35:01.999Z' }],
        'gpu-1': [{ key: 'example.com/ecc', effect: 'NoSchedule', timeAdded: '2026-11-27T18:35:01+02:00' }],
      }),
    );
    assert.equal(taintsOf(created, 0)![0]!.timeAdded, '2026-11-27T16:35:01Z');
    assert.equal(taintsOf(created, 1)![0]!.timeAdded, '2026-11-27T16:35:01Z');
    const rule = storage().create(undefined, body('NoSchedule', { timeAdded: '2025-06-01T12:00:00.5Z' }));
    assert.equal(taintOf(rule)['timeAdded'], '2025-06-01T12:00:00Z');
  });
});

describe('ResourceClaim status.devices (KEP-4817)', () => {
  const DRIVER = 'gpu.example.com';
  const result = (device: string) => ({ request: 'gpu', driver: DRIVER, pool: 'sim-node', device });
  const ready = {
    type: 'Ready',
    status: 'True',
    reason: 'Prepared',
    message: '',
    lastTransitionTime: '2026-01-01T00:00:00Z',
  };
  const entry = (device: string, extra: Record<string, unknown> = {}) => ({
    driver: DRIVER,
    pool: 'sim-node',
    device,
    conditions: [ready],
    ...extra,
  });

  /** A claim allocated gpu-0 and gpu-1, stored as the scheduler leaves it. */
  function allocated(): { claims: RestStorage; rv: () => string } {
    const claims = storage('resourceclaims');
    claims.create('ns', {
      metadata: { name: 'c' },
      spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu' } }] } },
    });
    const stored = claims.get('ns', 'c');
    claims.store.upsert({
      ...stored,
      status: { allocation: { devices: { results: [result('gpu-0'), result('gpu-1')] } } },
    });
    return { claims, rv: () => claims.get('ns', 'c').metadata.resourceVersion ?? '' };
  }

  const invalidText = (fn: () => unknown): string => {
    try {
      fn();
    } catch (err) {
      assert.ok(err instanceof HttpError && err.status === 422, String(err));
      return err.message;
    }
    assert.fail('accepted');
  };

  it("a merge patch of the status subresource stores an allocated device's entry with conditions, data and networkData", () => {
    const { claims, rv } = allocated();
    const patched = claims.patch(
      'ns',
      'c',
      'application/merge-patch+json',
      {
        metadata: { resourceVersion: rv() },
        status: {
          devices: [
            entry('gpu-0', {
              data: { slot: 3 },
              networkData: { interfaceName: 'eth1', ips: ['10.9.8.1/24', '2001:db8::1/64'] },
            }),
          ],
        },
      },
      true,
    );
    const status = patched['status'] as { devices: unknown[]; allocation: unknown };
    assert.deepEqual(status.devices, [
      entry('gpu-0', {
        data: { slot: 3 },
        networkData: { interfaceName: 'eth1', ips: ['10.9.8.1/24', '2001:db8::1/64'] },
      }),
    ]);
    assert.ok(status.allocation, 'the allocation stays');
  });

  it('refuses, as 1.37 does, a device not allocated to the claim, a duplicate, data that is not an object, a bad condition and a non-canonical IP', () => {
    const { claims } = allocated();
    const put = (devices: unknown[]) => () =>
      claims.patch('ns', 'c', 'application/merge-patch+json', { status: { devices } }, true);
    assert.equal(
      invalidText(put([entry('gpu-9')])),
      'ResourceClaim.resource.k8s.io "c" is invalid: status.devices[0]: Invalid value: {"Driver":"gpu.example.com","Pool":"sim-node","Device":"gpu-9","ShareID":""}: must be an allocated device in the claim',
    );
    assert.match(
      invalidText(put([entry('gpu-0'), entry('gpu-0')])),
      /status\.devices\[1\]: Duplicate value: \{"Driver":"gpu.example.com","Pool":"sim-node","Device":"gpu-0","ShareID":""\}/,
    );
    assert.match(
      invalidText(put([entry('gpu-0', { data: [1] })])),
      /status\.devices\[0\]\.data: Invalid value: "<value omitted>": must be a valid JSON object/,
    );
    assert.match(
      invalidText(put([entry('gpu-0', { conditions: [{ ...ready, reason: '' }] })])),
      /status\.devices\[0\]\.conditions\[0\]\.reason: Required value/,
    );
    assert.match(
      invalidText(put([entry('gpu-0', { networkData: { ips: ['2001:DB8:0:0::1/64'] } })])),
      /status\.devices\[0\]\.networkData\.ips\[0\]: Invalid value: "2001:DB8:0:0::1\/64": must be in canonical form \("2001:db8::1\/64"\)/,
    );
    assert.match(
      invalidText(
        put([
          entry('gpu-0', { conditions: Array.from({ length: 9 }, (_, i) => ({ ...ready, type: `T${i}` })) }),
        ]),
      ),
      /status\.devices\[0\]\.conditions: Too many: 9: must have at most 8 items/,
    );
  });

  it('drops the entries of devices that leave the allocation (dropDeallocatedStatusDevices)', () => {
    const { claims } = allocated();
    claims.patch(
      'ns',
      'c',
      'application/merge-patch+json',
      { status: { devices: [entry('gpu-0'), entry('gpu-1')] } },
      true,
    );
    const deallocated = claims.patch(
      'ns',
      'c',
      'application/merge-patch+json',
      { status: { allocation: null } },
      true,
    );
    assert.equal((deallocated['status'] as Record<string, unknown>)['devices'], undefined);
  });
});
