import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { act, cleanup, screen, within } from '@testing-library/react';
import type { NodeSnapshot } from '@plugboard/api';
import { makeSnapshot } from '../../test/make-snapshot';
import { renderNumaMap } from '../../test/render-numa-map';
import { applyLiveMessage } from '../../lib/live-document';
import { podFootprint } from '../../lib/node-view';
import type { FaultControl } from './device-tile';

const R = 'plugboard.example/gpu';

afterEach(() => cleanup());

describe('NumaMap', () => {
  it('groups devices by NUMA node; tiles are named by device ID, health word and the API serving them; switches are "Fault <id>"', () => {
    renderNumaMap(makeSnapshot({ devices: 8, numaNodes: 2, pods: 3 }));
    const numa0 = screen.getByRole('region', { name: /NUMA node 0/ });
    const numa1 = screen.getByRole('region', { name: /NUMA node 1/ });
    assert.equal(within(numa0).getAllByRole('button', { name: /^dev-\d\s*,\s*Healthy/ }).length, 4);
    assert.equal(within(numa1).getAllByRole('button', { name: /^dev-\d\s*,\s*Healthy/ }).length, 4);
    assert.ok(
      within(numa0).getByRole('button', {
        name: /^dev-0\s*,\s*Healthy\s*,\s*used by ml\/pod-0\s*,\s*device plugin$/,
      }),
    );
    assert.ok(
      within(numa1).getByRole('button', { name: /^dev-7\s*,\s*Healthy\s*,\s*free\s*,\s*device plugin$/ }),
    );
    const sw = screen.getByRole('switch', { name: 'Fault dev-5' });
    assert.equal(sw.getAttribute('aria-checked'), 'false');
    assert.match(numa0.textContent ?? '', /CPUs 0-31 · memory 64 GiB/);
  });

  it('shows an unhealthy faulted device as text, icon and label, and hides switches when faults are off', () => {
    const node = makeSnapshot({ devices: 4, numaNodes: 1, pods: 1 });
    node.devices[`${R}/dev-0`] = {
      ...node.devices[`${R}/dev-0`]!,
      health: 'Unhealthy',
      reason: 'simulated: test',
      kubeletHealth: 'Unhealthy',
      fault: 'active',
      faulted: true,
    };
    renderNumaMap(node, { faultControl: { mode: 'hidden' } });
    const tile = screen.getByRole('button', {
      name: /^dev-0\s*,\s*Unhealthy\s*,\s*simulated fault\s*,\s*simulated: test\s*,\s*used by ml\/pod-0\s*,\s*device plugin$/,
    });
    assert.match(tile.textContent ?? '', /Unhealthy/);
    assert.match(tile.textContent ?? '', /simulated/);
    assert.equal(screen.queryAllByRole('switch').length, 0);
  });

  it('never says "fault on" over a device the kubelet still sees Healthy: a held fault the kubelet was not told is "fault pending"', () => {
    const node = makeSnapshot({ devices: 4, numaNodes: 1, pods: 0 });
    node.devices[`${R}/dev-1`] = {
      ...node.devices[`${R}/dev-1`]!,
      health: 'Unhealthy',
      reason: 'drill',
      kubeletHealth: null,
      fault: 'pending',
      faulted: false,
    };
    renderNumaMap(node);
    const sw = screen.getByRole('switch', { name: 'Fault dev-1' });
    assert.equal(sw.textContent, 'fault pending');
    assert.equal(
      sw.getAttribute('aria-checked'),
      'true',
      'the switch shows the fault is held (clicking clears it)',
    );
    assert.ok(
      screen.getByRole('button', { name: /^dev-1\s*,\s*Unhealthy\s*,\s*fault pending: kubelet not told/ }),
    );
    assert.doesNotMatch(screen.getByRole('button', { name: /^dev-1/ }).textContent ?? '', /simulated fault/);
  });

  it('disables switches with the reason as their description', () => {
    const ctl: FaultControl = { mode: 'disabled', reason: 'need a token', reasonId: 'why' };
    renderNumaMap(makeSnapshot({ devices: 2, numaNodes: 1, pods: 0 }), { faultControl: ctl });
    const sw = screen.getByRole<HTMLButtonElement>('switch', { name: 'Fault dev-1' });
    assert.equal(sw.disabled, true);
    assert.equal(sw.getAttribute('aria-describedby'), 'why');
  });

  it('shows one tile per shared physical device with its replica use', () => {
    renderNumaMap(makeSnapshot({ devices: 8, numaNodes: 1, pods: 3, replicas: 4 }));
    const tile = screen.getByRole('button', {
      name: /^dev-0\s*,\s*Healthy\s*,\s*used by ml\/pod-0, batch\/pod-1, ml\/pod-2 · 3\/4 replicas in use\s*,\s*device plugin$/,
    });
    assert.match(tile.textContent ?? '', /3\/4 replicas in use/);
    assert.equal(screen.getAllByRole('switch').length, 2);
  });

  it('at 1,024 devices and 250 pods, a one-device patch re-renders only that tile', () => {
    const renders = new Map<string, number>();
    const count = (k: string) => renders.set(k, (renders.get(k) ?? 0) + 1);
    const start = makeSnapshot({ devices: 1024, numaNodes: 4, pods: 250, devicesPerPod: 2 });
    let doc = applyLiveMessage<NodeSnapshot>(undefined, { type: 'snapshot', seq: 1, node: start });
    assert.equal(doc.kind, 'applied');
    let current = (doc as { doc: { data: NodeSnapshot } }).doc;
    const view = renderNumaMap(current.data, { onTileRender: count });
    assert.equal(renders.size, 1024);
    assert.ok([...renders.values()].every((n) => n === 1));
    assert.equal(view.container.querySelectorAll('[role="switch"]').length, 1024);

    renders.clear();
    const key = `${R}/dev-700`;
    doc = applyLiveMessage(current as never, {
      type: 'patch',
      seq: 2,
      ops: [
        { op: 'replace', path: `/devices/${R.replace('/', '~1')}~1dev-700/health`, value: 'Unhealthy' },
        {
          op: 'replace',
          path: `/devices/${R.replace('/', '~1')}~1dev-700/kubeletHealth`,
          value: 'Unhealthy',
        },
        { op: 'replace', path: `/devices/${R.replace('/', '~1')}~1dev-700/fault`, value: 'active' },
        { op: 'replace', path: `/devices/${R.replace('/', '~1')}~1dev-700/faulted`, value: true },
      ],
    });
    assert.equal(doc.kind, 'applied');
    current = (doc as { doc: { data: NodeSnapshot } }).doc;
    act(() => view.update(current.data));
    assert.deepEqual([...renders.entries()], [[key, 1]]);
    // Scoped queries: computing 1,024 accessible names per assertion would dominate the test.
    const tile = view.container.querySelector<HTMLElement>('li[data-device="dev-700"]')!;
    assert.ok(within(tile).getByRole('button', { name: /^dev-700\s*,\s*Unhealthy\s*,\s*simulated fault/ }));
    assert.equal(
      within(tile).getByRole('switch', { name: 'Fault dev-700' }).getAttribute('aria-checked'),
      'true',
    );
  });

  it('selecting a pod highlights exactly its footprint and re-renders only those tiles', () => {
    const renders = new Map<string, number>();
    const node = makeSnapshot({ devices: 64, numaNodes: 2, pods: 20, devicesPerPod: 2 });
    const view = renderNumaMap(node, { onTileRender: (k) => renders.set(k, (renders.get(k) ?? 0) + 1) });
    renders.clear();
    act(() => view.update(node, podFootprint(node, 'ml/pod-4')));
    assert.deepEqual([...renders.keys()].sort(), [`${R}/dev-8`, `${R}/dev-9`]);
    const highlighted = [...view.container.querySelectorAll('li.highlighted')].map((li) =>
      li.getAttribute('data-device'),
    );
    assert.deepEqual(highlighted, ['dev-8', 'dev-9']);
    assert.ok(screen.getByRole('button', { name: /^dev-8\s*,.*held by the selected pod$/ }));
  });
});
