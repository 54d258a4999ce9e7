import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { act, cleanup, screen, within } from '@testing-library/react';
import type { DraDeviceState, NodeSnapshot } from '@plugboard/api';
import { makeSnapshot } from '../../test/make-snapshot';
import { DRA_DRIVER, withDra } from '../../test/make-dra';
import { renderNumaMap } from '../../test/render-numa-map';
import { applyLiveMessage } from '../../lib/live-document';
import { draTileKey } from '../../lib/dra-view';
import { groupByNuma, podFootprint } from '../../lib/node-view';

afterEach(() => cleanup());

/** A node with 8 device-plugin GPUs and 8 DRA GPUs on 2 NUMA nodes; 2 DRA claims prepared. */
function mixedNode(): NodeSnapshot {
  return withDra(makeSnapshot({ devices: 8, numaNodes: 2, pods: 2 }), {
    devices: 8,
    numaNodes: 2,
    claims: 2,
  });
}

function patchDevice(node: NodeSnapshot, name: string, change: Partial<DraDeviceState>): NodeSnapshot {
  const key = `${DRA_DRIVER}/${node.nodeName}/${name}`;
  const dra = node.dra!;
  return {
    ...node,
    dra: { ...dra, devices: { ...dra.devices, [key]: { ...dra.devices[key]!, ...change } } },
  };
}

