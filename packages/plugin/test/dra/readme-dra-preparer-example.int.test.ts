// The README's DRA driver with its own preparer runs as written: examples/plugins/
// dra-driver-own-preparer.ts is the code block in the README; as its own process it registers with a
// test DRA kubelet, publishes its ResourceSlice, prepares claims with the vendor's CDI devices
// (writing no CDI spec and no checkpoint), refuses a widget another claim holds, unprepares, and
// stops on SIGTERM.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allocatedClaim, FakeApiServer } from './fake-api-server.js';
import { TestDraKubelet } from './test-dra-kubelet.js';

const root = fileURLToPath(new URL('../../../..', import.meta.url));
const example = join(root, 'examples/plugins/dra-driver-own-preparer.ts');
const DRIVER = 'widget.example.com';
const NODE = 'node-a';

describe('README DRA driver with its own preparer', () => {
  let api: FakeApiServer;
  let dir: string;

  before(async () => {
    api = await FakeApiServer.start();
    api.addNode(NODE);
    dir = await mkdtemp(join(tmpdir(), 'pb-dra-preparer-'));
  });

  after(async () => {
    await api.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('the README shows the example file verbatim', async () => {
    const readme = await readFile(join(root, 'packages/plugin/README.md'), 'utf8');
    const code = await readFile(example, 'utf8');
    assert.ok(
      readme.includes('```ts\n' + code + '```'),
      'README code block equals examples/plugins/dra-driver-own-preparer.ts',
    );
  });

  it('registers, publishes, prepares with the vendor CDI devices, refuses a held widget, unprepares, exits 0 on SIGTERM', async () => {
    const registry = join(dir, 'registry');
    const plugins = join(dir, 'plugins');
    await mkdir(registry, { recursive: true });
    const kubelet = new TestDraKubelet(registry);
    kubelet.start();
    const child = spawn(process.execPath, ['--conditions=@plugboard/source', '--import', 'tsx', example], {
      cwd: root,
      env: {
        ...process.env,
        KUBECONFIG: api.kubeconfigPath,
        NODE_NAME: NODE,
        PLUGINS_DIR: plugins,
        PLUGINS_REGISTRY_DIR: registry,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const exited = once(child, 'exit');
    try {
      await kubelet.registered(DRIVER, { timeoutMs: 60_000 });
      await api.waitFor(() => (api.slicesOf(DRIVER)[0]?.spec.devices?.length === 4 ? true : null), 60_000);

      const job = allocatedClaim({
        name: 'job',
        node: NODE,
        results: [{ driver: DRIVER, pool: NODE, device: 'widget-1', request: 'widget' }],
      });
      api.putClaim(job);
      const uid = job.metadata.uid;
      const res = await kubelet.prepare(DRIVER, [{ namespace: 'default', name: 'job', uid }]);
      assert.equal(res.claims[uid]!.error, '');
      assert.deepEqual(
        res.claims[uid]!.devices.map((d) => [d.requestNames, d.poolName, d.deviceName, d.cdiDeviceIds]),
        [[['widget'], NODE, 'widget-1', [`${DRIVER}/widget=widget-1`]]],
      );
      // Idempotent: asked again, the same answer.
      const again = await kubelet.prepare(DRIVER, [{ namespace: 'default', name: 'job', uid }]);
      assert.deepEqual(again.claims[uid], res.claims[uid]);
      // No CDI spec, no checkpoint: the default preparer is not there.
      assert.deepEqual(await readdir(join(plugins, DRIVER)), ['dra.sock']);

      const other = allocatedClaim({
        name: 'other',
        node: NODE,
        results: [{ driver: DRIVER, pool: NODE, device: 'widget-1', request: 'widget' }],
      });
      api.putClaim(other);
      const refused = await kubelet.prepare(DRIVER, [
        { namespace: 'default', name: 'other', uid: other.metadata.uid },
      ]);
      assert.equal(refused.claims[other.metadata.uid]!.error, 'widget-1 held by another claim');

      const un = await kubelet.unprepare(DRIVER, [{ namespace: 'default', name: 'job', uid }]);
      assert.equal(un.claims[uid]!.error, '');
      const now = await kubelet.prepare(DRIVER, [
        { namespace: 'default', name: 'other', uid: other.metadata.uid },
      ]);
      assert.equal(now.claims[other.metadata.uid]!.error, '');
    } finally {
      child.kill('SIGTERM');
      kubelet.stop();
    }
    const [code] = (await exited) as [number | null];
    assert.equal(code, 0);
    await assert.rejects(stat(join(registry, `${DRIVER}-reg.sock`)), { code: 'ENOENT' });
  });
});
