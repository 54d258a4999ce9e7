// Command-line flags of plugboard-kubelet-sim: the NUMA-related ones and their errors.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCliConfig } from './config.js';

test('NUMA flags: topology/CPU/memory manager policies, reserved CPUs, SMT, hugepages', () => {
  const base = ['--device-plugin-dir', '/d', '--state-dir', '/s'];
  const ok = parseCliConfig([
    ...base,
    '--topology-manager-policy',
    'restricted',
    '--topology-manager-scope',
    'pod',
    '--reserved-cpus',
    '0-1,4',
    '--threads-per-core',
    '1',
    '--hugepages-2mi-per-numa',
    '1Gi',
    '--cpu-manager-policy',
    'none',
  ]).options;
  assert.equal(ok.topologyManagerPolicy, 'restricted');
  assert.equal(ok.topologyManagerScope, 'pod');
  assert.deepEqual(ok.reservedCpus, [0, 1, 4]);
  assert.equal(ok.threadsPerCore, 1);
  assert.deepEqual(ok.hugepagesPerNumaBytes, { 'hugepages-2Mi': 2 ** 30 });
  const bad: [string[], RegExp][] = [
    [
      ['--topology-manager-policy', 'strict'],
      /--topology-manager-policy: expected none, best-effort, restricted or single-numa-node/,
    ],
    [['--topology-manager-scope', 'node'], /--topology-manager-scope: expected container or pod/],
    [['--reserved-cpus', '3-1'], /--reserved-cpus: expected a cpulist/],
    [['--threads-per-core', '0'], /--threads-per-core: expected a positive integer/],
    [['--hugepages-1gi-per-numa', 'lots'], /--hugepages-1gi-per-numa: expected a quantity/],
  ];
  for (const [flags, message] of bad)
    assert.throws(() => parseCliConfig([...base, ...flags]), message, flags.join(' '));
});

test('DRA flags: the retry of a pod whose prepare failed, the wiping delay of a gone driver', () => {
  const base = ['--device-plugin-dir', '/d', '--state-dir', '/s'];
  const ok = parseCliConfig([...base, '--sync-frequency', '250ms', '--dra-wiping-delay', '2m']).options;
  assert.equal(ok.syncFrequencyMs, 250);
  assert.equal(ok.draWipingDelayMs, 120_000);
  assert.throws(
    () => parseCliConfig([...base, '--sync-frequency', 'soon']),
    /--sync-frequency: expected a duration such as 250ms, 30s or 5m, got "soon"/,
  );
});