describe('NumaMap with DRA devices', () => {
  it('puts DRA devices on their NUMA node beside device-plugin devices, each tile naming the API serving it', () => {
    renderNumaMap(mixedNode());
    const numa0 = screen.getByRole('region', { name: /NUMA node 0/ });
    assert.match(numa0.querySelector('h3')?.textContent ?? '', /8 devices \(4 DRA\)/);
    const plugin = within(numa0).getByRole('list', { name: 'plugboard.example/gpu devices on NUMA node 0' });
    const dra = within(numa0).getByRole('list', { name: `${DRA_DRIVER} DRA devices on NUMA node 0` });
    assert.equal(within(plugin).getAllByRole('button', { name: /, device plugin$/ }).length, 4);
    assert.equal(within(dra).getAllByRole('button', { name: /, DRA$/ }).length, 4);
    assert.ok(
      within(dra).getByRole('button', {
        name: /^gpu-0\s*,\s*Healthy\s*,\s*used by claim dra\/worker-0-gpu → dra\/worker-0\s*,\s*DRA$/,
      }),
    );
    assert.ok(within(dra).getByRole('button', { name: /^gpu-3\s*,\s*Healthy\s*,\s*free\s*,\s*DRA$/ }));
    assert.match(numa0.textContent ?? '', /gpu\.plugboard\.example · DRA driver/);
    assert.match(numa0.textContent ?? '', /plugboard\.example\/gpu · device plugin/);
    const numa1 = screen.getByRole('region', { name: /NUMA node 1/ });
    assert.equal(
      within(numa1).getAllByRole('button', { name: /^gpu-[4-7]\s*,.*DRA$/ }).length,
      4,
      'devices 4-7 publish NUMA node 1',
    );
    assert.equal(
      screen.getByRole('switch', { name: `Fault gpu-5 (DRA, ${DRA_DRIVER})` }).getAttribute('aria-checked'),
      'false',
    );
  });

  it('shows what is observed: driver health, what the kubelet was told when it differs, a pending fault, taints by effect', () => {
    let node = mixedNode();
    node = patchDevice(node, 'gpu-1', {
      health: 'Unhealthy',
      reason: 'simulated: ECC errors',
      kubeletHealth: 'Healthy',
      fault: 'pending',
      taints: [
        {
          key: 'gpu.plugboard.example/unhealthy',
          value: null,
          effect: 'NoExecute',
          timeAdded: '2026-01-01T00:00:00Z',
          source: 'ResourceSlice',
        },
        { key: 'note', value: 'x', effect: 'None', timeAdded: null, source: 'DeviceTaintRule r' },
      ],
    });
    node = patchDevice(node, 'gpu-2', { health: 'Unknown', kubeletHealth: 'Unknown' });
    renderNumaMap(node);
    const tile = screen.getByRole('button', { name: /^gpu-1\s*,/ });
    assert.match(
      tile.getAttribute('aria-label') ?? tile.textContent ?? '',
      /Unhealthy.*fault pending: kubelet not told.*kubelet told Healthy.*simulated: ECC errors.*taint NoExecute.*used by claim dra\/worker-1-gpu → dra\/worker-1.*DRA/,
    );
    assert.doesNotMatch(tile.textContent ?? '', /taint None/, 'an informational taint is left to the drawer');
    assert.equal(tile.closest('li')?.classList.contains('bad'), true);
    const sw = screen.getByRole('switch', { name: `Fault gpu-1 (DRA, ${DRA_DRIVER})` });
    assert.equal(sw.textContent, 'fault pending');
    assert.equal(sw.getAttribute('aria-checked'), 'true');
    const unknown = screen.getByRole('button', { name: /^gpu-2\s*,\s*Unknown\s*,\s*free\s*,\s*DRA$/ });
    assert.equal(unknown.closest('li')?.classList.contains('warn'), true);
  });

  it('a driver this gateway does not run: each device still has a switch, said to be a DeviceTaintRule', () => {
    const node = mixedNode();
    node.dra!.drivers[DRA_DRIVER] = { ...node.dra!.drivers[DRA_DRIVER]!, inProcess: false };
    renderNumaMap(node);
    const draSwitches = screen.getAllByRole('switch', { name: /DRA/ });
    assert.equal(draSwitches.length, 8);
    assert.equal(draSwitches[0]!.getAttribute('aria-checked'), 'false');
    assert.equal(screen.getAllByText('via a DeviceTaintRule').length, 8);
    assert.equal(screen.getAllByRole('switch').length, 16, 'the device-plugin switches stay');
  });

  it('a gateway without DRA support: nothing DRA-specific is shown', () => {
    const view = renderNumaMap(makeSnapshot({ devices: 4, numaNodes: 1, pods: 1 }));
    assert.doesNotMatch(view.container.textContent ?? '', /DRA/);
    assert.deepEqual(
      groupByNuma(makeSnapshot({ devices: 4, numaNodes: 1, pods: 1 })).map((g) => g.draDrivers),
      [[]],
    );
  });

  it('a pod footprint highlights its DRA devices too', () => {
    const node = mixedNode();
    const fp = podFootprint(node, 'dra/worker-1');
    assert.deepEqual([...fp], [draTileKey(`${DRA_DRIVER}/node-a/gpu-1`)]);
    const view = renderNumaMap(node);
    act(() => view.update(node, fp));
    assert.ok(screen.getByRole('button', { name: /^gpu-1\s*,.*DRA\s*,\s*held by the selected pod$/ }));
  });

  it('at 1,024 DRA + 1,024 device-plugin devices, a one-DRA-device patch re-renders only that tile', () => {
    const renders = new Map<string, number>();
    const count = (k: string) => renders.set(k, (renders.get(k) ?? 0) + 1);
    const start = withDra(makeSnapshot({ devices: 1024, numaNodes: 4, pods: 250, devicesPerPod: 2 }), {
      devices: 1024,
      numaNodes: 4,
      claims: 250,
    });
    let doc = applyLiveMessage<NodeSnapshot>(undefined, { type: 'snapshot', seq: 1, node: start });
    assert.equal(doc.kind, 'applied');
    let current = (doc as { doc: { data: NodeSnapshot } }).doc;
    const view = renderNumaMap(current.data, { onTileRender: count });
    assert.equal(renders.size, 2048);
    assert.equal(view.container.querySelectorAll('[role="switch"]').length, 2048);

    renders.clear();
    const key = `${DRA_DRIVER}/node-a/gpu-700`;
    const path = `/dra/devices/${key.replaceAll('/', '~1')}`;
    doc = applyLiveMessage(current as never, {
      type: 'patch',
      seq: 2,
      ops: [
        { op: 'replace', path: `${path}/health`, value: 'Unhealthy' },
        { op: 'replace', path: `${path}/kubeletHealth`, value: 'Unhealthy' },
        { op: 'replace', path: `${path}/fault`, value: 'active' },
      ],
    });
    assert.equal(doc.kind, 'applied');
    current = (doc as { doc: { data: NodeSnapshot } }).doc;
    act(() => view.update(current.data));
    assert.deepEqual([...renders.entries()], [[draTileKey(key), 1]]);
    const tile = view.container.querySelector<HTMLElement>(`li[data-dra="${key}"]`)!;
    assert.ok(within(tile).getByRole('button', { name: /^gpu-700\s*,\s*Unhealthy\s*,\s*simulated fault/ }));
    assert.equal(
      within(tile)
        .getByRole('switch', { name: `Fault gpu-700 (DRA, ${DRA_DRIVER})` })
        .getAttribute('aria-checked'),
      'true',
    );
  });
});
