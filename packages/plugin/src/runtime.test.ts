import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parsePluginConfig } from './config.js';
import { defaultIdPrefix, preStartHook, sourceFromConfig } from './runtime.js';

describe('runtime helpers', () => {
  const table: [resource: string, prefix: string][] = [
    ['plugboard.example/gpu', 'gpu'],
    ['example.com/shared-gpu.small', 'shared-gpu.small'],
    ['example.com/_x', 'x'],
  ];
  for (const [resource, prefix] of table) {
    it(`default ID prefix of ${resource} is ${prefix}`, () =>
      assert.equal(defaultIdPrefix(resource), prefix));
  }

  it('builds the configured source', () => {
    const config = parsePluginConfig({
      resources: [
        { name: 'a.example/gpu', simulated: { count: 2 } },
        { name: 'a.example/tty', paths: { patterns: ['/dev/ttyUSB*'] } },
        { name: 'a.example/nic', sysfsPci: { vendor: '0x8086' } },
      ],
    });
    assert.deepEqual(
      config.resources.map((r) => sourceFromConfig(r).kind),
      ['simulated', 'paths', 'sysfs-pci'],
    );
  });

  it('preStart command gets the device IDs and resource; failure carries stderr', async () => {
    const config = parsePluginConfig({
      resources: [
        {
          name: 'a.example/fpga',
          simulated: { count: 2 },
          preStart: {
            command: [
              '/bin/sh',
              '-c',
              'test "$PLUGBOARD_DEVICE_IDS" = "fpga-0,fpga-1" && test "$PLUGBOARD_RESOURCE" = a.example/fpga || { echo "bad env: $PLUGBOARD_DEVICE_IDS" >&2; exit 3; }',
            ],
          },
        },
      ],
    });
    const hook = preStartHook(config.resources[0]!)!;
    await hook(['fpga-0', 'fpga-1']);
    await assert.rejects(hook(['fpga-1']), { code: 'pre-start-failed', message: /bad env: fpga-1/ });
  });

  it('no preStart configured → no hook (pre_start_required is not advertised)', () => {
    const config = parsePluginConfig({ resources: [{ name: 'a.example/gpu', simulated: { count: 1 } }] });
    assert.equal(preStartHook(config.resources[0]!), undefined);
  });
});
