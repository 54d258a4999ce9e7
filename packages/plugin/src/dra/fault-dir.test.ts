import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { runFaultCommand, type FaultCommand } from '../cli.js';
import type { PluginDevice } from '../types.js';
import { FAULT_STATUS_FILE, FaultDir, type FaultDirStatus, type FaultTarget } from './fault-dir.js';

/** fs.watch with every inotify instance of the user taken (fs.inotify.max_user_instances). */
const noInotify = (): never => {
  throw Object.assign(new Error('EMFILE: too many open files, watch'), { code: 'EMFILE' });
};

/** The part of a DraDriver the fault directory drives: one device, its faults in a map. */
class FakeDriver extends EventEmitter implements FaultTarget {
  readonly driverName = 'gpu.plugboard.example';
  readonly #faults = new Map<string, { reason: string; present: boolean }>();
  devices(): PluginDevice[] {
    const at = new Date(0).toISOString();
    return [
      {
        id: 'gpu-0',
        health: 'Healthy',
        reason: null,
        since: at,
        numaNodes: [],
        replicaOf: null,
        deviceNodes: [],
      },
    ];
  }
  injectFault(deviceId: string, reason: string): void {
    this.#faults.set(deviceId, { reason, present: true });
  }
  clearFault(deviceId: string): void {
    this.#faults.delete(deviceId);
  }
  faults(): Map<string, { reason: string; present: boolean }> {
    return new Map(this.#faults);
  }
}

describe('fault directory and plugboard-plugin fault without inotify', () => {
  let dir: string;
  let driver: FakeDriver;
  let faultDir: FaultDir;
  const warnings: string[] = [];
  before(async () => {
    dir = join(await mkdtemp(join(tmpdir(), 'pb-faultdir-')), 'faults');
    driver = new FakeDriver();
    faultDir = new FaultDir(driver, dir, pino({ level: 'silent' }), 50, noInotify);
    await faultDir.start();
  });
  after(async () => {
    await faultDir.stop();
    await rm(join(dir, '..'), { recursive: true, force: true });
  });

  const command = (action: FaultCommand['action']): FaultCommand => ({
    action,
    driver: driver.driverName,
    device: 'gpu-0',
    reason: 'ECC errors',
    faultDir: dir,
    wait: true,
    timeoutMs: 10_000,
  });

  it('the status says the directory is polled, and why', async () => {
    const status = JSON.parse(await readFile(join(dir, FAULT_STATUS_FILE), 'utf8')) as FaultDirStatus;
    assert.equal(status.watch.mode, 'poll');
    assert.match(
      status.watch.reason ?? '',
      /^inotify instances exhausted \(fs\.inotify\.max_user_instances\)/,
    );
  });

  it('fault and heal both return once the driver applied them, polling on both sides', async () => {
    const opts = { watch: noInotify, pollMs: 20, warn: (line: string) => void warnings.push(line) };
    assert.deepEqual(await runFaultCommand(command('fault'), opts), {
      code: 0,
      message: 'gpu-0: faulted (ECC errors)',
    });
    assert.equal(driver.faults().get('gpu-0')?.reason, 'ECC errors');
    assert.deepEqual(await runFaultCommand(command('heal'), opts), { code: 0, message: 'gpu-0: healed' });
    assert.equal(driver.faults().size, 0);
    assert.equal(warnings.length, 2, 'each command says once that it polls');
    assert.match(warnings[0]!, /cannot be watched, polling it every 20 ms: inotify instances exhausted/);
  });
});
