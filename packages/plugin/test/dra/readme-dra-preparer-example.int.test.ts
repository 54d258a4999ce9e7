// The README's DRA driver with its own preparer runs as written: examples/plugins/
// dra-driver-own-preparer.ts is the code block in the README; as its own process it registers with a
// test DRA kubelet, publishes its ResourceSlice, prepares claims with the vendor's CDI devices
// (writing no CDI spec and no checkpoint), refuses a widget another claim holds, unprepares, and
// stops on SIGTERM.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { allocatedClaim } from './fake-api-server.js';
import { readmeDraExample } from './readme-example.js';

const DRIVER = 'widget.example.com';
const NODE = 'node-a';

describe('README DRA driver with its own preparer', () => {
  const example = readmeDraExample('dra-driver-own-preparer.ts', DRIVER, NODE);

  it('registers, publishes, prepares with the vendor CDI devices, refuses a held widget, unprepares, exits 0 on SIGTERM', async () => {
    const plugins = join(example.dir, 'plugins');
    const api = example.api;
    await example.run({ PLUGINS_DIR: plugins }, async (kubelet) => {
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
    });
  });
});
