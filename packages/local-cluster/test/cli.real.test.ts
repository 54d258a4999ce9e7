// plugboard-cluster as a user runs it: `up --nodes 2` prints one JSON line and the real kubectl
// sees two Ready nodes at v1.37.2; `status` says what runs; `down` leaves no process, mount,
// socket or listening port; and every refusal says why, exits non-zero and leaves nothing started.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { cachedBinaries } from '../src/binaries.js';
import type { ClusterInfo } from '../src/state.js';

const run = promisify(execFile);
const CLI = new URL('../bin/plugboard-cluster.js', import.meta.url).pathname;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], opts: { env?: NodeJS.ProcessEnv; asUser?: number } = {}): Promise<Result> {
  const argv =
    opts.asUser === undefined
      ? [process.execPath, CLI, ...args]
      : [
          'setpriv',
          `--reuid=${opts.asUser}`,
          `--regid=${opts.asUser}`,
          '--clear-groups',
          process.execPath,
          CLI,
          ...args,
        ];
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

function sockets(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      const st = statSync(full, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(full);
      else if (st.isSocket()) out.push(full);
    }
  };
  walk(dir);
  return out;
}

const mountsUnder = (dir: string): string[] =>
  readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m.startsWith(dir));

function listening(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(true));
    srv.listen(port, host, () => srv.close(() => resolve(false)));
  });
}

