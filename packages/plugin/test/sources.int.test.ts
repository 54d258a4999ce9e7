// Real device sources behind the plugin, end to end to a test kubelet: device nodes appearing and
// disappearing (paths) reach ListAndWatch and the CDI spec; PCI devices from the committed sysfs
// fixture arrive with their NUMA topology and device nodes in Allocate.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { deviceplugin } from '@plugboard/proto';
import { parsePluginConfig, startPlugins, type PluginRuntime } from '../src/index.js';
import { ids, TestKubelet } from './test-kubelet.js';

const TTY = 'plugboard.example/serial';
const GPU = 'plugboard.example/pci-gpu';
const sysfs = fileURLToPath(new URL('./fixtures/sys', import.meta.url));

async function cdiNames(dir: string): Promise<string[]> {
  const spec = JSON.parse(await readFile(join(dir, 'plugboard.example-serial.json'), 'utf8')) as {
    devices: { name: string }[];
  };
  return spec.devices.map((d) => d.name);
}

describe('device sources through the plugin', () => {
  let kubelet: TestKubelet;
  let runtime: PluginRuntime;
  let devDir: string;
  let cdiDir: string;

  before(async () => {
    kubelet = await TestKubelet.create();
    devDir = await mkdtemp(join(tmpdir(), 'pb-dev-'));
    cdiDir = await mkdtemp(join(tmpdir(), 'pb-cdi-'));
    await writeFile(join(devDir, 'ttyUSB0'), '');
    const config = parsePluginConfig({
      resources: [
        {
          name: TTY,
          paths: { patterns: [join(devDir, 'ttyUSB*')], pollIntervalMs: 200 },
          allocate: { cdi: { vendor: 'plugboard.example', class: 'serial', specDir: cdiDir } },
        },
        {
          name: GPU,
          sysfsPci: {
            root: sysfs,
            vendor: '0x10de',
            class: '0x0302',
            deviceNodePattern: '/dev/vfio/{iommuGroup}',
          },
        },
      ],
    });
    const registered = Promise.all([kubelet.nextRegistration(TTY), kubelet.nextRegistration(GPU)]);
    runtime = await startPlugins(config, { devicePluginDir: kubelet.dir });
    await registered;
  });

  after(async () => {
    await runtime.stop();
    await kubelet.stop();
    await rm(devDir, { recursive: true, force: true });
    await rm(cdiDir, { recursive: true, force: true });
  });

  it('paths: a device node appearing and disappearing reaches ListAndWatch and the CDI spec', async () => {
    assert.deepEqual(ids(await kubelet.waitForDevices(TTY, (d) => d.length === 1)), ['ttyUSB0']);
    assert.deepEqual(await cdiNames(cdiDir), ['ttyUSB0']);
    await writeFile(join(devDir, 'ttyUSB1'), '');
    assert.deepEqual(ids(await kubelet.waitForDevices(TTY, (d) => d.length === 2)), ['ttyUSB0', 'ttyUSB1']);
    await unlink(join(devDir, 'ttyUSB0'));
    assert.deepEqual(ids(await kubelet.waitForDevices(TTY, (d) => d.length === 1)), ['ttyUSB1']);
    // The spec follows the device set (written after the list changes; poll until it has).
    const deadline = Date.now() + 3000;
    while ((await cdiNames(cdiDir)).join() !== 'ttyUSB1') {
      assert.ok(Date.now() < deadline, 'CDI spec updated');
      await new Promise((r) => setTimeout(r, 20));
    }
    const res = await kubelet.call<deviceplugin.AllocateRequest, deviceplugin.AllocateResponse>(
      TTY,
      'allocate',
      {
        containerRequests: [{ devicesIds: ['ttyUSB1'] }],
      },
    );
    const container = res.containerResponses[0]!;
    assert.deepEqual(container.devices, [
      { hostPath: join(devDir, 'ttyUSB1'), containerPath: join(devDir, 'ttyUSB1'), permissions: 'rw' },
    ]);
    assert.deepEqual(container.cdiDevices, [{ name: 'plugboard.example/serial=ttyUSB1' }]);
  });

  it('sysfs-pci: devices with NUMA topology and VFIO nodes', async () => {
    const devices = await kubelet.waitForDevices(GPU, (d) => d.length === 2);
    assert.deepEqual(
      devices.map((d) => [d.ID, d.topology?.nodes.map((n) => n.ID)]),
      [
        ['0000:3b:00.0', [0]],
        ['0000:86:00.0', [1]],
      ],
    );
    const res = await kubelet.call<deviceplugin.AllocateRequest, deviceplugin.AllocateResponse>(
      GPU,
      'allocate',
      {
        containerRequests: [{ devicesIds: ['0000:86:00.0'] }],
      },
    );
    assert.deepEqual(res.containerResponses[0]!.devices, [
      { hostPath: '/dev/vfio/13', containerPath: '/dev/vfio/13', permissions: 'rw' },
    ]);
    assert.deepEqual(res.containerResponses[0]!.envs, { PLUGBOARD_VISIBLE_DEVICES: '0000:86:00.0' });
  });
});
