import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PluginError } from '../errors.js';
import { deviceClassFor } from './device-class.js';

describe('deviceClassFor', () => {
  test('a CEL selector on the driver, extra selectors ANDed, the extended resource name', () => {
    assert.deepEqual(
      deviceClassFor('gpu.example.com', {
        name: 'gpu',
        extendedResourceName: 'example.com/gpu',
        selectors: ['device.attributes["gpu.example.com"].model == "PB-100"'],
      }),
      {
        apiVersion: 'resource.k8s.io/v1',
        kind: 'DeviceClass',
        metadata: { name: 'gpu' },
        spec: {
          selectors: [
            { cel: { expression: 'device.driver == "gpu.example.com"' } },
            { cel: { expression: 'device.attributes["gpu.example.com"].model == "PB-100"' } },
          ],
          extendedResourceName: 'example.com/gpu',
        },
      },
    );
  });

  test('without an extended resource name the field is absent', () => {
    assert.equal('extendedResourceName' in deviceClassFor('gpu.example.com', { name: 'gpu' }).spec, false);
  });

  for (const bad of [
    'gpu',
    'kubernetes.io/gpu',
    'deviceclass.resource.kubernetes.io/gpu',
    'requests.example.com/gpu',
  ])
    test(`refuses extendedResourceName ${bad}`, () => {
      assert.throws(
        () => deviceClassFor('gpu.example.com', { name: 'gpu', extendedResourceName: bad }),
        (err: PluginError) => err.code === 'invalid-resource-name' && err.message.includes(`"${bad}"`),
      );
    });
});
