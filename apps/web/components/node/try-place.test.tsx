import { afterEach, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { AdmissionView, NodeSnapshot } from '@plugboard/api';
import { makeSnapshot } from '../../test/make-snapshot';
import { TryPlace } from './try-place';

afterEach(() => {
  cleanup();
  mock.restoreAll();
});

function nodeWith(placement: NonNullable<NodeSnapshot['topology']>['placement']): NodeSnapshot {
  const node = makeSnapshot({ devices: 4, numaNodes: 2, pods: 0, cpusPerNuma: 4 });
  node.topology = {
    sysfs: { root: '/sys', available: true, reason: null },
    kubelet: {
      source: 'configz',
      topologyManagerPolicy: 'restricted',
      topologyManagerScope: 'container',
      cpuManagerPolicy: 'static',
      memoryManagerPolicy: 'Static',
      reservedCpuIds: [],
    },
    kubeletReason: null,
    placement,
  };
  return node;
}

// gcTime Infinity: no garbage-collection timer (5 min by default) keeps the test process alive.
const renderTryPlace = (node: NodeSnapshot) =>
  render(
    <QueryClientProvider
      client={
        new QueryClient({
          defaultOptions: { queries: { gcTime: Infinity }, mutations: { gcTime: Infinity } },
        })
      }
    >
      <TryPlace node={node} token={null} />
    </QueryClientProvider>,
  );

const prediction: AdmissionView = {
  source: 'prediction',
  notes: ['the node-resources predicate (OutOfcpu, OutOfmemory, …) was not checked'],
  policy: 'restricted',
  scope: 'container',
  cpuManagerPolicy: 'static',
  memoryManagerPolicy: 'Static',
  at: 't',
  dryRun: true,
  result: 'admitted',
  reason: null,
  message: null,
  steps: [{ container: 'main', hints: [], merged: { numaNodes: [0], preferred: true }, admit: true }],
  containers: [],
};

describe('Try to place', () => {
  it('says why it is unavailable (no kubelet settings: the gateway cannot predict)', () => {
    renderTryPlace(
      nodeWith({
        available: false,
        reason: "the kubelet's settings are unknown (reading the kubelet's configz is turned off)",
        admit: { available: false, reason: 'no kubelet-sim' },
      }),
    );
    assert.match(
      document.body.textContent ?? '',
      /Try to place is unavailable: the kubelet's settings are unknown \(reading the kubelet's configz is turned off\)\./,
    );
    assert.equal(screen.queryByRole('button', { name: 'Preview placement' }), null);
  });

  it('labels the preview a prediction, lists what it could not see, and keeps Admit off without a kubelet-sim', async () => {
    const calls: string[] = [];
    mock.method(globalThis, 'fetch', (url: string) => {
      calls.push(url);
      return Promise.resolve(new Response(JSON.stringify(prediction), { status: 200 }));
    });
    renderTryPlace(
      nodeWith({
        available: true,
        reason: null,
        admit: { available: false, reason: "admitting a pod needs kubelet-sim's control API" },
      }),
    );
    assert.match(
      screen.getByTestId('admit-unavailable').textContent ?? '',
      /^Admitting is unavailable: admitting a pod needs kubelet-sim's control API\.$/,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Preview placement' }));
    const label = await screen.findByTestId('prediction-label');
    assert.match(label.textContent ?? '', /^A prediction: the gateway applied the kubelet's/);
    assert.match(label.textContent ?? '', /Not taken into account: the node-resources predicate/);
    assert.match(document.body.textContent ?? '', /Predicted placement for default\/try-1/);
    assert.deepEqual(calls, ['/api/nodes/node-a/placement']);
    const admit = screen.getByRole<HTMLButtonElement>('button', { name: 'Admit pod' });
    assert.equal(admit.disabled, true, 'admitted by the prediction, but nothing can admit it');
  });
});
