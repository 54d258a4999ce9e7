import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, render, screen } from '@testing-library/react';
import type { NodeSummary } from '@plugboard/api';
import type { ClusterDocument, ClusterNode } from '../../lib/cluster-types';
import { clusterTotals, selectNodes } from './cluster-overview';
import { NodeCard } from './node-card';
import { resourcesServed, servedWords } from './served-counts';

afterEach(() => cleanup());

function summary(
  name: string,
  res: Record<string, [number, number, number, number]>,
  unhealthy = 0,
): NodeSummary {
  const resources: NodeSummary['resources'] = {};
  for (const [r, [capacity, allocatable, allocated, free]] of Object.entries(res)) {
    resources[r] = {
      capacity,
      allocatable,
      allocated,
      free,
      healthy: allocatable,
      unhealthy: capacity - allocatable,
      apiServer: null,
      registered: true,
      registration: 'registered',
    };
  }
  const ok = { status: 'ok' as const, lastSuccess: 'x', reason: null };
  return {
    schema: 1,
    nodeName: name,
    updatedAt: 'x',
    resources,
    unhealthyDevices: unhealthy,
    activeFaults: unhealthy,
    faultsEnabled: true,
    sources: { podResources: ok, kubernetes: ok },
  };
}

function node(name: string, s: NodeSummary | null, status: ClusterNode['status'] = 'live'): ClusterNode {
  return {
    name,
    status,
    since: '2026-01-01T00:00:00Z',
    error: status === 'live' ? null : 'connect ECONNREFUSED',
    summary: s,
  };
}

const doc: ClusterDocument = {
  discovery: { mode: 'static', source: 'PLUGBOARD_GATEWAYS', error: null },
  nodes: {
    'gpu-node-a': node(
      'gpu-node-a',
      summary('gpu-node-a', { 'x/gpu': [8, 7, 5, 2], 'x/nic': [16, 16, 4, 12] }, 1),
    ),
    'gpu-node-b': node('gpu-node-b', summary('gpu-node-b', { 'x/gpu': [16, 16, 4, 12] })),
    'edge-node': node('edge-node', summary('edge-node', { 'x/serial': [4, 4, 1, 3] })),
    gone: node('gone', null, 'unreachable'),
  },
};

describe('selectNodes', () => {
  it('sorts by name, unhealthy devices, free and allocated devices', () => {
    const names = (sort: Parameters<typeof selectNodes>[1]['sort'], resource = '') =>
      selectNodes(doc, { text: '', resource, health: 'all', sort }).map((n) => n.name);
    assert.deepEqual(names('name'), ['edge-node', 'gone', 'gpu-node-a', 'gpu-node-b']);
    assert.deepEqual(names('unhealthy'), ['gpu-node-a', 'edge-node', 'gpu-node-b', 'gone']);
    assert.deepEqual(names('free', 'x/gpu'), ['gpu-node-b', 'gpu-node-a', 'gone']);
    assert.deepEqual(names('allocated'), ['gpu-node-a', 'gpu-node-b', 'edge-node', 'gone']);
  });

  it('filters by node text, resource and health', () => {
    const pick = (o: Partial<Parameters<typeof selectNodes>[1]>) =>
      selectNodes(doc, { text: '', resource: '', health: 'all', sort: 'name', ...o }).map((n) => n.name);
    assert.deepEqual(pick({ text: 'GPU' }), ['gpu-node-a', 'gpu-node-b']);
    assert.deepEqual(pick({ resource: 'x/serial' }), ['edge-node', 'gone']);
    assert.deepEqual(pick({ health: 'unhealthy' }), ['gpu-node-a']);
    assert.deepEqual(pick({ health: 'unreachable' }), ['gone']);
  });
});

describe('clusterTotals', () => {
  it('sums every resource over the nodes with data', () => {
    const t = clusterTotals(doc);
    assert.deepEqual(Object.keys(t).sort(), ['x/gpu', 'x/nic', 'x/serial']);
    assert.deepEqual(t['x/gpu'], {
      capacity: 24,
      allocatable: 23,
      allocated: 9,
      free: 14,
      healthy: 23,
      unhealthy: 1,
    });
    assert.equal(t['x/serial']!.capacity, 4);
  });
});

describe('NodeCard', () => {
  it('shows capacity and allocatable as text per resource and flags unhealthy devices', () => {
    render(<NodeCard node={doc.nodes['gpu-node-a']!} resourceFilter="" />);
    const gpu = screen.getByRole('region', { name: /x\/gpu capacity 8 allocatable 7/ });
    assert.match(gpu.textContent ?? '', /capacity 8/);
    assert.match(gpu.textContent ?? '', /allocatable 7/);
    assert.match(gpu.textContent ?? '', /1 unhealthy/);
    assert.ok(screen.getByText(/1 unhealthy device$/));
    assert.ok(screen.getByRole('link', { name: 'gpu-node-a' }));
  });

  it('says why a node has no data', () => {
    render(<NodeCard node={doc.nodes.gone!} resourceFilter="" />);
    assert.ok(screen.getByText(/Gateway unreachable/));
    assert.ok(screen.getByText(/ECONNREFUSED/));
  });
});

describe('observed resources in the overview', () => {
  function observer(): NodeSummary {
    const s = summary('observer-node', { 'x/gpu': [4, 4, 1, 3], 'nvidia.com/gpu': [4, 3, 1, 2] });
    s.resources['nvidia.com/gpu'] = {
      ...s.resources['nvidia.com/gpu']!,
      servedBy: 'device-plugin',
      observed: {
        unhealthy: 1,
        unhealthyNamed: 0,
        note: '1 of 4 unhealthy — the kubelet does not say which unless a pod holds them',
      },
    };
    s.resources['x/gpu'] = { ...s.resources['x/gpu']!, servedBy: 'plugin' };
    return s;
  }

  it('counts resources and devices served here and observed (older gateways count as served here)', () => {
    const c = resourcesServed([observer(), summary('old', { 'x/nic': [2, 2, 0, 2] })]);
    assert.deepEqual(c, { here: { resources: 2, devices: 6 }, observed: { resources: 1, devices: 4 } });
    assert.equal(servedWords(c), '2 resources served here (6 devices), 1 observed (4 devices)');
  });

  it("a node card names who serves each resource and shows an observed resource's note", () => {
    render(<NodeCard node={node('observer-node', observer())} resourceFilter="" />);
    const nv = screen.getByRole('region', { name: /nvidia\.com\/gpu capacity 4 allocatable 3/ });
    assert.match(nv.textContent ?? '', /another device plugin \(observed\)/);
    assert.match(
      nv.textContent ?? '',
      /1 of 4 unhealthy — the kubelet does not say which unless a pod holds them/,
    );
    const own = screen.getByRole('region', { name: /x\/gpu capacity 4 allocatable 4/ });
    assert.match(own.textContent ?? '', /this gateway's plugin/);
    assert.ok(screen.getByText('1 resource served here (4 devices), 1 observed (4 devices)'));
  });
});
