// Crash-loop back-off durations print like Go's time.Duration.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration } from './pod-workers.js';

test('back-off durations print like Go', () => {
  assert.equal(formatDuration(10_000), '10s');
  assert.equal(formatDuration(80_000), '1m20s');
  assert.equal(formatDuration(300_000), '5m0s');
  assert.equal(formatDuration(250), '250ms');
});
