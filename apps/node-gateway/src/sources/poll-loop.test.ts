import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PollLoop } from './poll-loop.js';

/** The loop's timers are unref'd (they must not hold a stopping gateway): hold the process for a test. */
function holdProcess(t: { after: (fn: () => void) => void }): void {
  const keepAlive = setInterval(() => undefined, 1000);
  t.after(() => clearInterval(keepAlive));
}

/** A 0 ms timer made now fires after every 0 ms timer made before it (Node's timer lists keep order). */
const afterZeroDelayTimers = () => new Promise((resolve) => setTimeout(resolve, 0));

test('polls at once, again after the delay each poll answers, and not after stop() — even from a poll in flight', async (t) => {
  holdProcess(t);
  let calls = 0;
  let gate: (() => void) | null = null;
  let polled: (() => void) | null = null;
  const loop = new PollLoop(async () => {
    calls++;
    polled?.();
    if (calls === 3) await new Promise<void>((resolve) => (gate = resolve));
    return 0;
  });
  const third = new Promise<void>((resolve) => (polled = () => calls === 3 && resolve()));
  loop.start();
  await third;
  assert.equal(calls, 3, 'each poll answered 0 ms: the next followed at once');
  loop.stop();
  assert.equal(loop.isStopped, true);
  gate!();
  await afterZeroDelayTimers();
  await afterZeroDelayTimers();
  assert.equal(calls, 3, 'the poll in flight at stop() scheduled nothing');
  loop.pollSoon(0);
  await afterZeroDelayTimers();
  assert.equal(calls, 3, 'pollSoon() after stop() does nothing');
});

test('pollSoon() brings the next poll forward from a long delay, also when it comes during a poll', async (t) => {
  holdProcess(t);
  let calls = 0;
  let polled: (() => void) | null = null;
  let gate: (() => void) | null = null;
  const loop = new PollLoop(async () => {
    calls++;
    polled?.();
    if (calls === 2) await new Promise<void>((resolve) => (gate = resolve));
    return 3_600_000;
  });
  const nth = (n: number) => new Promise<void>((resolve) => (polled = () => calls === n && resolve()));
  const first = nth(1);
  loop.start();
  await first;
  // Idle, an hour from the next poll: pollSoon() polls now.
  const second = nth(2);
  loop.pollSoon(0);
  await second;
  // During the second poll (its answer may predate what changed): the poll after it comes soon,
  // not an hour later.
  const third = nth(3);
  loop.pollSoon(0);
  gate!();
  await third;
  loop.stop();
  assert.equal(calls, 3);
});
