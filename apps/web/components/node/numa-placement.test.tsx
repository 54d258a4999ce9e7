import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, render, screen, within } from '@testing-library/react';
import type { NodeSnapshot } from '@plugboard/api';
import { makeSnapshot } from '../../test/make-snapshot';
import { podFootprint } from '../../lib/node-view';
import { NumaMap } from './numa-map';
import { WhyHere } from './why-here';

const R = 'plugboard.example/gpu';
const GIB = 2 ** 30;
const noop = () => {};

afterEach(() => cleanup());

/** 2 NUMA nodes × 4 CPUs; batch/pod-1 holds dev-3 (node 0) and dev-4 (node 1), CPUs 2-3 and memory on both. */
function spreadNode(): NodeSnapshot {
  const node = makeSnapshot({ devices: 8, numaNodes: 2, pods: 1, cpusPerNuma: 4 });
  node.numa.nodes['0']!.cpuCores = [
    [0, 1],
    [2, 3],
  ];
  node.numa.nodes['0']!.reservedCpuIds = [0];
  for (const id of ['dev-3', 'dev-4'])
    node.devices[`${R}/${id}`]!.allocation = { namespace: 'batch', pod: 'pod-1', container: 'main' };
  node.pods['batch/pod-1'] = {
    ...node.pods['ml/pod-0']!,
    key: 'batch/pod-1',
    namespace: 'batch',
    name: 'pod-1',
    containers: [
      {
        ...node.pods['ml/pod-0']!.containers[0]!,
        devices: { [R]: [`${R}/dev-3`, `${R}/dev-4`] },
        cpuIds: [2, 3],
        cpuNumaNodes: [0, 0],
        memory: [{ type: 'memory', size: 2 * GIB, numaNodes: [0, 1] }],
      },
    ],
    numaAlignment: {
      verdict: 'spread',
      numaNodes: [0, 1],
      reason: 'spread over 2 NUMA nodes (0, 1): plugboard.example/gpu ×2 on 0, 1',
    },
    topology: {
      policy: 'best-effort',
      scope: 'container',
      preferredAllocations: [
        {
          container: 'main',
          resource: R,
          deviceIds: ['dev-3', 'dev-4'],
          reason: 'fewest NUMA nodes',
          at: 't',
        },
      ],
      admission: {
        source: 'kubelet-sim',
        policy: 'best-effort',
        scope: 'container',
        cpuManagerPolicy: 'static',
        memoryManagerPolicy: 'Static',
        at: 't',
        dryRun: false,
        result: 'admitted',
        reason: null,
        message: null,
        steps: [
          {
            container: 'main',
            hints: [
              { provider: 'devices', resource: R, hints: [{ numaNodes: [0, 1], preferred: false }] },
              { provider: 'cpu', resource: 'cpu', hints: [{ numaNodes: [0], preferred: true }] },
            ],
            merged: { numaNodes: [0, 1], preferred: false },
            admit: true,
          },
        ],
        containers: [],
      },
    },
  };
  node.topology = {
    sysfs: { root: '/sys', available: true, reason: null },
    kubelet: {
      source: 'kubelet-sim',
      topologyManagerPolicy: 'best-effort',
      topologyManagerScope: 'container',
      cpuManagerPolicy: 'static',
      memoryManagerPolicy: 'Static',
      reservedCpuIds: [0],
    },
    kubeletReason: null,
    placement: { available: true, reason: null },
  };
  return node;
}

describe('NUMA placement views', () => {
  it('marks a misaligned pod and its device tiles on the NUMA map', () => {
    const node = spreadNode();
    const { container } = render(
      <NumaMap
        node={node}
        faultControl={{ mode: 'hidden' }}
        pendingTiles={new Set()}
        onOpen={noop}
        onToggleFault={noop}
      />,
    );
    const list = screen.getByRole('list', { name: 'Misaligned pods' });
    assert.match(list.textContent ?? '', /batch\/pod-1 — spread over 2 NUMA nodes/);
    assert.deepEqual(
      [...container.querySelectorAll('li.tile.misaligned')].map((li) => li.getAttribute('data-device')),
      ['dev-3', 'dev-4'],
    );
    assert.ok(
      screen.getByRole('button', {
        name: /^dev-3\s*,\s*Healthy\s*,\s*used by batch\/pod-1\s*,\s*! pod spread over NUMA nodes\s*,\s*device plugin$/,
      }),
    );
    // CPUs by core, reserved and exclusive ones marked.
    const cpus = within(screen.getByRole('list', { name: 'CPUs of NUMA node 0' }));
    assert.match(cpus.getByText('0', { selector: '[data-cpu]' }).className, /reserved/);
    assert.match(cpus.getByText('2', { selector: '[data-cpu]' }).className, /exclusive/);
  });

  it("highlights one pod's footprint: devices, CPUs and memory", () => {
    const node = spreadNode();
    const { container } = render(
      <NumaMap
        node={node}
        faultControl={{ mode: 'hidden' }}
        pendingTiles={new Set()}
        highlightTiles={podFootprint(node, 'batch/pod-1')}
        highlightPod="batch/pod-1"
        onOpen={noop}
        onToggleFault={noop}
      />,
    );
    assert.deepEqual(
      [...container.querySelectorAll('.cpu.highlighted')].map((c) => c.getAttribute('data-cpu')),
      ['2', '3'],
    );
    assert.equal(container.querySelectorAll('li.tile.highlighted').length, 2);
    // 2 GiB over two NUMA nodes: 1 GiB shown on each.
    const rows = [...container.querySelectorAll('[data-memory="memory"]')].map((r) => r.textContent);
    assert.equal(rows.length, 2);
    for (const text of rows) assert.match(text ?? '', /batch\/pod-1 1 GiB/);
  });

  it('"why here?" shows the policy, each manager\'s hints, the merged hint and the plugin\'s reason', () => {
    const node = spreadNode();
    render(<WhyHere node={node} pod={node.pods['batch/pod-1']!} />);
    const panel = screen.getByRole('region', { name: 'Why here? batch/pod-1' });
    const text = panel.textContent ?? '';
    assert.match(
      text,
      /Topology Manager best-effort \(scope container\) · CPU Manager static · Memory Manager Static \(from kubelet-sim's control API\)/,
    );
    assert.match(text, /Device manager.*0\+1/);
    assert.match(text, /CPU Manager.*0★/);
    assert.match(text, /Merged \(best-effort\)NUMA 0\+1 \(not preferred\) — admit/);
    assert.match(text, /dev-3, dev-4 — fewest NUMA nodes/);
  });
});
