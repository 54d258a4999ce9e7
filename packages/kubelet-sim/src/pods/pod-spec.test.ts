// What the device manager and the node-resources predicate see of a pod whose extended resources a
// special claim serves (isDRAExtendedResource, removeMissingExtendedResources).

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePodSpec, withoutDraExtendedResources } from './pod-spec.js';

const GPU = 'example.com/gpu';
const FPGA = 'example.com/fpga';

const spec = parsePodSpec(
  {
    metadata: { name: 'train', namespace: 'default' },
    spec: {
      initContainers: [{ name: 'setup', resources: { limits: { [GPU]: 1 } } }],
      containers: [
        { name: 'main', resources: { limits: { cpu: '1', [GPU]: 2, [FPGA]: 1 } } },
        { name: 'side', resources: { limits: { [GPU]: 1 } } },
      ],
    },
  },
  'node-1',
);

describe('withoutDraExtendedResources', () => {
  test('drops each container’s mapped resources from requests and limits, keeps the rest', () => {
    const out = withoutDraExtendedResources(spec, {
      resourceClaimName: 'train-extended-resources-abcde',
      requestMappings: [
        { containerName: 'main', resourceName: GPU, requestName: 'container-1-request-1' },
        { containerName: 'setup', resourceName: GPU, requestName: 'container-1-request-1' },
      ],
    });
    const view = (cs: typeof out.containers) => cs.map((c) => [c.name, [...c.requests], [...c.limits]]);
    assert.deepEqual(view(out.initContainers), [['setup', [], []]]);
    assert.deepEqual(view(out.containers), [
      [
        'main',
        [
          ['cpu', 1000],
          [FPGA, 1],
        ],
        [
          ['cpu', 1000],
          [FPGA, 1],
        ],
      ],
      // Not mapped for this container: the device manager and the predicate still see it.
      ['side', [[GPU, 1]], [[GPU, 1]]],
    ]);
    assert.equal(spec.containers[0]?.requests.get(GPU), 2, 'the pod itself is not changed');
  });

  test('without a special claim the pod is seen as it is', () => {
    assert.equal(withoutDraExtendedResources(spec, null), spec);
  });
});
