import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AllocatedDeviceStatus, ResourceClaim } from './api-types.js';
import { PluginError } from '../errors.js';
import { deviceStatusEntry, DeviceStatusWriter, mergeDeviceStatus } from './device-status.js';
import type { DraKubeApi, ResourceClaimStatusPatch } from './kube-api.js';

const DRIVER = 'gpu.example.com';
const ref = { namespace: 'ns', name: 'c', uid: 'u1' };
const device = { requests: ['gpu'], poolName: 'node-a', deviceName: 'gpu-0', cdiDeviceIds: [] };
const at = new Date('2026-11-29T05:00:00.750Z');

describe('deviceStatusEntry', () => {
  it('is Ready True with whole-second times, then the report: a condition of the same type wins, data and networkData as given', () => {
    assert.deepEqual(deviceStatusEntry(DRIVER, 'node-a', device, undefined, at), {
      driver: DRIVER,
      pool: 'node-a',
      device: 'gpu-0',
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Prepared',
          message: 'prepared by gpu.example.com on node-a',
          lastTransitionTime: '2026-11-29T05:00:00Z',
        },
      ],
    });
    const entry = deviceStatusEntry(
      DRIVER,
      'node-a',
      { ...device, shareId: 'a1b2c3d4-0000-4000-8000-000000000001' },
      {
        conditions: [
          { type: 'Ready', status: 'False', reason: 'Warming', message: 'clocks ramping' },
          { type: 'Healthy', status: 'True', reason: 'Ok', message: '' },
        ],
        data: { memoryGiB: 40 },
        networkData: { interfaceName: 'eth1', ips: ['10.0.0.2/24'] },
      },
      at,
    );
    assert.equal(entry.shareID, 'a1b2c3d4-0000-4000-8000-000000000001');
    assert.deepEqual(
      entry.conditions?.map((c) => [c.type, c.status, c.reason]),
      [
        ['Ready', 'False', 'Warming'],
        ['Healthy', 'True', 'Ok'],
      ],
    );
    assert.deepEqual(entry.data, { memoryGiB: 40 });
    assert.deepEqual(entry.networkData, { interfaceName: 'eth1', ips: ['10.0.0.2/24'] });
  });
});

describe('mergeDeviceStatus', () => {
  const other: AllocatedDeviceStatus = {
    driver: 'nic.example.com',
    pool: 'p',
    device: 'nic-0',
    conditions: [],
  };
  it("keeps other drivers' entries in place, replaces its own, appends new ones and keeps an unchanged condition's transition time", () => {
    const old = deviceStatusEntry(DRIVER, 'node-a', device, undefined, new Date('2026-11-28T00:00:00Z'));
    const now = deviceStatusEntry(DRIVER, 'node-a', device, { data: { x: 1 } }, at);
    const second = deviceStatusEntry(DRIVER, 'node-a', { ...device, deviceName: 'gpu-1' }, undefined, at);
    const merged = mergeDeviceStatus([other, old], [now, second]);
    assert.deepEqual(
      merged.map((e) => e.device),
      ['nic-0', 'gpu-0', 'gpu-1'],
    );
    assert.equal(merged[0], other);
    assert.equal(merged[1]!.conditions![0]!.lastTransitionTime, '2026-11-28T00:00:00Z');
    assert.deepEqual(merged[1]!.data, { x: 1 });
    const flipped = deviceStatusEntry(
      DRIVER,
      'node-a',
      device,
      { conditions: [{ type: 'Ready', status: 'False', reason: 'Lost', message: '' }] },
      at,
    );
    assert.equal(
      mergeDeviceStatus([old], [flipped])[0]!.conditions![0]!.lastTransitionTime,
      '2026-11-29T05:00:00Z',
    );
  });
});

/** A claim store answering reads and merge patches of status as the API server would (409 on a stale resourceVersion). */
function claimApi(claim: ResourceClaim): {
  api: DraKubeApi;
  patches: ResourceClaimStatusPatch[];
  bump: () => void;
} {
  let stored = structuredClone(claim);
  const patches: ResourceClaimStatusPatch[] = [];
  const bump = () => {
    stored = {
      ...stored,
      metadata: { ...stored.metadata, resourceVersion: String(Number(stored.metadata.resourceVersion) + 1) },
    };
  };
  const api: DraKubeApi = {
    readNodeUid: () => Promise.resolve('n'),
    readResourceClaim: () => Promise.resolve(structuredClone(stored)),
    patchResourceClaimStatus: (_ns, _name, patch) => {
      patches.push(patch);
      if (patch.metadata.resourceVersion !== stored.metadata.resourceVersion)
        return Promise.reject(
          new PluginError('api-request-failed', 'HTTP 409: conflict', { cause: { code: 409 } }),
        );
      stored = { ...stored, status: { ...stored.status, devices: patch.status.devices } };
      bump();
      return Promise.resolve();
    },
    listResourceSlices: () => Promise.resolve([]),
    createResourceSlice: (s) => Promise.resolve(s),
    replaceResourceSlice: (s) => Promise.resolve(s),
    deleteResourceSlice: () => Promise.resolve(true),
  };
  return { api, patches, bump };
}

describe('DeviceStatusWriter', () => {
  const claim: ResourceClaim = {
    metadata: { ...ref, resourceVersion: '5' },
    status: {
      allocation: {
        devices: { results: [{ request: 'gpu', driver: DRIVER, pool: 'node-a', device: 'gpu-0' }] },
      },
    },
  };

  it('patches with the read resourceVersion, reads again after a conflict, and writes nothing when the claim already says so', async () => {
    const { api, patches, bump } = claimApi(claim);
    const writer = new DeviceStatusWriter(DRIVER, 'node-a', api, { report: () => ({ data: { slot: 3 } }) });
    bump(); // the claim changed since prepare read it
    assert.deepEqual(await writer.write(ref, [device], claim), { claim: ref, written: 1 });
    assert.deepEqual(
      patches.map((p) => p.metadata.resourceVersion),
      ['5', '6'],
    );
    assert.deepEqual(patches[1]!.status.devices[0]!.data, { slot: 3 });
    assert.deepEqual(await writer.write(ref, [device], null), { claim: ref, written: 0 });
    assert.equal(patches.length, 2);
    // Read back in the API server's field order (lastTransitionTime before reason): still the same.
    const stored = (await api.readResourceClaim('ns', 'c'))!;
    const reordered = {
      ...stored,
      status: {
        ...stored.status,
        devices: stored.status!.devices!.map(({ conditions, ...rest }) => ({
          ...rest,
          conditions: conditions!.map(({ type, status, lastTransitionTime, reason, message }) => ({
            type,
            status,
            lastTransitionTime,
            reason,
            message,
          })),
        })),
      },
    };
    assert.deepEqual(await writer.write(ref, [device], reordered), { claim: ref, written: 0 });
    assert.equal(patches.length, 2);
  });

  it("rejects naming the claim when the driver's report throws, and when the claim is gone or another claim took its name", async () => {
    const { api } = claimApi(claim);
    const failing = new DeviceStatusWriter(DRIVER, 'node-a', api, {
      report: () => {
        throw new Error('no sensor');
      },
    });
    await assert.rejects(
      failing.write(ref, [device], claim),
      /device status of claim ns\/c: the driver's report failed: no sensor/,
    );
    const writer = new DeviceStatusWriter(DRIVER, 'node-a', api, {});
    await assert.rejects(writer.write({ ...ref, uid: 'other' }, [device], null), /the claim is gone/);
  });
});
