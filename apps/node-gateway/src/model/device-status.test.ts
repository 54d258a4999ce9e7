import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResourceClaim } from '@plugboard/k8s-api';
import { claimDeviceStatus } from './device-status.js';

const result = { request: 'gpu', driver: 'gpu.example.com', pool: 'node-a', device: 'gpu-0' };
const claim = (devices: unknown[]): ResourceClaim =>
  ({
    metadata: { name: 'c', namespace: 'ns' },
    spec: { devices: {} },
    status: { allocation: { devices: { results: [result] } }, devices },
  }) as ResourceClaim;
const ready = {
  type: 'Ready',
  status: 'True',
  reason: 'Prepared',
  message: 'prepared by gpu.example.com on node-a',
  lastTransitionTime: '2026-11-29T05:00:00Z',
};

describe('claimDeviceStatus', () => {
  it("is the entry of the result's driver, pool, device and share: conditions, data and network data as written", () => {
    const status = claimDeviceStatus(
      claim([
        { driver: 'nic.example.com', pool: 'node-a', device: 'gpu-0', conditions: [] },
        {
          driver: 'gpu.example.com',
          pool: 'node-a',
          device: 'gpu-0',
          conditions: [ready],
          data: { slot: 3 },
          networkData: { interfaceName: 'eth1', ips: ['10.0.0.2/24'] },
        },
      ]),
      result,
    );
    assert.deepEqual(status, {
      conditions: [ready],
      data: { slot: 3 },
      networkData: { interfaceName: 'eth1', ips: ['10.0.0.2/24'] },
    });
  });

  it('is undefined when the driver wrote nothing for the device (another share, another device, no list)', () => {
    assert.equal(claimDeviceStatus(claim([]), result), undefined);
    assert.equal(
      claimDeviceStatus(
        claim([{ driver: 'gpu.example.com', pool: 'node-a', device: 'gpu-0', shareID: 'a', conditions: [] }]),
        result,
      ),
      undefined,
    );
    const empty = claimDeviceStatus(
      claim([{ driver: 'gpu.example.com', pool: 'node-a', device: 'gpu-0' }]),
      result,
    );
    assert.deepEqual(empty, { conditions: [], data: null, networkData: null });
  });
});
