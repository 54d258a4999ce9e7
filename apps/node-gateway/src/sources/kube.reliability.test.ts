// pacedList: client-node relists immediately after every 410 Gone; the gateway spaces such relists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pacedList } from './kube.js';

test('back-to-back lists back off exponentially up to the cap; a quiet period resets the backoff', async (t) => {
  // The pacing timer is unref'd (it must not hold a stopping gateway); hold the loop for the test.
  const keepAlive = setInterval(() => undefined, 1000);
  t.after(() => clearInterval(keepAlive));
  // Each list's start as the pacer timed it (its last clock read before calling the list): a
  // clock read in the callback could lag it by however long the machine paused in between.
  let lastRead = 0;
  const clock = (): number => (lastRead = performance.now());
  const calls: number[] = [];
  const list = pacedList(() => Promise.resolve(calls.push(lastRead)), 400, 1000, clock);
  const t0 = performance.now();
  for (let i = 0; i < 4; i++) await list();
  const gaps = calls.slice(1).map((t, i) => t - calls[i]!);
  assert.ok(calls[0]! - t0 < 50, 'the first list is not delayed');
  // 250 ms, then 400 (capped), then 400; timers may fire a little late, never early.
  assert.ok(gaps[0]! >= 245 && gaps[1]! >= 395 && gaps[2]! >= 395, gaps.join(', '));
  await new Promise((r) => setTimeout(r, 1100));
  const before = performance.now();
  await list();
  assert.ok(performance.now() - before < 50, 'after a quiet period the list goes out at once');
});
