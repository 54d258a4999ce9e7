// The README's minimal device plugin runs as written: the file in examples/plugins is the code
// block in the README, and it registers with a test kubelet, reports health both ways and stops
// on SIGTERM.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deviceplugin } from '@plugboard/proto';
import { healthOf, TestKubelet } from './test-kubelet.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const example = join(root, 'examples/plugins/minimal-plugin.ts');
const RESOURCE = 'example.com/widget';

describe('README minimal device plugin', () => {
  let kubelet: TestKubelet;
  before(async () => {
    kubelet = await TestKubelet.create();
  });
  after(() => kubelet.stop());

  it('the README shows the example file verbatim', async () => {
    const readme = await readFile(join(root, 'packages/plugin/README.md'), 'utf8');
    const code = await readFile(example, 'utf8');
    assert.ok(
      readme.includes('```ts\n' + code + '```'),
      'README code block equals examples/plugins/minimal-plugin.ts',
    );
  });

  it('registers, advertises, turns a device Unhealthy and back, answers Allocate, exits 0 on SIGTERM', async () => {
    const registered = kubelet.nextRegistration(RESOURCE, 15_000);
    const child = spawn(process.execPath, ['--conditions=@plugboard/source', '--import', 'tsx', example], {
      cwd: root,
      env: { ...process.env, DEVICE_PLUGIN_DIR: kubelet.dir, WIDGET_FLAG_DIR: kubelet.dir },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const exited = once(child, 'exit');
    try {
      await registered;
      const first = await kubelet.waitForDevices(RESOURCE, (d) => d.length === 4);
      assert.deepEqual(first.find((d) => d.ID === 'widget-1')?.topology?.nodes, [{ ID: 1 }]);
      const flag = join(kubelet.dir, 'widget-2.broken');
      await writeFile(flag, '');
      await kubelet.waitForDevices(RESOURCE, (d) => healthOf(d, 'widget-2') === 'Unhealthy');
      await rm(flag);
      await kubelet.waitForDevices(RESOURCE, (d) => healthOf(d, 'widget-2') === 'Healthy');
      const res = await kubelet.call<deviceplugin.AllocateRequest, deviceplugin.AllocateResponse>(
        RESOURCE,
        'allocate',
        {
          containerRequests: [{ devicesIds: ['widget-0', 'widget-3'] }],
        },
      );
      assert.deepEqual(res.containerResponses[0]!.envs, { WIDGETS: 'widget-0,widget-3' });
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = (await exited) as [number | null];
    assert.equal(code, 0);
  });
});
