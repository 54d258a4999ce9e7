import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionView, NodeSnapshot } from '@plugboard/api';
import { makeSnapshot } from '../test/make-snapshot';
import {
  admissionSummary,
  cpuOwners,
  hintLabel,
  hintsLabel,
  misalignedPods,
  misalignedTiles,
  numaResources,
  podCpuSet,
  podFromRequest,
} from './placement-view';

const GIB = 2 ** 30;

/** Two NUMA nodes × 4 CPUs (SMT pairs), ml/pod-0 pinned on node 0, batch/pod-1 spread over both. */
function fixture(): NodeSnapshot {
  const node = makeSnapshot({ devices: 4, numaNodes: 2, pods: 2, cpusPerNuma: 4 });
  node.numa.nodes['0'] = {
    ...node.numa.nodes['0']!,
    cpuIds: [0, 1, 2, 3],
    cpuCores: [
      [0, 1],
      [2, 3],
    ],
    reservedCpuIds: [0],
    memory: { memory: 8 * GIB },
  };
  node.numa.nodes['1'] = {
    ...node.numa.nodes['1']!,
    cpuIds: [4, 5, 6, 7],
    cpuCores: [
      [4, 5],
      [6, 7],
    ],
    reservedCpuIds: [],
    memory: { memory: 8 * GIB },
  };
  const p0 = node.pods['ml/pod-0']!;
  node.pods['ml/pod-0'] = {
    ...p0,
    containers: [
      { ...p0.containers[0]!, cpuIds: [2, 3], memory: [{ type: 'memory', size: 2 * GIB, numaNodes: [0] }] },
    ],
  };
  const p1 = node.pods['batch/pod-1']!;
  node.pods['batch/pod-1'] = {
    ...p1,
    containers: [
      { ...p1.containers[0]!, cpuIds: [4], memory: [{ type: 'memory', size: 2 * GIB, numaNodes: [0, 1] }] },
    ],
    numaAlignment: { verdict: 'spread', numaNodes: [0, 1], reason: 'spread over 2 NUMA nodes' },
  };
  return node;
}

describe('placement view', () => {
  it('places every CPU with its holder, reserved CPUs marked, by physical core', () => {
    const node = fixture();
    const owners = cpuOwners(node);
    const n0 = numaResources(node, '0', owners);
    assert.deepEqual(
      n0.cores.map((core) => core.map((c) => [c.id, c.owner, c.reserved])),
      [
        [
          [0, null, true],
          [1, null, false],
        ],
        [
          [2, 'ml/pod-0', false],
          [3, 'ml/pod-0', false],
        ],
      ],
    );
    assert.deepEqual([...podCpuSet(node, 'batch/pod-1')], [4]);
  });

  it('counts pinned memory per NUMA node, a multi-node block evenly on each', () => {
    const node = fixture();
    const owners = cpuOwners(node);
    assert.deepEqual(numaResources(node, '0', owners).memory, [
      {
        type: 'memory',
        allocatable: 8 * GIB,
        pinned: 3 * GIB,
        byPod: { 'ml/pod-0': 2 * GIB, 'batch/pod-1': GIB },
      },
    ]);
    assert.deepEqual(numaResources(node, '1', owners).memory[0]!.byPod, { 'batch/pod-1': GIB });
  });

  it('lists misaligned pods and the device tiles they hold', () => {
    const node = fixture();
    assert.deepEqual(
      misalignedPods(node).map((p) => p.key),
      ['batch/pod-1'],
    );
    assert.deepEqual([...misalignedTiles(node)], ['plugboard.example/gpu/dev-1']);
  });

  it('words hints and decisions', () => {
    assert.equal(hintLabel({ numaNodes: [0, 1], preferred: false }), 'NUMA 0+1 (not preferred)');
    assert.equal(hintLabel({ numaNodes: null, preferred: true }), 'any NUMA node (preferred)');
    assert.equal(hintLabel(null), 'no merge (policy none)');
    assert.equal(hintsLabel(null), 'no preference');
    assert.equal(hintsLabel([]), 'cannot be satisfied on any NUMA node');
    assert.equal(
      hintsLabel([
        { numaNodes: [0], preferred: true },
        { numaNodes: [0, 1], preferred: false },
      ]),
      '0★  0+1',
    );
    const decision: AdmissionView = {
      source: 'kubelet-sim',
      policy: 'best-effort',
      scope: 'container',
      cpuManagerPolicy: 'static',
      memoryManagerPolicy: 'Static',
      at: '2026-01-01T00:00:00.000Z',
      dryRun: true,
      result: 'admitted',
      reason: null,
      message: null,
      steps: [{ container: 'main', hints: [], merged: { numaNodes: [0, 1], preferred: false }, admit: true }],
      containers: [{ container: 'main', init: false, affinity: [0, 1], devices: [], cpuIds: [], memory: [] }],
    };
    assert.equal(
      admissionSummary(decision),
      'admitted by best-effort (scope container) on NUMA 0+1 — not the preferred (aligned) placement',
    );
    assert.equal(
      admissionSummary({
        ...decision,
        result: 'rejected',
        reason: 'TopologyAffinityError',
        message: 'Resources cannot be allocated with Topology locality',
      }),
      'rejected: TopologyAffinityError — Resources cannot be allocated with Topology locality',
    );
  });

  it('builds a Guaranteed one-container pod from the form', () => {
    assert.deepEqual(
      podFromRequest({
        namespace: 'ml',
        name: 'try',
        devices: { 'x.io/gpu': 2, 'x.io/nic': 0 },
        cpus: 4,
        memoryGiB: 1,
      }),
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'try',
          namespace: 'ml',
          labels: { 'app.kubernetes.io/created-by': 'plugboard-try-to-place' },
        },
        spec: {
          restartPolicy: 'Always',
          containers: [{ name: 'main', resources: { limits: { 'x.io/gpu': '2', cpu: '4', memory: '1Gi' } } }],
        },
      },
    );
  });
});
