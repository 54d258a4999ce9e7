// The requests of a pod's special claim (extended resources backed by DRA) whose CDI devices a
// container gets, as the kubelet's GetResources picks them.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { extendedResourceRequestNames, podClaims } from './resourceclaim.js';
import type { DraPod } from './types.js';

const GPU = 'example.com/gpu';

const pod: DraPod = {
  name: 'train',
  namespace: 'default',
  uid: 'pod-uid',
  resourceClaims: [],
  resourceClaimStatuses: [],
  extendedResourceClaimStatus: {
    resourceClaimName: 'train-extended-resources-abcde',
    requestMappings: [
      { containerName: 'main', resourceName: GPU, requestName: 'container-0-request-0' },
      {
        containerName: 'main',
        resourceName: 'deviceclass.resource.kubernetes.io/fpga',
        requestName: 'container-0-request-1',
      },
      { containerName: 'other', resourceName: GPU, requestName: 'container-1-request-0' },
    ],
  },
};

describe('extendedResourceRequestNames (GetResources)', () => {
  test('the container’s mappings for resources it requests, explicit and implicit names', () => {
    const requests = new Map([
      [GPU, 1],
      ['deviceclass.resource.kubernetes.io/fpga', 2],
    ]);
    assert.deepEqual(extendedResourceRequestNames(pod, { name: 'main', claims: [], requests }), [
      'container-0-request-0',
      'container-0-request-1',
    ]);
  });

  test('a mapped resource the container does not request (or requests 0 of) gives nothing', () => {
    assert.deepEqual(
      extendedResourceRequestNames(pod, { name: 'main', claims: [], requests: new Map([[GPU, 0]]) }),
      [],
    );
  });

  test('no special claim: nothing', () => {
    assert.deepEqual(
      extendedResourceRequestNames(
        { ...pod, extendedResourceClaimStatus: null },
        { name: 'main', claims: [], requests: new Map([[GPU, 1]]) },
      ),
      [],
    );
  });
});

describe('podClaims (resourceclaim.PodClaims)', () => {
  test('the pod’s named and generated claims, then the special claim with the owner to check', () => {
    assert.deepEqual(
      podClaims({
        ...pod,
        resourceClaims: [
          { name: 'a', resourceClaimName: 'shared' },
          { name: 'b', resourceClaimTemplateName: 'tpl' },
          { name: 'c', resourceClaimTemplateName: 'not-yet' },
        ],
        resourceClaimStatuses: [{ name: 'b', resourceClaimName: 'train-b-x1y2z' }],
      }),
      [
        { name: 'shared', mustCheckOwner: false },
        { name: 'train-b-x1y2z', mustCheckOwner: true },
        { name: 'train-extended-resources-abcde', mustCheckOwner: true },
      ],
    );
  });
});
