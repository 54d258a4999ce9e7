import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { allocateResponseBuilder } from './response.js';
import { compileTemplate } from './template.js';
import { validateAllocation } from './validate.js';
import type { PluginDevice } from '../types.js';

const dev = (id: string, replicaOf: string | null = null, nodes: string[] = []): PluginDevice => ({
  id,
  health: 'Healthy',
  reason: null,
  since: '',
  numaNodes: [],
  replicaOf,
  deviceNodes: nodes,
});

describe('Allocate response template', () => {
  it('defaults: PLUGBOARD_VISIBLE_DEVICES with physical IDs and each device node rw', () => {
    const build = allocateResponseBuilder('example.com/tty');
    const res = build([
      dev('ttyUSB0', null, ['/dev/ttyUSB0']),
      dev('ttyUSB1', null, ['/dev/ttyUSB1', '/dev/shared']),
    ]);
    assert.deepEqual(res.envs, { PLUGBOARD_VISIBLE_DEVICES: 'ttyUSB0,ttyUSB1' });
    assert.deepEqual(res.devices, [
      { hostPath: '/dev/ttyUSB0', containerPath: '/dev/ttyUSB0', permissions: 'rw' },
      { hostPath: '/dev/ttyUSB1', containerPath: '/dev/ttyUSB1', permissions: 'rw' },
      { hostPath: '/dev/shared', containerPath: '/dev/shared', permissions: 'rw' },
    ]);
    assert.deepEqual([res.mounts, res.annotations, res.cdiDevices], [[], {}, []]);
  });

  it('every variable, replicas mapped to physical devices, CDI names', () => {
    const build = allocateResponseBuilder('example.com/gpu', {
      env: { A: '{{ids}}|{{physicalIds}}|{{count}}|{{resource}}|{{deviceNodes}}', B: 'static' },
      deviceNodePermissions: 'r',
      mounts: [{ hostPath: '/var/lib/{{physicalIds}}', containerPath: '/data' }],
      cdi: { enabled: true, vendor: 'example.com', class: 'gpu' },
    });
    const res = build([dev('g-0::0', 'g-0', ['/dev/g0']), dev('g-0::1', 'g-0', ['/dev/g0'])]);
    assert.deepEqual(res.envs, { A: 'g-0::0,g-0::1|g-0|2|example.com/gpu|/dev/g0', B: 'static' });
    assert.deepEqual(res.devices, [{ hostPath: '/dev/g0', containerPath: '/dev/g0', permissions: 'r' }]);
    assert.deepEqual(res.mounts, [{ hostPath: '/var/lib/g-0', containerPath: '/data', readOnly: false }]);
    assert.deepEqual(res.cdiDevices, [{ name: 'example.com/gpu=g-0' }]);
  });

  it('rejects unknown template variables at compile time', () => {
    assert.throws(() => compileTemplate('{{gpus}}'), { code: 'config-invalid', message: /\{\{gpus\}\}/ });
  });
});

describe('validateAllocation', () => {
  const devices = new Map(
    [dev('a'), dev('b'), { ...dev('c'), health: 'Unhealthy' as const }].map((d) => [d.id, d]),
  );
  const lookup = (id: string): PluginDevice | undefined => devices.get(id);
  const table: [name: string, requests: string[][], error: RegExp | null][] = [
    ['valid', [['a'], ['b']], null],
    ['unknown', [['a', 'x', 'y']], /unknown device IDs: x, y$/],
    ['unhealthy', [['c']], /unhealthy device IDs: c/],
    ['duplicated in one container', [['a', 'a']], /duplicated device IDs: a/],
    ['duplicated across containers', [['a'], ['a']], /duplicated device IDs: a/],
    [
      'all at once',
      [['x', 'c', 'a', 'a']],
      /unknown device IDs: x; unhealthy device IDs: c; duplicated device IDs: a/,
    ],
    ['no containers', [], /no container requests/],
  ];
  for (const [name, requests, error] of table) {
    it(name, () => {
      if (error === null)
        assert.deepEqual(
          validateAllocation(requests, { lookup }).map((c) => c.map((d) => d.id)),
          requests,
        );
      else
        assert.throws(() => validateAllocation(requests, { lookup }), {
          code: 'invalid-argument',
          message: error,
        });
    });
  }
});
