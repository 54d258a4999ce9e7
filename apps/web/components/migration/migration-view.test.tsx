import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, render, screen, within } from '@testing-library/react';
import type { ExtendedResourceView, NodeSummary } from '@plugboard/api';
import { extendedResourceFixtures } from '@plugboard/api/testing';
import type { ClusterDocument, ClusterNode } from '../../lib/cluster-types';
import { migrationView } from '../../lib/migration-view';
import { MigrationPanel } from './migration-view';

afterEach(() => cleanup());

const GPU = 'plugboard.example/gpu';
const NIC = 'plugboard.example/nic-vf';
const CLASS = 'gpu.plugboard.example';
const ok = { status: 'ok' as const, lastSuccess: 'x', reason: null };

// The GPU's views and pods: a pod holds gpu-0 of the device plugin, or gpu-1 of migrate-node's pool.
const { view, pod } = extendedResourceFixtures(GPU, {
  plugin: `${GPU}/gpu-0`,
  dra: `${CLASS}/migrate-node/gpu-1`,
});

function node(
  name: string,
  ext: ExtendedResourceView[] | undefined,
  status: ClusterNode['status'] = 'live',
  error: string | null = null,
): ClusterNode {
  const summary: NodeSummary = {
    schema: 1,
    nodeName: name,
    updatedAt: 'x',
    resources: {},
    unhealthyDevices: 0,
    activeFaults: 0,
    faultsEnabled: true,
    sources: { podResources: ok, kubernetes: ok },
    ...(ext ? { extendedResources: Object.fromEntries(ext.map((v) => [v.name, v])) } : {}),
  };
  return { name, status, since: '2026-01-01T00:00:00Z', error, summary };
}

/** A migration in progress: the GPU on a device plugin on two nodes (one blind to DeviceClasses), through DRA on a third. */
function doc(): ClusterDocument {
  return {
    discovery: { mode: 'static', source: 'PLUGBOARD_GATEWAYS', error: null },
    nodes: {
      'gpu-node-a': node('gpu-node-a', [
        view({
          servedBy: 'device-plugin',
          nodeStatus: { capacity: 8, allocatable: 8 },
          pods: [pod('ml/train', 'device-plugin'), pod('ml/infer', 'device-plugin')],
        }),
        view({ name: NIC, servedBy: 'device-plugin', nodeStatus: { capacity: 8, allocatable: 8 } }),
      ]),
      'gpu-node-b': node(
        'gpu-node-b',
        [
          view({
            servedBy: 'device-plugin',
            nodeStatus: { capacity: 2, allocatable: 2 },
            deviceClasses: null,
            pods: [pod('ml/notebook', 'device-plugin')],
          }),
        ],
        'reconnecting',
        'stream closed (1006)',
      ),
      'migrate-node': node('migrate-node', [
        view({
          servedBy: 'dra',
          deviceClasses: [CLASS],
          deviceClass: CLASS,
          drivers: [CLASS],
          pods: [pod('ml/render', 'dra', 'ml/render-extended-resources-x7k2p')],
        }),
        view({
          name: `deviceclass.resource.kubernetes.io/${CLASS}`,
          servedBy: 'dra',
          deviceClasses: [CLASS],
          deviceClass: CLASS,
        }),
      ]),
      old: node('old', undefined),
      ghost: {
        ...node('ghost', undefined, 'unreachable', 'connect ECONNREFUSED 127.0.0.1:1'),
        summary: null,
      },
    },
  };
}

describe('MigrationPanel', () => {
  it('per name: the nodes each way, the pods with their generated claims, and what is left to move', () => {
    render(<MigrationPanel view={migrationView(doc())} />);
    const gpu = screen.getByRole('region', { name: GPU });
    within(gpu).getByText('! Left to move: 3 pods on 2 nodes');
    assert.equal(
      gpu.querySelector('dl.migration-served')?.textContent,
      'Device plugin ongpu-node-a, gpu-node-bDRA onmigrate-nodeNeither onno node',
    );
    const nodes = within(gpu).getByRole('table', { name: `Nodes serving ${GPU}` });
    const rows = within(nodes)
      .getAllByRole('row')
      .slice(1)
      .map((r) => r.textContent);
    assert.deepEqual(rows, [
      'gpu-node-a■ device plugincapacity 8, allocatable 8nonenone2',
      'gpu-node-b■ device plugincapacity 2, allocatable 2? unknown: not readablenone1',
      `migrate-node◆ DRAnot listed${CLASS}${CLASS}1`,
    ]);
    const pods = within(gpu).getByRole('table', { name: `Pods asking for ${GPU}` });
    const renderRow = within(pods).getByRole('row', { name: /ml\/render/ });
    assert.match(
      renderRow.textContent ?? '',
      /◆ DRAml\/render-extended-resources-x7k2p \(container-0-request-0\)/,
    );
    assert.equal(within(pods).getAllByText('■ device plugin: left to move').length, 3);
    within(gpu).getByText(/DeviceClasses unknown on/);
    assert.equal(
      within(gpu).getAllByRole('link', { name: 'migrate-node' })[0]!.getAttribute('href'),
      '/nodes/migrate-node',
    );
  });

  it('says which nodes are not observed and which are stale, and keeps names not moving apart', () => {
    render(<MigrationPanel view={migrationView(doc())} />);
    const notObserved = screen.getByRole('list', { name: 'Nodes not observed' });
    assert.deepEqual(
      within(notObserved)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
      [
        'ghost: no summary from its gateway (unreachable: connect ECONNREFUSED 127.0.0.1:1)',
        'old: its gateway predates the migration view (no extendedResources in its summary)',
      ],
    );
    const stale = screen.getByRole('list', { name: 'Nodes with stale data' });
    assert.match(
      stale.textContent ?? '',
      /^gpu-node-b: its last summary, stale since .* \(stream closed \(1006\)\)$/,
    );
    const only = screen.getByRole('region', { name: 'Only device plugins (1)' });
    assert.match(
      within(only).getByRole('row', { name: new RegExp(NIC) }).textContent ?? '',
      /gpu-node-ano node/,
    );
    const implicit = screen.getByRole('table', { name: 'Implicit extended resource names of DeviceClasses' });
    within(implicit).getByText(`deviceclass.resource.kubernetes.io/${CLASS}`);
  });

  it('says so when nothing is moving', () => {
    const d = doc();
    delete d.nodes['migrate-node'];
    render(<MigrationPanel view={migrationView(d)} />);
    screen.getByText(/No extended resource is moving/);
    assert.equal(screen.queryByRole('table', { name: `Nodes serving ${GPU}` }), null);
  });
});
