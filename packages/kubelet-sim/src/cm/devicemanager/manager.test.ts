// The device manager's checkpoint is written off the ListAndWatch path: a burst of updates writes
// nothing synchronously, costs a write or two, and the last state lands on disk, where a restarted
// kubelet (the same manager, or a new one on the same directory) finds it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { KUBELET_CHECKPOINT_FILE, type deviceplugin } from '@plugboard/proto';
import { newCheckpointManager, type CheckpointManager } from '../../checkpointmanager/checkpoint-manager.js';
import { DeviceManager } from './manager.js';

const GPU = 'example.com/gpu';
const logger = pino({ level: 'silent' });

/** Four GPUs; in update `i`, device `i % 4` is Unhealthy. */
function update(i: number): deviceplugin.ListAndWatchResponse {
  return {
    devices: [0, 1, 2, 3].map((n) => ({
      ID: `gpu-${n}`,
      health: n === i % 4 ? 'Unhealthy' : 'Healthy',
      topology: { nodes: [{ ID: n < 2 ? 0 : 1 }] },
    })),
  };
}

test('a burst of ListAndWatch updates is checkpointed off the hot path; the last state lands and survives a restart', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pb-ksim-dm-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, KUBELET_CHECKPOINT_FILE);
  const disk = newCheckpointManager(dir);
  const writes: string[] = [];
  const counting: CheckpointManager = {
    createCheckpoint: async (key, data) => {
      writes.push(data);
      await disk.createCheckpoint(key, data);
    },
    getCheckpoint: (key) => disk.getCheckpoint(key),
  };
  const dm = new DeviceManager({ devicePluginDir: dir, checkpointManager: counting, logger });
  let next: DeviceManager | null = null;
  t.after(async () => {
    await dm.stop();
    await next?.stop();
  });
  await dm.start();

  const burst = 100;
  for (let i = 0; i < burst; i++) dm.pluginListAndWatchReceiver(GPU, update(i));
  assert.equal(writes.length, 0, 'no checkpoint write on the ListAndWatch path');
  assert.equal(existsSync(file), false, 'nothing on disk yet');
  assert.equal(dm.allocatableDevices().length, 3, 'the update itself is applied at once');

  await dm.flushCheckpoint();
  assert.ok(writes.length >= 1 && writes.length <= 2, `${burst} updates cost ${writes.length} writes`);
  const last = update(burst - 1);
  const expected = last.devices.filter((d) => d.health === 'Healthy').map((d) => d.ID);
  const onDisk = JSON.parse(readFileSync(file, 'utf8')) as {
    Data: { RegisteredDevices: Record<string, string[]> };
  };
  assert.deepEqual(onDisk.Data.RegisteredDevices[GPU]?.sort(), expected, 'the last state is on disk');
  assert.equal(writes.at(-1), readFileSync(file, 'utf8'), 'the last write is the file');

  // A kubelet restart reads it back: the resource returns as a stopped endpoint with no devices.
  await dm.restart();
  const restored = dm.resources().find((r) => r.name === GPU);
  assert.equal(restored?.registered, false);
  assert.equal(restored?.capacity, 0);
  assert.ok(restored?.graceExpiresAt, 'its grace period runs');
  await dm.stop();

  // So does a new process on the same directory.
  next = new DeviceManager({ devicePluginDir: dir, logger });
  await next.start();
  assert.deepEqual(
    next.resources().map((r) => [r.name, r.registered, r.capacity]),
    [[GPU, false, 0]],
  );
});

test('updates that arrive while a checkpoint is being written are written after it, in order', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pb-ksim-dm-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const disk = newCheckpointManager(dir);
  const healthyOnDisk: string[][] = [];
  const gate: { release?: () => void } = {};
  const slow: CheckpointManager = {
    createCheckpoint: async (key, data) => {
      const parsed = JSON.parse(data) as { Data: { RegisteredDevices: Record<string, string[]> } };
      healthyOnDisk.push([...(parsed.Data.RegisteredDevices[GPU] ?? [])].sort());
      // The first write blocks until the test lets it go.
      if (healthyOnDisk.length === 1) await new Promise<void>((resolve) => (gate.release = resolve));
      await disk.createCheckpoint(key, data);
    },
    getCheckpoint: (key) => disk.getCheckpoint(key),
  };
  const dm = new DeviceManager({ devicePluginDir: dir, checkpointManager: slow, logger });
  await dm.start();
  t.after(() => dm.stop());

  dm.pluginListAndWatchReceiver(GPU, update(0));
  while (!gate.release) await new Promise((resolve) => setImmediate(resolve));
  for (let i = 1; i <= 5; i++) dm.pluginListAndWatchReceiver(GPU, update(i));
  gate.release();
  await dm.flushCheckpoint();

  assert.deepEqual(healthyOnDisk, [
    ['gpu-1', 'gpu-2', 'gpu-3'],
    ['gpu-0', 'gpu-2', 'gpu-3'],
  ]);
  const onDisk = JSON.parse(readFileSync(join(dir, KUBELET_CHECKPOINT_FILE), 'utf8')) as {
    Data: { RegisteredDevices: Record<string, string[]> };
  };
  assert.deepEqual(onDisk.Data.RegisteredDevices[GPU]?.sort(), ['gpu-0', 'gpu-2', 'gpu-3']);
});
