import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, render, screen } from '@testing-library/react';
import { makeSnapshot } from '../../test/make-snapshot';
import { SourceNotices } from './source-notices';
import { ResourcePanel } from './resource-panel';
import { PodTable } from './pod-table';

afterEach(() => cleanup());
const R = 'plugboard.example/gpu';

describe('empty and error states say why', () => {
  it('PodResources unavailable: stale since the last success, with the reason', () => {
    const node = makeSnapshot({ devices: 2, numaNodes: 1, pods: 1 });
    node.sources.podResources = {
      status: 'stale',
      lastSuccess: '2026-01-01T10:00:00Z',
      reason: 'socket /var/lib/kubelet/pod-resources/kubelet.sock: ENOENT',
    };
    render(<SourceNotices node={node} />);
    assert.ok(screen.getByText(/PodResources \(pod assignments\) unavailable — showing data from .*ENOENT/));
    assert.ok(screen.getByText(/Kubernetes API .* disabled: no kubeconfig/));
  });

  it('a plugin that is not registered is named with its error', () => {
    const node = makeSnapshot({ devices: 2, numaNodes: 1, pods: 0 });
    node.resources[R]!.registration = {
      ...node.resources[R]!.registration,
      phase: 'failed',
      error: 'kubelet refused: version mismatch',
    };
    render(<SourceNotices node={node} />);
    assert.ok(
      screen.getByText(/is not registered with the kubelet \(failed\): kubelet refused: version mismatch/),
    );
  });

  it('a plugin waiting for its kubelet: named with why; the API server numbers marked as its last report', () => {
    const node = makeSnapshot({ devices: 2, numaNodes: 1, pods: 0 });
    const since = '2026-01-01T10:00:00Z';
    const r = node.resources[R]!;
    r.registration = {
      ...r.registration,
      phase: 'waiting-for-kubelet',
      waitingSince: since,
      error: 'the kubelet closed the ListAndWatch stream',
    };
    r.apiServer = { capacity: 2, allocatable: 2, staleSince: since };
    render(
      <>
        <SourceNotices node={node} />
        <ResourcePanel node={node} />
      </>,
    );
    assert.ok(
      screen.getByText(
        /is waiting for the kubelet \(since .*\): the kubelet closed the ListAndWatch stream\. It registers again/,
      ),
    );
    assert.ok(screen.getByText('plugin waiting for the kubelet'));
    assert.ok(
      screen.getByText(/API server \(the kubelet's last report, stale since .*\): capacity 2, allocatable 2/),
    );
    assert.ok(screen.getByText(/! waiting-for-kubelet/));
  });

  it('no resources and no pods are explained, not shown as zeros', () => {
    const node = makeSnapshot({ devices: 0, numaNodes: 1, pods: 0 });
    node.resources = {};
    node.sources.podResources = { status: 'disabled', lastSuccess: null, reason: 'no socket configured' };
    render(
      <>
        <ResourcePanel node={node} />
        <PodTable node={node} selectedPod={null} onSelectPod={() => {}} />
      </>,
    );
    assert.ok(
      screen.getByText(/No extended resources: no device plugin is configured or running on this gateway/),
    );
    assert.ok(
      screen.getByText(
        /No pods hold devices on this node \(PodResources is disabled, so assignments may be missing\)/,
      ),
    );
  });
});
