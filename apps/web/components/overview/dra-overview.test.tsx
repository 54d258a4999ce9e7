import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, render, screen, within } from '@testing-library/react';
import type { NodeSummary } from '@plugboard/api';
import type { ClusterDocument, ClusterNode } from '../../lib/cluster-types';
import { makeSnapshot } from '../../test/make-snapshot';
import { DRA_CLASS, DRA_DRIVER, draSummary, withDra } from '../../test/make-dra';
import { selectNodes } from './cluster-overview';
import { clusterDraTotals, DraClusterPanel } from './dra-overview';
import { NodeCard } from './node-card';

afterEach(() => cleanup());

const ok = { status: 'ok' as const, lastSuccess: 'x', reason: null };

function summary(name: string, dra: NodeSummary['dra'], unhealthy = 0): NodeSummary {
  return {
    schema: 1,
    nodeName: name,
    updatedAt: 'x',
    resources: {},
    unhealthyDevices: unhealthy,
    activeFaults: 0,
    faultsEnabled: true,
    sources: { podResources: ok, kubernetes: ok },
    ...(dra ? { dra } : {}),
  };
}

function clusterNode(
  name: string,
  s: NodeSummary | null,
  status: ClusterNode['status'] = 'live',
): ClusterNode {
  return { name, status, since: '2026-01-01T00:00:00Z', error: null, summary: s };
}

/** Two DRA nodes (one with a pending claim and an unhealthy device), one older gateway without DRA. */
function doc(): ClusterDocument {
  const a = draSummary(
    withDra(makeSnapshot({ nodeName: 'dra-a', devices: 0, numaNodes: 1, pods: 0 }), {
      devices: 8,
      numaNodes: 2,
      claims: 3,
      pendingClaims: 1,
    }),
  );
  a.drivers[DRA_DRIVER] = { ...a.drivers[DRA_DRIVER]!, unhealthy: 1, tainted: 1, usable: 7, free: 4 };
  const b = draSummary(
    withDra(makeSnapshot({ nodeName: 'dra-b', devices: 0, numaNodes: 1, pods: 0 }), {
      devices: 4,
      numaNodes: 1,
      claims: 1,
    }),
  );
  return {
    discovery: { mode: 'static', source: 'PLUGBOARD_GATEWAYS', error: null },
    nodes: {
      'dra-a': clusterNode('dra-a', summary('dra-a', a)),
      'dra-b': clusterNode('dra-b', summary('dra-b', b), 'reconnecting'),
      old: clusterNode('old', summary('old', undefined, 0)),
    },
  };
}

describe('clusterDraTotals', () => {
  it('sums each driver over the nodes, each DeviceClass, and lists pending claims with their node', () => {
    const t = clusterDraTotals(doc())!;
    assert.deepEqual(t.drivers[DRA_DRIVER], {
      published: 12,
      usable: 11,
      allocated: 4,
      free: 7,
      unhealthy: 1,
      tainted: 1,
      nodes: 2,
    });
    assert.deepEqual(t.deviceClasses[DRA_CLASS], { allocated: 4, pendingClaims: 1 });
    assert.deepEqual(t.pendingClaims, [{ node: 'dra-a', claim: 'dra/waiting-0-gpu' }]);
  });

  it('is null when no gateway reports DRA (older gateways) or reports it empty', () => {
    const d = doc();
    delete d.nodes['dra-a'];
    delete d.nodes['dra-b'];
    assert.equal(clusterDraTotals(d), null);
    d.nodes.empty = clusterNode(
      'empty',
      summary('empty', { drivers: {}, deviceClasses: {}, pendingClaims: [] }),
    );
    assert.equal(clusterDraTotals(d), null);
  });
});

describe('DraClusterPanel', () => {
  it('shows per-driver counts as text, per-class numbers and pending claims linking to their node', () => {
    render(<DraClusterPanel totals={clusterDraTotals(doc())!} />);
    const panel = screen.getByRole('region', { name: 'DRA across the cluster' });
    const driver = within(panel).getByRole('region', {
      name: `${DRA_DRIVER} DRA devices published 12 allocated 4`,
    });
    assert.match(driver.textContent ?? '', /on 2 nodes/);
    assert.match(
      driver.textContent ?? '',
      /published 12\s*usable 11\s*allocated 4\s*free 7\s*unhealthy 1\s*tainted 1/,
    );
    const classes = within(panel).getByRole('table', {
      name: 'DRA devices allocated and claims pending per DeviceClass',
    });
    assert.match(
      within(classes).getAllByRole('row')[1]!.textContent ?? '',
      /gpu\.plugboard\.example\s*4\s*! 1/,
    );
    const pending = within(panel).getByRole('list', { name: 'Pending claims, cluster-wide' });
    assert.match(pending.textContent ?? '', /dra\/waiting-0-gpu on dra-a/);
    assert.equal(
      within(pending).getByRole('link', { name: 'dra-a' }).getAttribute('href'),
      '/nodes/dra-a#dra-claims',
    );
  });
});

describe('NodeCard and filters with DRA', () => {
  it('a node card shows its DRA drivers beside its resources, unhealthy DRA devices and pending claims', () => {
    render(<NodeCard node={doc().nodes['dra-a']!} resourceFilter="" />);
    const card = screen.getByRole('article', { name: 'dra-a' });
    assert.ok(
      within(card).getByRole('region', { name: `${DRA_DRIVER} DRA devices published 8 allocated 3` }),
    );
    assert.match(card.textContent ?? '', /✕ 1 unhealthy DRA device/);
    assert.doesNotMatch(card.textContent ?? '', /all devices healthy/);
    assert.equal(
      within(card).getByRole('link', { name: '1 pending claim on dra-a' }).getAttribute('href'),
      '/nodes/dra-a#dra-claims',
    );
  });

  it('filters by a DRA driver name and counts DRA devices as unhealthy devices', () => {
    const pick = (o: Partial<Parameters<typeof selectNodes>[1]>) =>
      selectNodes(doc(), { text: '', resource: '', health: 'all', sort: 'name', ...o }).map((n) => n.name);
    assert.deepEqual(pick({ resource: DRA_DRIVER }), ['dra-a', 'dra-b']);
    assert.deepEqual(pick({ health: 'unhealthy' }), ['dra-a']);
    assert.deepEqual(pick({ sort: 'free', resource: DRA_DRIVER }), ['dra-a', 'dra-b']);
    assert.deepEqual(pick({ sort: 'unhealthy' }), ['dra-a', 'dra-b', 'old']);
  });
});
