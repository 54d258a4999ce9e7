// Extended resource names as v1helper.IsExtendedResourceName decides them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isExtendedResourceName } from './resource-names.js';

test('extended resource names follow IsExtendedResourceName', () => {
  const cases: [string, boolean][] = [
    ['example.com/gpu', true],
    ['nvidia.com/gpu', true],
    ['vendor.io/dev_1.x', true],
    ['gpu', false],
    ['cpu', false],
    ['kubernetes.io/gpu', false],
    ['foo.kubernetes.io/gpu', false],
    ['requests.example.com/gpu', false],
    ['Example.com/gpu', false],
    ['example.com/-gpu', false],
    ['example.com/gpu/x', false],
    [`example.com/${'a'.repeat(64)}`, false],
  ];
  for (const [name, want] of cases) assert.equal(isExtendedResourceName(name), want, name);
});
