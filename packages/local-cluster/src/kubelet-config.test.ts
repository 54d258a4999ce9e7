import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubeletConfiguration } from './kubelet-config.js';

describe('kubelet configuration', () => {
  const base = {
    nodeIP: '192.0.2.2',
    port: 10250,
    healthzPort: 10248,
    runtimeSocket: '/d/runtime.sock',
    clientCAFile: '/d/ca.crt',
    podLogsDir: '/d/pod-logs',
  };

  it('runs on a cgroup v1 machine with no container engine, systemd or iptables', () => {
    const c = kubeletConfiguration(base);
    assert.equal(c.failCgroupV1, false);
    assert.equal(c.cgroupsPerQOS, false);
    assert.deepEqual(c.enforceNodeAllocatable, ['none']);
    assert.equal(c.cgroupDriver, 'cgroupfs');
    assert.equal(c.makeIPTablesUtilChains, false);
    assert.deepEqual(c.featureGates, { MemoryQoS: false });
    assert.equal(c.containerRuntimeEndpoint, 'unix:///d/runtime.sock');
  });

  it('gives each kubelet its own ports and directories, and authenticates the API server by certificate', () => {
    const c = kubeletConfiguration({
      ...base,
      port: 20000,
      healthzPort: 20001,
      topologyManagerPolicy: 'single-numa-node',
    });
    assert.equal(c.port, 20000);
    assert.equal(c.healthzPort, 20001);
    assert.equal(c.readOnlyPort, 0);
    assert.equal(c.podLogsDir, '/d/pod-logs');
    assert.equal(c.topologyManagerPolicy, 'single-numa-node');
    assert.deepEqual(c.authentication, {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: '/d/ca.crt' },
    });
  });
});
