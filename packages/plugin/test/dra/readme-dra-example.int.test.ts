// The README's DRA driver runs as written: examples/plugins/minimal-dra-driver.ts is the code block
// in the README; as its own process it registers with a test DRA kubelet, publishes its
// ResourceSlice to the fake API server, prepares a claim with a CDI device (running its prepare
// hook), reports a broken widget to the kubelet and taints it, and stops on SIGTERM.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { drahealthv1 } from '@plugboard/proto';
import { allocatedClaim } from './fake-api-server.js';
import { readmeDraExample } from './readme-example.js';
import { healthOf } from './test-dra-kubelet.js';

const DRIVER = 'widget.example.com';
const NODE = 'node-a';

describe('README minimal DRA driver', () => {
  const example = readmeDraExample('minimal-dra-driver.ts', DRIVER, NODE);

  it('registers, publishes, prepares a claim with CDI, reports and taints a broken widget, exits 0 on SIGTERM', async () => {
    const { api, dir } = example;
    const cdi = join(dir, 'cdi');
    const env = { PLUGINS_DIR: join(dir, 'plugins'), CDI_DIR: cdi, WIDGET_FLAG_DIR: dir };
    await example.run(env, async (kubelet) => {
      const [slice] = await api.waitFor(() => {
        const slices = api.slicesOf(DRIVER);
        return slices[0]?.spec.devices?.length === 4 ? slices : null;
      }, 60_000);
      assert.deepEqual(slice!.spec.devices![1], {
        name: 'widget-1',
        attributes: {
          id: { string: 'widget-1' },
          'resource.kubernetes.io/numaNode': { int: 0 },
          model: { string: 'W-1000' },
          serial: { string: 'SN-widget-1' },
        },
        capacity: { memory: { value: '16Gi' } },
      });

      const claim = allocatedClaim({
        name: 'job',
        node: NODE,
        results: [{ driver: DRIVER, pool: NODE, device: 'widget-1', request: 'widget' }],
      });
      api.putClaim(claim);
      const uid = claim.metadata.uid;
      const res = await kubelet.prepare(DRIVER, [{ namespace: 'default', name: 'job', uid }]);
      assert.deepEqual(res.claims[uid]!.devices[0]!.cdiDeviceIds, [`k8s.${DRIVER}/device=${uid}-widget-1`]);
      const spec = JSON.parse(await readFile(join(cdi, `k8s.${DRIVER}-device_${uid}.json`), 'utf8')) as {
        devices: { containerEdits: { env: string[] } }[];
      };
      assert.deepEqual(spec.devices[0]!.containerEdits.env, ['WIDGET=widget-1', 'WIDGET_CLAIM=job']);
      assert.equal(await readFile(join(dir, 'widget-1.reset'), 'utf8'), 'reset\n', 'the prepare hook ran');

      await writeFile(join(dir, 'widget-2.broken'), '');
      const broken = await kubelet.health(
        DRIVER,
        (d) => healthOf(d, 'widget-2')?.health === drahealthv1.HealthStatus.UNHEALTHY,
      );
      assert.equal(healthOf(broken, 'widget-2')?.message, 'marked broken');
      await api.waitFor(
        () => api.slicesOf(DRIVER)[0]?.spec.devices?.[2]?.taints?.[0]?.effect === 'NoSchedule',
      );
      await rm(join(dir, 'widget-2.broken'));
      await kubelet.health(
        DRIVER,
        (d) => healthOf(d, 'widget-2')?.health === drahealthv1.HealthStatus.HEALTHY,
      );
      await api.waitFor(() => api.slicesOf(DRIVER)[0]?.spec.devices?.[2]?.taints === undefined);
    });
  });
});
