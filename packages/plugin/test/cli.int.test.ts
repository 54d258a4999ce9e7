// The plugboard-plugin CLI as a real process: --help, bad flags, bad config (names file and
// field, non-zero exit), and a run against a test kubelet that SIGTERM ends cleanly.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TestKubelet } from './test-kubelet.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const CLI = ['--conditions=@plugboard/source', '--import', 'tsx', 'packages/plugin/src/cli.ts'];
// A bound, not a wait: the CLI starts from source (tsx compiles the plugin's modules on first load),
// which took over 15 s at load 14 on two cores; every wait below ends on its event.
const START_BOUND_MS = 60_000;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Running {
  child: ChildProcess;
  done: Promise<Result>;
  /** Resolves once stdout so far satisfies `predicate` (checked on every chunk). */
  stdoutMatches: (predicate: (stdout: string) => boolean, timeoutMs?: number) => Promise<void>;
}

function run(args: string[], env: NodeJS.ProcessEnv = {}): Running {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const done = once(child, 'exit').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  const stdoutMatches = async (
    predicate: (s: string) => boolean,
    timeoutMs = START_BOUND_MS,
  ): Promise<void> => {
    const signal = AbortSignal.timeout(timeoutMs);
    while (!predicate(stdout)) await once(child.stdout, 'data', { signal });
  };
  return { child, done, stdoutMatches };
}

describe('plugboard-plugin CLI', () => {
  let kubelet: TestKubelet;
  before(async () => {
    kubelet = await TestKubelet.create();
  });
  after(() => kubelet.stop());

  it('--help documents every flag and exits 0', async () => {
    const { code, stdout } = await run([...CLI, '--help']).done;
    assert.equal(code, 0);
    for (const flag of [
      '--config',
      '--device-plugin-dir',
      '--kubelet-socket',
      '--registration-mode',
      '--plugins-registry-dir',
      '--cdi-dir',
      '--log-level',
      '--node-name',
      '--help',
      '--plugins-dir',
      '--kubeconfig',
      '--accept-raw-path-authority',
      'PLUGBOARD_ACCEPT_RAW_PATH_AUTHORITY',
      'PLUGBOARD_CONFIG',
      'PLUGBOARD_DEVICE_PLUGIN_DIR',
      'PLUGBOARD_PLUGINS_DIR',
      'PLUGBOARD_PLUGINS_REGISTRY_DIR',
      'PLUGBOARD_CDI_DIR',
      'PLUGBOARD_KUBECONFIG',
      'PLUGBOARD_NODE_NAME',
      'NODE_NAME',
      'KUBECONFIG',
      'plugboard-plugin fault',
      'plugboard-plugin heal',
    ]) {
      assert.ok(stdout.includes(flag), flag);
    }
  });

  it('the bin shim runs from source', async () => {
    const { code, stdout } = await run(['packages/plugin/bin/plugboard-plugin.js', '--help']).done;
    assert.equal(code, 0);
    assert.match(stdout, /^Usage: plugboard-plugin/);
  });

  it('bad flags exit 2 with the reason', async () => {
    const { code, stderr } = await run([...CLI, '--config', 'x.yaml', '--registration-mode', 'magic']).done;
    assert.equal(code, 2);
    assert.match(stderr, /--registration-mode must be one of kubelet, plugin-watcher, got "magic"/);
    const missing = await run([...CLI], { PLUGBOARD_CONFIG: '' }).done;
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--config FILE \(or PLUGBOARD_CONFIG\) is required/);
  });

  it('a bad config exits 1 naming the file, the field and the reason', async () => {
    const file = join(kubelet.dir, 'bad.yaml');
    await writeFile(file, 'resources:\n  - name: gpu\n    simulated: { count: 2, extra: true }\n');
    const { code, stderr } = await run([...CLI, '--config', file, '--device-plugin-dir', kubelet.dir]).done;
    assert.equal(code, 1);
    assert.ok(stderr.includes(`${file}: resources[0].name: must be domain-prefixed`), stderr);
    assert.ok(stderr.includes(`${file}: resources[0].simulated: unknown key "extra"`), stderr);
  });

  it('serves, registers, and on SIGTERM removes its sockets and exits 0 within 5 s', async () => {
    const file = join(kubelet.dir, 'plugin.yaml');
    await writeFile(
      file,
      'resources:\n  - name: plugboard.example/gpu\n    simulated: { count: 2 }\n  - name: plugboard.example/fpga\n    simulated: { count: 1 }\n',
    );
    const registered = Promise.all([
      kubelet.nextRegistration('plugboard.example/gpu', START_BOUND_MS),
      kubelet.nextRegistration('plugboard.example/fpga', START_BOUND_MS),
    ]);
    // Config and directory from the environment this time.
    const { child, done, stdoutMatches } = run(CLI, {
      PLUGBOARD_CONFIG: file,
      PLUGBOARD_DEVICE_PLUGIN_DIR: kubelet.dir,
    });
    await registered;
    // The plugin logs its registration once the kubelet's answer is back (logs are buffered).
    await stdoutMatches((s) => s.split('registered with kubelet').length === 3);
    await kubelet.waitForDevices('plugboard.example/gpu', (d) => d.length === 2);
    assert.deepEqual((await readdir(kubelet.dir)).filter((n) => n.endsWith('.sock')).sort(), [
      'kubelet.sock',
      'plugboard.example-fpga.sock',
      'plugboard.example-gpu.sock',
    ]);
    const signalled = Date.now();
    child.kill('SIGTERM');
    const { code, stdout } = await done;
    assert.equal(code, 0);
    assert.ok(Date.now() - signalled < 5000);
    assert.deepEqual(
      (await readdir(kubelet.dir)).filter((n) => n.endsWith('.sock')),
      ['kubelet.sock'],
    );
    // JSON logs: registration and the stop are logged as lines of JSON.
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; resource?: string });
    assert.ok(
      lines.some((l) => l.msg === 'registered with kubelet' && l.resource === 'plugboard.example/gpu'),
    );
    assert.ok(lines.some((l) => l.msg === 'stopped'));
  });
});
