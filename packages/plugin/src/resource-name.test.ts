import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertResourceName, resourceNameProblem } from './resource-name.js';

const table: [name: string, problem: RegExp | null][] = [
  ['plugboard.example/gpu', null],
  ['nvidia.com/gpu', null],
  ['example.com/shared-gpu.small_1', null],
  ['gpu', /domain-prefixed/],
  ['kubernetes.io/gpu', /kubernetes\.io namespace/],
  ['foo.kubernetes.io/gpu', /kubernetes\.io namespace/],
  ['requests.example.com/gpu', /reserved for quota/],
  ['Example.com/gpu', /lowercase DNS subdomain/],
  ['example.com/', /1-63 characters/],
  ['example.com/-gpu', /starting and ending alphanumeric/],
  ['example.com/a/b', /exactly one "\/"/],
  [`example.com/${'x'.repeat(64)}`, /1-63 characters/],
];

describe('resource names (kubelet rules)', () => {
  for (const [name, problem] of table) {
    it(`${name.length > 30 ? name.slice(0, 30) + '…' : name} → ${problem ? 'rejected' : 'accepted'}`, () => {
      const actual = resourceNameProblem(name);
      if (problem === null) assert.equal(actual, null);
      else assert.match(actual ?? '', problem);
    });
  }

  it('assertResourceName throws a PluginError naming the resource', () => {
    assert.throws(() => assertResourceName('gpu'), {
      code: 'invalid-resource-name',
      message: /invalid resource name "gpu"/,
    });
  });
});
