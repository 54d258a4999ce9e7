// plugboard-plugin with DRA drivers, as real processes: examples/dra-node.yaml beside a device plugin
// in one process against a test kubelet (both kinds), a test DRA kubelet and the fake API server;
// `plugboard-plugin fault` / `heal` from another process reaching the kubelet's health stream and
// the ResourceSlice taint; SIGTERM removing both sockets and leaving the slices; and the errors a
// user meets first (no API access, a bad dra: section, an unknown device).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drahealthv1 } from '@plugboard/proto';
import { TestKubelet } from '../test-kubelet.js';
import { FakeApiServer } from './fake-api-server.js';
import { healthOf, TestDraKubelet } from './test-dra-kubelet.js';

const root = fileURLToPath(new URL('../../../..', import.meta.url));
const CLI = ['--conditions=@plugboard/source', '--import', 'tsx', 'packages/plugin/src/cli.ts'];
const EXAMPLE = join(root, 'examples/dra-node.yaml');
const DRIVER = 'gpu.plugboard.example';
const NODE = 'node-a';
const { UNHEALTHY, HEALTHY } = drahealthv1.HealthStatus;

/** The process environment without anything that points at a cluster. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (key.startsWith('PLUGBOARD_') || key.startsWith('KUBE') || key === 'NODE_NAME') delete env[key];
  }
  return { ...env, ...extra };
}

function run(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const done = once(child, 'exit').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  return { child, done };
}

describe('plugboard-plugin with DRA drivers', () => {
  let api: FakeApiServer;
  let dir: string;

  before(async () => {
    api = await FakeApiServer.start();
    api.addNode(NODE);
    dir = await mkdtemp(join(tmpdir(), 'pb-dra-cli-'));
  });

  after(async () => {
    await api.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs examples/dra-node.yaml beside a device plugin; fault and heal from outside; SIGTERM leaves the slices', async () => {
    const plugins = join(dir, 'plugins');
    const registry = join(dir, 'plugins_registry');
    const cdi = join(dir, 'cdi');
    await mkdir(registry, { recursive: true });
    const dp = await TestKubelet.create();
    const kubelet = new TestDraKubelet(registry);
    kubelet.start();
    const config = join(dir, 'node.yaml');
    // The example's dra: section, plus one device plugin in the same file and process.
    await writeFile(
      config,
      `${await readFile(EXAMPLE, 'utf8')}\nresources:\n  - name: plugboard.example/nic\n    simulated: { count: 2, idPrefix: vf }\n`,
    );
    const dpRegistered = dp.nextRegistration('plugboard.example/nic', 60_000);
    const draRegistered = kubelet.registered(DRIVER, { timeoutMs: 60_000 });
    const proc = run(
      [...CLI, '--config', config, '--device-plugin-dir', dp.dir, '--plugins-dir', plugins, '--cdi-dir', cdi],
      cleanEnv({ PLUGBOARD_PLUGINS_REGISTRY_DIR: registry, KUBECONFIG: api.kubeconfigPath, NODE_NAME: NODE }),
    );
    const fault = (...args: string[]) =>
      run([...CLI, ...args, '--plugins-dir', plugins, '--driver', DRIVER], cleanEnv()).done;
    try {
      await Promise.all([dpRegistered, draRegistered]);
      await dp.waitForDevices('plugboard.example/nic', (d) => d.length === 2, 60_000);
      const [slice] = await api.waitFor(() => {
        const slices = api.slicesOf(DRIVER);
        return slices.length === 1 && slices[0]!.spec.devices?.length === 8 ? slices : null;
      }, 60_000);
      assert.deepEqual(slice!.spec.pool, { name: NODE, generation: 1, resourceSliceCount: 1 });
      assert.deepEqual(slice!.spec.devices![5], {
        name: 'gpu-5',
        attributes: {
          id: { string: 'gpu-5' },
          'resource.kubernetes.io/numaNode': { int: 1 },
          model: { string: 'PB-100' },
          productName: { string: 'Plugboard PB-100 (gpu-5)' },
          driverVersion: { version: '1.0.0' },
          simulated: { bool: true },
        },
        capacity: { memory: { value: '80Gi' } },
      });
      const health = await kubelet.health(DRIVER, (d) => d.length === 8, 60_000);
      assert.ok(health.every((d) => d.health === HEALTHY && d.healthCheckTimeoutSeconds === 30));

      // Fault one device by name from another process: it returns once the driver applied it.
      const faulted = await fault('fault', '--device', 'gpu-3', '--reason', 'simulated: ECC errors');
      assert.deepEqual(
        [faulted.code, faulted.stdout, faulted.stderr],
        [0, 'gpu-3: faulted (simulated: ECC errors)\n', ''],
      );
      const unhealthy = await kubelet.health(DRIVER, (d) => healthOf(d, 'gpu-3')?.health === UNHEALTHY);
      assert.equal(healthOf(unhealthy, 'gpu-3')?.message, 'simulated: ECC errors');
      const taint = await api.waitFor(
        () => api.slicesOf(DRIVER)[0]?.spec.devices?.find((d) => d.name === 'gpu-3')?.taints?.[0],
      );
      assert.deepEqual(
        [taint.key, taint.value, taint.effect],
        [`${DRIVER}/unhealthy`, 'fault', 'NoSchedule'],
      );

      const healed = await fault('heal', '--device', 'gpu-3');
      assert.deepEqual([healed.code, healed.stdout, healed.stderr], [0, 'gpu-3: healed\n', '']);
      await kubelet.health(DRIVER, (d) => healthOf(d, 'gpu-3')?.health === HEALTHY);
      await api.waitFor(
        () => !api.slicesOf(DRIVER)[0]?.spec.devices?.find((d) => d.name === 'gpu-3')?.taints,
      );

      const unknown = await fault('fault', '--device', 'gpu-42');
      assert.equal(unknown.code, 1);
      assert.match(
        unknown.stderr,
        /driver gpu\.plugboard\.example has no device "gpu-42" \(fault file removed again\)/,
      );
      assert.deepEqual((await readdir(join(plugins, DRIVER, 'faults'))).sort(), ['.status.json']);

      const signalled = Date.now();
      proc.child.kill('SIGTERM');
      const { code } = await proc.done;
      assert.equal(code, 0);
      assert.ok(Date.now() - signalled < 5000);
      await assert.rejects(stat(join(plugins, DRIVER, 'dra.sock')), { code: 'ENOENT' });
      await assert.rejects(stat(join(registry, `${DRIVER}-reg.sock`)), { code: 'ENOENT' });
      assert.deepEqual(
        (await readdir(dp.dir)).filter((n) => n.endsWith('.sock')),
        ['kubelet.sock'],
      );
      // The ResourceSlices stay, as upstream's helper leaves them (the kubelet wipes them if the
      // driver does not come back).
      assert.equal(api.slicesOf(DRIVER).length, 1);
    } catch (err) {
      proc.child.kill('SIGKILL');
      const { stdout, stderr } = await proc.done;
      throw new Error(
        `${(err as Error).message}\n--- plugboard-plugin stdout:\n${stdout}\n--- stderr:\n${stderr}`,
        {
          cause: err,
        },
      );
    } finally {
      proc.child.kill('SIGKILL');
      kubelet.stop();
      await dp.stop();
    }
  });

  it('exits 1 naming the way to give it API access when a file has DRA drivers and there is none', async () => {
    const { code, stderr } = await run(
      [
        ...CLI,
        '--config',
        EXAMPLE,
        '--plugins-dir',
        join(dir, 'p2'),
        '--plugins-registry-dir',
        join(dir, 'r2'),
      ],
      cleanEnv(),
    ).done;
    assert.equal(code, 1);
    assert.match(
      stderr,
      /dra-node\.yaml: dra\[0\]\.driver gpu\.plugboard\.example: DRA drivers need the Kubernetes API: pass --kubeconfig FILE/,
    );
  });

  it('exits 1 on a bad dra: section, naming file, field and reason', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(
      file,
      'dra:\n  - driver: GPU.example\n    simulated: { count: 2 }\n    taints: { effect: PreferNoSchedule }\n',
    );
    const { code, stderr } = await run(
      [...CLI, '--config', file],
      cleanEnv({ KUBECONFIG: api.kubeconfigPath }),
    ).done;
    assert.equal(code, 1);
    assert.ok(stderr.includes(`${file}: dra[0].driver: must be a lower-case DNS subdomain`), stderr);
    assert.ok(stderr.includes(`${file}: dra[0].taints.effect:`), stderr);
  });

  it('fault/heal: bad flags exit 2, and a driver that is not running exits 1 after the timeout', async () => {
    const bad = await run([...CLI, 'fault', '--driver', DRIVER], cleanEnv()).done;
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /fault: --device ID is required/);
    const none = await run(
      [
        ...CLI,
        'fault',
        '--driver',
        DRIVER,
        '--device',
        'gpu-0',
        '--plugins-dir',
        join(dir, 'nobody'),
        '--timeout-ms',
        '200',
      ],
      cleanEnv(),
    ).done;
    assert.equal(none.code, 1);
    assert.match(none.stderr, /driver gpu\.plugboard\.example did not apply the fault within 200 ms/);
  });
});
