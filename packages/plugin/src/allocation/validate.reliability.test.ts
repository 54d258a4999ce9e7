// Error messages for huge requests stay small: a gRPC status message travels as an HTTP/2 trailer,
// and one naming 10,000 IDs never reaches the client (it sees DEADLINE_EXCEEDED instead).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nameIds, validateAllocation, validatePreferredRequest } from './validate.js';
import type { PluginDevice } from '../types.js';

const device = (id: string): PluginDevice =>
  ({ id, health: 'Healthy', numaNodes: [] }) as unknown as PluginDevice;
const lookup = (id: string) => (id.startsWith('gpu-') ? device(id) : undefined);

test('nameIds names short lists in full and long ones up to 20 IDs plus a count', () => {
  assert.equal(nameIds(['a', 'b']), 'a, b');
  const many = Array.from({ length: 10_000 }, (_, i) => `x-${i}`);
  const text = nameIds(many);
  assert.match(text, /^x-0, x-1, .* x-19 … and 9980 more$/);
  assert.ok(text.length < 300);
  assert.ok(nameIds(['y'.repeat(10_000)]).length < 80);
});

test('10,000 unknown IDs give a short INVALID_ARGUMENT message for Allocate and GetPreferredAllocation', () => {
  const many = Array.from({ length: 10_000 }, (_, i) => `bogus-${i}`);
  assert.throws(
    () => validateAllocation([many], { lookup }),
    (err: Error) => err.message.length < 400 && /and 9980 more/.test(err.message),
  );
  assert.throws(
    () => validatePreferredRequest(many, [], lookup),
    /GetPreferredAllocation: unknown device IDs: bogus-0/,
  );
  assert.throws(
    () => validatePreferredRequest(['gpu-0'], ['gpu-1'], lookup),
    /must-include device IDs not available: gpu-1/,
  );
  assert.doesNotThrow(() => validatePreferredRequest(['gpu-0', 'gpu-1'], ['gpu-1'], lookup));
});
