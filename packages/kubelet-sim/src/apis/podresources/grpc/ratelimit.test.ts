// The PodResources token bucket: the burst, then refills at qps.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TokenBucket } from './ratelimit.js';

test('the token bucket allows the burst, then refills at qps', () => {
  let now = 0;
  const bucket = new TokenBucket({ qps: 100, burst: 10 }, () => now);
  const first = Array.from({ length: 12 }, () => bucket.allow());
  assert.deepEqual(first.filter(Boolean).length, 10);
  now += 50; // 5 tokens at 100/s
  assert.equal(Array.from({ length: 8 }, () => bucket.allow()).filter(Boolean).length, 5);
  now += 10_000;
  assert.equal(
    Array.from({ length: 20 }, () => bucket.allow()).filter(Boolean).length,
    10,
    'never more than the burst',
  );
});
