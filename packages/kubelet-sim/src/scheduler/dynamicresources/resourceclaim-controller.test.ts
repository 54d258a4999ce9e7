// Template → claim as the ResourceClaim controller does it: names, owner, annotations, pod status.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, ResourceClaim, ResourceClaimTemplate } from '../types.js';
import {
  claimGenerateName,
  claimsFromTemplates,
  generateName,
  POD_RESOURCE_CLAIM_ANNOTATION,
} from './resourceclaim-controller.js';

const template: ResourceClaimTemplate = {
  metadata: { name: 'one-gpu', namespace: 'default' },
  spec: {
    metadata: { labels: { team: 'ml' }, annotations: { note: 'from template' } },
    spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu' } }] } },
  },
};

const pod = (claims: NonNullable<Pod['spec']['resourceClaims']>, status?: Pod['status']): Pod => ({
  metadata: { name: 'train', namespace: 'default', uid: 'pod-uid' },
  spec: { resourceClaims: claims },
  ...(status ? { status } : {}),
});

const fixed = { randomSuffix: () => 'x7k2p', newUID: () => 'claim-uid' };

describe('claim names', () => {
  const cases: [string, string, string][] = [
    ['train', 'gpu', 'train-gpu-'],
    // Longer than 57: both parts cut in proportion to their length.
    ['a'.repeat(50), 'b'.repeat(20), `${'a'.repeat(39)}-${'b'.repeat(15)}`],
    ['p'.repeat(60), 'gpu', `${'p'.repeat(52)}-gp`],
  ];
  for (const [podName, claimName, want] of cases) {
    test(`${podName.length}+${claimName.length} characters`, () => {
      assert.equal(claimGenerateName(podName, claimName), want);
      assert.ok(generateName(want).length <= 63);
    });
  }
  test('generated names use the API server alphabet', () => {
    assert.match(generateName('train-gpu-'), /^train-gpu-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });
});

describe('claimsFromTemplates', () => {
  test('a claim per template reference, owned by the pod, annotated with the pod claim name', () => {
    const result = claimsFromTemplates(
      pod([
        { name: 'gpu', resourceClaimTemplateName: 'one-gpu' },
        { name: 'shared', resourceClaimName: 'team-gpu' },
      ]),
      [template],
      fixed,
    );
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.claims, [
      {
        apiVersion: 'resource.k8s.io/v1',
        kind: 'ResourceClaim',
        metadata: {
          name: 'train-gpu-x7k2p',
          generateName: 'train-gpu-',
          namespace: 'default',
          uid: 'claim-uid',
          ownerReferences: [
            {
              apiVersion: 'v1',
              kind: 'Pod',
              name: 'train',
              uid: 'pod-uid',
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
          annotations: { note: 'from template', [POD_RESOURCE_CLAIM_ANNOTATION]: 'gpu' },
          labels: { team: 'ml' },
        },
        spec: template.spec.spec,
      },
    ]);
    assert.deepEqual(result.resourceClaimStatuses, [{ name: 'gpu', resourceClaimName: 'train-gpu-x7k2p' }]);
  });

  test('nothing to do once the pod status records the claim', () => {
    const existing: ResourceClaim = {
      metadata: {
        name: 'train-gpu-abcde',
        namespace: 'default',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'train', uid: 'pod-uid', controller: true }],
      },
      spec: template.spec.spec,
    };
    const p = pod([{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }], {
      resourceClaimStatuses: [{ name: 'gpu', resourceClaimName: 'train-gpu-abcde' }],
    });
    const result = claimsFromTemplates(p, [template], { ...fixed, existing: [existing] });
    assert.deepEqual(result.claims, []);
    assert.deepEqual(result.resourceClaimStatuses, [{ name: 'gpu', resourceClaimName: 'train-gpu-abcde' }]);
  });

  test('an orphan created by an earlier attempt is reused', () => {
    const orphan: ResourceClaim = {
      metadata: {
        name: 'train-gpu-q9z8w',
        namespace: 'default',
        annotations: { [POD_RESOURCE_CLAIM_ANNOTATION]: 'gpu' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'train', uid: 'pod-uid', controller: true }],
      },
      spec: template.spec.spec,
    };
    const result = claimsFromTemplates(
      pod([{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }]),
      [template],
      {
        ...fixed,
        existing: [orphan],
      },
    );
    assert.equal(result.claims[0], orphan);
    assert.deepEqual(result.resourceClaimStatuses, [{ name: 'gpu', resourceClaimName: 'train-gpu-q9z8w' }]);
  });

  test('a missing template is the FailedResourceClaimCreation message', () => {
    const result = claimsFromTemplates(
      pod([{ name: 'gpu', resourceClaimTemplateName: 'nope' }]),
      [template],
      fixed,
    );
    assert.deepEqual(result.claims, []);
    assert.deepEqual(result.errors, [
      'PodResourceClaim gpu: resource claim template "nope": resourceclaimtemplate.resource.k8s.io "nope" not found',
    ]);
  });
});
