// The kubelet's configz document as the gateway reads it: the managers' settings with the kubelet's
// defaults for fields left out, reservedSystemCPUs as a CPU list, and a reason for anything else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configzPath, parseConfigz } from './kubelet-configz.js';

test('configz: settings, defaults and reserved CPUs', () => {
  assert.deepEqual(
    parseConfigz(
      JSON.stringify({
        kubeletconfig: {
          topologyManagerPolicy: 'restricted',
          topologyManagerScope: 'pod',
          cpuManagerPolicy: 'static',
          memoryManagerPolicy: 'Static',
          reservedSystemCPUs: '0-1,32',
          maxPods: 110,
        },
      }),
    ),
    {
      settings: {
        source: 'configz',
        topologyManagerPolicy: 'restricted',
        topologyManagerScope: 'pod',
        cpuManagerPolicy: 'static',
        memoryManagerPolicy: 'Static',
        reservedCpuIds: [0, 1, 32],
      },
    },
  );
  assert.deepEqual(parseConfigz('{"kubeletconfig":{}}'), {
    settings: {
      source: 'configz',
      topologyManagerPolicy: 'none',
      topologyManagerScope: 'container',
      cpuManagerPolicy: 'none',
      memoryManagerPolicy: 'None',
      reservedCpuIds: [],
    },
  });
});

test('configz: what is not a configz document is a reason', () => {
  const cases: [string, RegExp][] = [
    ['<html>', /not JSON/],
    ['{"componentconfig":{}}', /no "kubeletconfig" object/],
    ['{"kubeletconfig":{"cpuManagerPolicy":1}}', /kubeletconfig\.cpuManagerPolicy is not a string/],
    ['{"kubeletconfig":{"reservedSystemCPUs":"0-x"}}', /reservedSystemCPUs is not a CPU list/],
  ];
  for (const [text, reason] of cases) {
    const got = parseConfigz(text);
    assert.ok('reason' in got, text);
    assert.match(got.reason, reason, text);
  }
  assert.equal(configzPath('node a/b'), '/api/v1/nodes/node%20a%2Fb/proxy/configz');
});
