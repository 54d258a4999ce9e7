// The plugboard-kubelet-sim CLI through its bin shim: flag errors exit 2 naming the flag; a
// running simulator logs a ready line, serves the control API and cleans up on SIGTERM.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/plugboard-kubelet-sim.js', import.meta.url));

test('bad flags exit 2 and name the flag', () => {
  const res = spawnSync(
    process.execPath,
    [BIN, '--device-plugin-dir', '/tmp/x', '--state-dir', '/tmp/y', '--numa-nodes', '0'],
    { encoding: 'utf8' },
  );
  assert.equal(res.status, 2);
  assert.match(res.stderr, /--numa-nodes: expected a positive integer, got "0"/);
  const unknown = spawnSync(process.execPath, [BIN, '--bogus'], { encoding: 'utf8' });
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /Unknown option '--bogus'/);
});

test('a listen address that cannot be bound exits 2 naming --listen', async () => {
  const root = mkdtempSync(join(tmpdir(), 'pb-ksim-cli-'));
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  try {
    const port = (blocker.address() as AddressInfo).port;
    const res = spawnSync(
      process.execPath,
      [
        BIN,
        '--device-plugin-dir',
        join(root, 'dp'),
        '--state-dir',
        join(root, 'st'),
        '--listen',
        `127.0.0.1:${port}`,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(res.status, 2);
    assert.match(res.stdout, /listen: cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/);
  } finally {
    blocker.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test('runs, answers the control API, and removes its sockets on SIGTERM', async () => {
  const root = mkdtempSync(join(tmpdir(), 'pb-ksim-cli-'));
  const dp = join(root, 'dp');
  const child = spawn(
    process.execPath,
    [
      BIN,
      '--device-plugin-dir',
      dp,
      '--state-dir',
      join(root, 'st'),
      '--node-name',
      'cli-node',
      '--cpus',
      '4',
      '--numa-nodes',
      '2',
      '--topology-manager-policy',
      'single-numa-node',
      '--topology-manager-scope',
      'pod',
      '--reserved-cpus',
      '0',
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  try {
    const ready = await new Promise<{ url: string; kubeconfig: string }>((resolve, reject) => {
      const lines = createInterface(child.stdout);
      lines.on('line', (line) => {
        const entry = JSON.parse(line) as { msg: string; url: string; kubeconfig: string };
        if (entry.msg === 'ready') resolve(entry);
      });
      child.once('exit', (code) => reject(new Error(`exited early with ${code}`)));
    });
    assert.ok(existsSync(ready.kubeconfig));
    const state = (await (await fetch(`${ready.url}/control/v1/state`)).json()) as {
      node: {
        name: string;
        numaNodes: { cpus: number[] }[];
        topologyManagerPolicy: string;
        topologyManagerScope: string;
        reservedCpus: number[];
      };
    };
    assert.equal(state.node.name, 'cli-node');
    assert.deepEqual(
      [state.node.topologyManagerPolicy, state.node.topologyManagerScope, state.node.reservedCpus],
      ['single-numa-node', 'pod', [0]],
    );
    assert.deepEqual(
      state.node.numaNodes.map((n) => n.cpus),
      [
        [0, 1],
        [2, 3],
      ],
    );
    assert.ok(existsSync(join(dp, 'kubelet.sock')));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.equal(existsSync(join(dp, 'kubelet.sock')), false);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  }
});
