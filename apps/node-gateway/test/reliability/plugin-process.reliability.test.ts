// The `plugboard-plugin` CLI as a real child process, killed with SIGKILL (no cleanup: its socket
// file stays behind) and started again, K times (2 short, 10 full): the new process replaces the
// stale socket, registers again, the kubelet gets its devices back, and exactly one server listens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startKubeletSim } from '@plugboard/kubelet-sim';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { report, sized } from './figures.js';
import { listeningUnixSockets, silent, waitFor } from './harness.js';

const KILLS = sized(2, 10);
const BIN = fileURLToPath(new URL('../../../../packages/plugin/bin/plugboard-plugin.js', import.meta.url));
const RESOURCE = 'plugboard.example/fpga';

const connects = (path: string): Promise<boolean> =>
  new Promise((resolve) => {
    const s = createConnection(path);
    s.on('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });

test(`plugin process killed with SIGKILL and restarted ${KILLS} times: stale socket replaced, re-registration works`, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pb-rel-kill-'));
  const sim = await startKubeletSim({
    devicePluginDir: join(dir, 'dp'),
    stateDir: join(dir, 'kubelet'),
    listen: '127.0.0.1:0',
    logger: silent,
    gracePeriodMs: 60_000,
  });
  const cfg = join(dir, 'plugin.yaml');
  writeFileSync(cfg, `resources:\n  - name: ${RESOURCE}\n    simulated: { count: 4, numaNodes: [0] }\n`);
  const socket = join(sim.devicePluginDir, 'plugboard.example-fpga.sock');
  let child: ChildProcess | null = null;
  t.after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  let registrations = 0;
  sim.on('registered', (e: { resource: string }) => e.resource === RESOURCE && registrations++);
  const start = async (): Promise<number> => {
    const before = registrations;
    const t0 = performance.now();
    child = spawn(
      process.execPath,
      [BIN, '--config', cfg, '--device-plugin-dir', sim.devicePluginDir, '--log-level', 'warn'],
      { stdio: 'ignore' },
    );
    await waitFor(
      'registered with the kubelet',
      () => registrations > before && sim.state().resources[RESOURCE]?.allocatable === 4,
      30_000,
      20,
    );
    return performance.now() - t0;
  };
  const times = [await start()];
  for (let i = 0; i < KILLS; i++) {
    const c = child!;
    c.kill('SIGKILL');
    await once(c, 'exit');
    // No cleanup ran: the socket file is still there but nobody serves it.
    assert.ok(existsSync(socket), 'stale socket file left behind');
    assert.equal(await connects(socket), false, 'stale socket refuses connections');
    await waitFor(
      'the kubelet notices the stream ending',
      () => sim.state().resources[RESOURCE]?.allocatable === 0,
    );
    times.push(await start());
    assert.equal(await connects(socket), true, 'the new process serves the socket');
    assert.deepEqual(
      listeningUnixSockets(sim.devicePluginDir).filter((p) => p === socket),
      [socket],
      'exactly one server',
    );
  }
  assert.equal(registrations, KILLS + 1);
  assert.equal(sim.state().resources[RESOURCE]!.registered, true);
  assert.equal(sim.state().resources[RESOURCE]!.capacity, 4);
  report(t, {
    scenario: 'plugin-sigkill',
    figure: 'SIGKILLs survived (stale socket replaced, re-registered)',
    value: KILLS,
  });
  report(t, {
    scenario: 'plugin-sigkill',
    figure: 'process start → registered (max)',
    value: Math.max(...times).toFixed(0),
    unit: 'ms',
  });
});
