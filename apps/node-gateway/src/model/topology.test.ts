// The NUMA placement rules of the node model: alignment verdicts and reasons, SMT core groups,
// the plugin's preferred-allocation reasons per pod, and admission rejections reported once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionView, ContainerState } from '@plugboard/api';
import { containerState } from '@plugboard/api/testing';
import {
  alignmentOf,
  alignmentParts,
  coresOf,
  newAdmissionRejections,
  preferredFor,
  type HostTopology,
} from './topology.js';

const GPU = 'plugboard.example/gpu';
const GIB = 2 ** 30;

const numaOf: Record<string, number[]> = { [`${GPU}/g0`]: [0], [`${GPU}/g1`]: [0], [`${GPU}/g4`]: [1] };
const deviceNuma = (k: string) => numaOf[k] ?? [];

test('alignment verdicts: aligned, spread, no preference, with what sits where', () => {
  const cases: [string, ContainerState[], string, number[], RegExp][] = [
    [
      'devices, CPUs and memory on node 0',
      [
        containerState({
          devices: { [GPU]: [`${GPU}/g0`, `${GPU}/g1`] },
          cpuIds: [2, 3],
          cpuNumaNodes: [0, 0],
          memory: [{ type: 'memory', size: 2 * GIB, numaNodes: [0] }],
        }),
      ],
      'aligned',
      [0],
      /^aligned on NUMA node 0: plugboard\.example\/gpu ×2, 2 exclusive CPUs, memory 2 GiB$/,
    ],
    [
      'GPU on node 1, CPUs on node 0',
      [containerState({ devices: { [GPU]: [`${GPU}/g4`] }, cpuIds: [2], cpuNumaNodes: [0] })],
      'spread',
      [0, 1],
      /^spread over 2 NUMA nodes \(0, 1\): plugboard\.example\/gpu ×1 on 1; 1 exclusive CPU on 0$/,
    ],
    [
      'nothing NUMA-bound',
      [containerState({ devices: { 'x.io/serial': ['x.io/serial/tty0'] } })],
      'no-preference',
      [],
      /^no device, exclusive CPU or pinned memory of the pod has NUMA affinity$/,
    ],
  ];
  for (const [name, containers, verdict, nodes, reason] of cases) {
    const a = alignmentOf(alignmentParts(containers, deviceNuma), null, false);
    assert.equal(a.verdict, verdict, name);
    assert.deepEqual(a.numaNodes, nodes, name);
    assert.match(a.reason, reason, name);
  }
  const unmapped = alignmentOf(
    alignmentParts([containerState({ devices: { [GPU]: [`${GPU}/g0`] }, cpuIds: [2] })], deviceNuma),
    null,
    true,
  );
  assert.match(unmapped.reason, /NUMA node of its exclusive CPUs is unknown/);
});

test("a spread pod's reason says when the Topology Manager admitted a non-preferred hint", () => {
  const admission = {
    source: 'kubelet-sim',
    policy: 'best-effort',
    result: 'admitted',
    steps: [{ container: 'main', hints: [], merged: { numaNodes: [0, 1], preferred: false }, admit: true }],
  } as unknown as AdmissionView;
  const a = alignmentOf(
    alignmentParts([containerState({ devices: { [GPU]: [`${GPU}/g0`, `${GPU}/g4`] } })], deviceNuma),
    admission,
    false,
  );
  assert.match(a.reason, /; Topology Manager best-effort admitted a hint that was not preferred$/);
});

test('SMT core groups and preferred-allocation reasons', () => {
  const host: HostTopology = {
    root: '/sys',
    nodes: [],
    numaOfCpu: new Map(),
    siblings: new Map([
      [0, [0, 1]],
      [1, [0, 1]],
      [2, [2, 3]],
      [3, [2, 3]],
    ]),
  };
  assert.deepEqual(coresOf(host, [0, 1, 2, 3, 4]), [[0, 1], [2, 3], [4]]);
  const containers = [containerState({ devices: { [GPU]: [`${GPU}/g0`, `${GPU}/g1`] } })];
  const records = [
    { resource: GPU, chosen: ['g0', 'g1'], reason: 'older', at: 't1' },
    { resource: GPU, chosen: ['g0', 'g1'], reason: 'same NUMA node, fewest links', at: 't2' },
    { resource: GPU, chosen: ['g4'], reason: 'other pod', at: 't3' },
  ];
  assert.deepEqual(preferredFor(containers, records), [
    {
      container: 'main',
      resource: GPU,
      deviceIds: ['g0', 'g1'],
      reason: 'same NUMA node, fewest links',
      at: 't2',
    },
  ]);
});

test('admission rejections are reported once per pod and forgotten when the pod is gone', () => {
  const rejected = {
    metadata: { uid: 'u1', name: 'p', namespace: 'ml' },
    status: {
      phase: 'Failed',
      reason: 'TopologyAffinityError',
      message: 'Pod was rejected: Resources cannot be allocated with Topology locality',
    },
  };
  const crashed = { metadata: { uid: 'u2', name: 'q' }, status: { phase: 'Failed', message: 'OOMKilled' } };
  const seen = new Set<string>();
  assert.deepEqual(newAdmissionRejections([rejected, crashed], seen), [
    {
      uid: 'u1',
      namespace: 'ml',
      name: 'p',
      reason: 'TopologyAffinityError',
      message: 'Pod was rejected: Resources cannot be allocated with Topology locality',
    },
  ]);
  assert.deepEqual(newAdmissionRejections([rejected], seen), []);
  newAdmissionRejections([], seen);
  assert.equal(seen.size, 0);
});
