import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { makeSnapshot } from '../../test/make-snapshot';
import { PodTable } from './pod-table';

afterEach(() => cleanup());

describe('PodTable', () => {
  it('shows devices per container, DRA claims beside them, alignment, status and the blast-radius flag', () => {
    const node = makeSnapshot({ devices: 8, numaNodes: 2, pods: 3, devicesPerPod: 2 });
    const crash = node.pods['ml/pod-2']!;
    node.pods['ml/pod-2'] = {
      ...crash,
      phase: 'Running',
      reason: 'CrashLoopBackOff',
      affectedByUnhealthyDevice: true,
      numaAlignment: { verdict: 'spread', numaNodes: [0, 1], reason: 'devices on NUMA 0 and 1' },
      containers: [
        {
          ...crash.containers[0]!,
          dynamicResources: [
            {
              claimName: 'gpu-claim',
              claimNamespace: 'ml',
              devices: [
                {
                  driver: 'gpu.example.com',
                  pool: 'node-a',
                  device: 'gpu-9',
                  cdiDevices: ['gpu.example.com/gpu=gpu-9'],
                },
              ],
            },
          ],
        },
      ],
    };
    let selected: string | null = null;
    render(<PodTable node={node} selectedPod={null} onSelectPod={(k) => (selected = k)} />);
    const rows = screen.getAllByRole('row');
    // Affected pods first.
    assert.match(rows[1]!.textContent ?? '', /pod-2/);
    const row = rows[1]!;
    assert.match(row.textContent ?? '', /CrashLoopBackOff/);
    assert.match(row.textContent ?? '', /affected: uses an unhealthy device/);
    assert.match(row.textContent ?? '', /spread over 2 NUMA nodes/);
    assert.match(row.textContent ?? '', /plugboard\.example\/gpu:\s*dev-4, dev-5/);
    assert.match(row.textContent ?? '', /DRA claim\s*gpu-claim:\s*gpu\.example\.com\/node-a\/gpu-9/);
    assert.match(rows[2]!.textContent ?? '', /NUMA-aligned/);

    fireEvent.click(within(row).getByRole('button', { name: 'Show ml/pod-2 on the map' }));
    assert.equal(selected, 'ml/pod-2');

    fireEvent.click(screen.getByRole('checkbox', { name: /Only affected pods \(1\)/ }));
    assert.equal(screen.getAllByRole('row').length, 2, 'header + the one affected pod');
  });
});
