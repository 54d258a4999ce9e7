// Which DRAPlugin and DRAResourceHealth services the kubelet picks from a driver's supported
// versions (validateSupportedServices, pickHealthService), table-driven as upstream's tests are.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseService, pickHealthService } from './dra-plugin-manager.js';

test('the DRAPlugin service: the first the plugin lists that the kubelet serves', () => {
  const cases: [string[], string | RegExp][] = [
    [['v1.DRAPlugin'], 'v1.DRAPlugin'],
    [['v1beta1.DRAPlugin'], 'v1beta1.DRAPlugin'],
    [['v1.DRAPlugin', 'v1beta1.DRAPlugin'], 'v1.DRAPlugin'],
    [['v1beta1.DRAPlugin', 'v1.DRAPlugin'], 'v1beta1.DRAPlugin'],
    [['v1.DRAResourceHealth', 'v1beta1.DRAPlugin'], 'v1beta1.DRAPlugin'],
    [[], /^empty list of supported gRPC services \(aka supported versions\)$/],
    [
      ['v1alpha4.Node', 'v2.DRAPlugin'],
      /^none of services supported by the plugin \(\["v1alpha4.Node" "v2.DRAPlugin"\]\) are supported by the kubelet \(\["v1.DRAPlugin" "v1beta1.DRAPlugin"\]\)$/,
    ],
  ];
  for (const [versions, want] of cases) {
    if (typeof want === 'string') assert.equal(chooseService(versions), want, versions.join(','));
    else assert.throws(() => chooseService(versions), { message: want }, versions.join(','));
  }
});

test('the health service: v1 before v1alpha1 whatever the order, none when neither is listed', () => {
  const cases: [string[], string | null][] = [
    [['v1beta1.DRAPlugin'], null],
    [[], null],
    [['v1beta1.DRAPlugin', 'v1alpha1.DRAResourceHealth'], 'v1alpha1.DRAResourceHealth'],
    [['v1beta1.DRAPlugin', 'v1.DRAResourceHealth'], 'v1.DRAResourceHealth'],
    [['v1alpha1.DRAResourceHealth', 'v1.DRAResourceHealth'], 'v1.DRAResourceHealth'],
  ];
  for (const [versions, want] of cases) assert.equal(pickHealthService(versions), want, versions.join(','));
});