describe('plugboard-cluster', () => {
  let dir: string;
  let info: ClusterInfo;
  let kubectl: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'pb-cluster-cli-'));
    const bins = cachedBinaries();
    assert.ok(bins, 'npm test built the binaries first');
    kubectl = bins.kubectl;
  });

  after(async () => {
    await cli(['down', '--dir', dir]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('up --nodes 2 prints one JSON line; the real kubectl shows two Ready nodes at v1.37.2', async () => {
    const res = await cli(['up', '--nodes', '2', '--dir', dir, '--apiserver-port', '0']);
    assert.equal(res.code, 0, res.stderr);
    const lines = res.stdout.trim().split('\n');
    assert.equal(lines.length, 1, 'exactly one line on stdout');
    info = JSON.parse(lines[0]!) as ClusterInfo;
    assert.equal(info.kubeconfig, join(dir, 'kubeconfig'));
    assert.deepEqual(
      info.nodes.map((n) => n.name),
      ['node-1', 'node-2'],
    );
    assert.deepEqual(info.nodes[0]!.exec, [], 'the first node runs in the host’s view');
    assert.equal(info.nodes[0]!.devicePluginDir, '/var/lib/kubelet/device-plugins');
    assert.notEqual(info.nodes[1]!.devicePluginDir, info.nodes[0]!.devicePluginDir);
    assert.equal(info.nodes[1]!.exec[0], 'nsenter');
    for (const n of info.nodes) {
      for (const k of [
        'devicePluginDir',
        'pluginsRegistryDir',
        'pluginsDir',
        'podResourcesSocket',
        'kubeconfig',
      ] as const) {
        assert.equal(typeof n[k], 'string', `${n.name}.${k}`);
      }
      assert.ok(existsSync(n.podResourcesSocket), n.podResourcesSocket);
      assert.ok(existsSync(join(n.devicePluginDir, 'kubelet.sock')));
    }
    const { stdout } = await run(kubectl, ['--kubeconfig', info.kubeconfig, 'get', 'nodes', '-o', 'json']);
    const nodes = JSON.parse(stdout) as {
      items: {
        metadata: { name: string };
        status: { nodeInfo: { kubeletVersion: string }; conditions: { type: string; status: string }[] };
      }[];
    };
    assert.deepEqual(nodes.items.map((n) => n.metadata.name).sort(), ['node-1', 'node-2']);
    for (const n of nodes.items) {
      assert.equal(n.status.nodeInfo.kubeletVersion, 'v1.37.2');
      assert.equal(n.status.conditions.find((c) => c.type === 'Ready')?.status, 'True');
    }
    const version = await run(kubectl, ['--kubeconfig', info.kubeconfig, 'version', '-o', 'json']);
    assert.equal(
      (JSON.parse(version.stdout) as { serverVersion: { gitVersion: string } }).serverVersion.gitVersion,
      'v1.37.2',
    );
    // The second node's kubelet sees its own directory at the hard-coded path: a process run with
    // `exec` finds that kubelet's socket there.
    const [execCmd = 'nsenter', ...execArgs] = info.nodes[1]!.exec;
    const inside = await run(execCmd, [...execArgs, 'ls', '/var/lib/kubelet/device-plugins']);
    assert.match(inside.stdout, /kubelet\.sock/);
  });

  it('status names every component up, with its log', async () => {
    const res = await cli(['status', '--dir', dir, '--json']);
    assert.equal(res.code, 0, res.stderr);
    const s = JSON.parse(res.stdout) as { components: { name: string; up: boolean; log: string }[] };
    const names = s.components.map((c) => c.name);
    for (const want of [
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
      'kubelet node-1',
      'kubelet node-2',
      'fake-runtime node-2',
      'mount namespace node-2',
    ]) {
      assert.ok(names.includes(want), want);
    }
    assert.ok(
      s.components.every((c) => c.up && existsSync(c.log)),
      JSON.stringify(s.components),
    );
  });

  it('refuses, with a clear message and non-zero exit, and starts nothing: a DIR in use, a busy port, bad flags, not root, no Go, a component that exits', async () => {
    const inUse = await cli(['up', '--nodes', '1', '--dir', dir, '--apiserver-port', '0']);
    assert.equal(inUse.code, 1);
    assert.match(inUse.stderr, /is in use by a running cluster .* run plugboard-cluster down --dir/);

    const busy: Server = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as { port: number }).port;
    const other = mkdtempSync(join(tmpdir(), 'pb-cluster-busy-'));
    try {
      const res = await cli(['up', '--nodes', '0', '--dir', other, '--apiserver-port', String(port)]);
      assert.equal(res.code, 1);
      assert.match(
        res.stderr,
        new RegExp(`port ${port} on 127\\.0\\.0\\.1, for kube-apiserver, is in use .* pass --apiserver-port`),
      );
      assert.ok(!existsSync(join(other, 'cluster.json')), 'nothing started');
    } finally {
      busy.close();
    }

    const badFlag = await cli(['up', '--nodes', 'two', '--dir', other]);
    assert.equal(badFlag.code, 2);
    assert.match(badFlag.stderr, /--nodes: expected a whole number ≥ 0, got "two"/);

    const longDir = join(other, 'a-directory-name-long-enough-that-no-driver-could-register-under-it');
    const tooLong = await cli(['up', '--nodes', '1', '--dir', longDir]);
    assert.equal(tooLong.code, 2);
    assert.match(
      tooLong.stderr,
      /is too long for node node-1's sockets: a DRA driver registers at .*plugins_registry\/<driver>-reg\.sock .* use a shorter --dir/,
    );
    assert.ok(!existsSync(longDir), 'nothing created');

    const notRoot = await cli(['up', '--nodes', '0', '--dir', join(other, 'x')], { asUser: 65534 });
    assert.equal(notRoot.code, 1);
    assert.match(notRoot.stderr, /must run as root .* sudo/);

    const noGo = await cli(['build'], {
      env: { GO: '/nonexistent/go', PLUGBOARD_CACHE_DIR: join(other, 'cache') },
    });
    assert.equal(noGo.code, 1);
    assert.match(
      noGo.stderr,
      /Go 1\.26\.0 or newer is needed .* "\/nonexistent\/go" cannot be run .* set GO/,
    );

    const crashDir = join(other, 'crash');
    const crash = await cli([
      'up',
      '--nodes',
      '0',
      '--dir',
      crashDir,
      '--apiserver-port',
      '0',
      '--component-arg',
      'kube-apiserver=--no-such-flag',
    ]);
    assert.equal(crash.code, 1);
    assert.match(
      crash.stderr,
      /kube-apiserver exited while waiting for kube-apiserver to be ready; the end of its log/,
    );
    assert.match(crash.stderr, /unknown flag: --no-such-flag/);
    const st = JSON.parse(readFileSync(join(crashDir, 'cluster.json'), 'utf8')) as {
      controlPlane: { pid: number; name: string }[];
    };
    for (const p of st.controlPlane)
      assert.ok(
        !existsSync(`/proc/${p.pid}/cmdline`) || readFileSync(`/proc/${p.pid}/stat`, 'utf8').includes(') Z'),
        `${p.name} stopped`,
      );
    rmSync(other, { recursive: true, force: true });
  });

  it('down stops everything and leaves no process, mount, socket or listening port', async () => {
    const state = JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as {
      controlPlane: { pid: number }[];
      ports: { apiserver: number };
      nodeIP: string;
    };
    const nodePids = info.nodes.map(
      (n) =>
        JSON.parse(readFileSync(join(dir, 'nodes', n.name, 'node.json'), 'utf8')) as {
          kubelet: { pid: number };
          runtime: { pid: number };
          namespace: { pid: number };
          port: number;
        },
    );
    const res = await cli(['down', '--dir', dir]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /stopped etcd, kube-apiserver/);
    const pids = [
      ...state.controlPlane.map((p) => p.pid),
      ...nodePids.flatMap((n) => [n.kubelet.pid, n.runtime.pid, n.namespace.pid]),
    ];
    for (const pid of pids) {
      const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
      assert.ok(stat === '' || /\) Z /.test(stat), `pid ${pid} is gone`);
    }
    assert.deepEqual(mountsUnder(dir), []);
    assert.deepEqual(sockets(dir), []);
    assert.ok(
      !existsSync('/var/lib/kubelet/device-plugins/kubelet.sock'),
      'the host device-plugin directory holds no socket of it',
    );
    assert.equal(await listening(state.ports.apiserver), false);
    for (const n of nodePids) assert.equal(await listening(n.port, state.nodeIP), false);
    mkdirSync(dir, { recursive: true });
  });
});
