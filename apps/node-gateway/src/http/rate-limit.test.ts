import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRateLimiter } from './rate-limit.js';

test('a client gets its burst, then waits for refills; other clients are not affected', () => {
  let t = 0;
  const limiter = createRateLimiter({ perSecond: 2, burst: 3, now: () => t });
  assert.deepEqual(
    [1, 2, 3, 4].map(() => limiter.take('a')),
    [0, 0, 0, 1],
  );
  assert.equal(limiter.take('b'), 0);
  t += 500; // one token back
  assert.equal(limiter.take('a'), 0);
  assert.equal(limiter.take('a'), 1);
});

test('Retry-After rounds up to whole seconds for slow refills', () => {
  let t = 0;
  const limiter = createRateLimiter({ perSecond: 0.25, burst: 1, now: () => t });
  assert.equal(limiter.take('a'), 0);
  assert.equal(limiter.take('a'), 4);
  t += 4000;
  assert.equal(limiter.take('a'), 0);
});

test('the number of buckets is bounded (least recently used dropped)', () => {
  const limiter = createRateLimiter({ perSecond: 1, burst: 1, maxClients: 100, now: () => 0 });
  for (let i = 0; i < 1000; i++) limiter.take(`client-${i}`);
  assert.equal(limiter.size, 100);
  // client-0 was dropped: it starts with a full bucket again.
  assert.equal(limiter.take('client-0'), 0);
  assert.equal(limiter.take('client-999'), 1);
});
