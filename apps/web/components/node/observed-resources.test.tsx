// Observed resources on the node page: another device plugin's devices in the NUMA map beside the
// gateway's own, each naming who serves it; no fault switch on them, the reason reachable by focus;
// the resource's note where its counts are; the drawer and the history name who serves it too.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, render, screen, within } from '@testing-library/react';
import type { NodeSnapshot } from '@plugboard/api';
import { makeSnapshot } from '../../test/make-snapshot';
import { OBSERVED_RESOURCE, withObserved } from '../../test/make-observed';
import { OBSERVED_NO_FAULT_REASON, groupByNuma } from '../../lib/node-view';
import { NumaMap } from './numa-map';
import { ResourcePanel } from './resource-panel';
import type { FaultControl } from './device-tile';

const enabled: FaultControl = { mode: 'enabled' };
const noop = () => {};

afterEach(() => cleanup());

/** 4 GPUs of this gateway's plugin and 3 of another device plugin (1 more unhealthy, not named). */
function mixedNode(): NodeSnapshot {
  return withObserved(makeSnapshot({ devices: 4, numaNodes: 1, pods: 1 }), {
    devices: 3,
    unhealthy: 1,
    pods: 1,
  });
}

function renderMap(node: NodeSnapshot, faultControl: FaultControl = enabled) {
  return render(
    <NumaMap
      node={node}
      faultControl={faultControl}
      pendingTiles={new Set()}
      onOpen={noop}
      onToggleFault={noop}
    />,
  );
}

describe('observed resources on the node page', () => {
  it("places another device plugin's devices in the NUMA map beside the gateway's own, each naming who serves it", () => {
    const node = mixedNode();
    assert.deepEqual(
      groupByNuma(node)[0]!.resources.map((r) => [r.resource, r.tiles.length]),
      [
        [OBSERVED_RESOURCE, 3],
        ['plugboard.example/gpu', 4],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    renderMap(node);
    const observed = screen.getByRole('list', { name: `${OBSERVED_RESOURCE} devices on NUMA node 0` });
    const own = screen.getByRole('list', { name: 'plugboard.example/gpu devices on NUMA node 0' });
    assert.equal(
      within(observed).getAllByRole('button', { name: /, another device plugin \(observed\)$/ }).length,
      3,
    );
    assert.ok(
      within(observed).getByRole('button', {
        name: /^dev-0\s*,\s*Healthy\s*,\s*used by ml\/observed-pod-0\s*,\s*another device plugin \(observed\)$/,
      }),
    );
    assert.equal(within(own).getAllByRole('button', { name: /, device plugin$/ }).length, 4);
    // The headings name who serves each resource.
    const headings = screen.getAllByRole('heading', { level: 4 }).map((h) => h.textContent);
    assert.ok(headings.includes(`${OBSERVED_RESOURCE} · device plugin · another device plugin (observed)`));
    assert.ok(headings.includes("plugboard.example/gpu · device plugin · this gateway's plugin"));
  });

  it('shows no fault switch on an observed device, but an info button described by the reason', () => {
    renderMap(mixedNode());
    const observed = screen.getByRole('list', { name: `${OBSERVED_RESOURCE} devices on NUMA node 0` });
    assert.equal(within(observed).queryAllByRole('switch').length, 0, 'no switch, not even a disabled one');
    assert.equal(screen.getAllByRole('switch').length, 4, "the gateway's own devices keep theirs");
    const info = within(observed).getByRole('button', { name: 'no fault switch for dev-0' });
    const tip = document.getElementById(info.getAttribute('aria-describedby') ?? '');
    assert.equal(tip?.getAttribute('role'), 'tooltip');
    assert.equal(tip?.textContent, OBSERVED_NO_FAULT_REASON['device-plugin']);
    assert.equal(
      OBSERVED_NO_FAULT_REASON['device-plugin'],
      'Served by another device plugin: the device-plugin API lets only that plugin mark a device unhealthy.',
    );
    info.focus();
    assert.equal(document.activeElement, info, 'reachable by keyboard focus');
  });

  it('shows neither switch nor info button when fault controls are hidden', () => {
    renderMap(mixedNode(), { mode: 'hidden' });
    assert.equal(screen.queryAllByRole('switch').length, 0);
    assert.equal(screen.queryAllByRole('button', { name: /no fault switch/ }).length, 0);
  });

  it("says the observed resource's note where its counts are, and what the kubelet does not report", () => {
    render(<ResourcePanel node={mixedNode()} />);
    const card = screen
      .getByRole('region', { name: `${OBSERVED_RESOURCE} capacity 4 allocatable 3` })
      .closest('article')!;
    assert.match(card.textContent ?? '', /another device plugin \(observed\)/);
    assert.match(
      card.textContent ?? '',
      /1 of 4 unhealthy — the kubelet does not say which unless a pod holds them/,
    );
    assert.match(
      card.textContent ?? '',
      /registration and ListAndWatch are between that plugin and the kubelet: not reported/,
    );
    assert.doesNotMatch(card.textContent ?? '', /last ListAndWatch update/);
    const own = screen
      .getByRole('region', { name: 'plugboard.example/gpu capacity 4 allocatable 4' })
      .closest('article')!;
    assert.match(own.textContent ?? '', /this gateway's plugin/);
    assert.match(own.textContent ?? '', /last ListAndWatch update/);
  });

  it('reads a resource from an older gateway (no servedBy) as the gateway plugin', () => {
    renderMap(makeSnapshot({ devices: 2, numaNodes: 1, pods: 0 }));
    assert.equal(screen.getAllByRole('switch').length, 2);
    assert.match(screen.getByRole('heading', { level: 4 }).textContent ?? '', /this gateway's plugin/);
  });

  it('a resource only the Node status names: labelled so, no switch, its own reason', () => {
    const node = withObserved(makeSnapshot({ devices: 1, numaNodes: 1, pods: 0 }), {
      resource: 'example.com/fpga',
      servedBy: 'node-status',
      devices: 1,
    });
    renderMap(node);
    const list = screen.getByRole('list', { name: 'example.com/fpga devices on NUMA node 0' });
    assert.ok(within(list).getByRole('button', { name: /, Node status only$/ }));
    const info = within(list).getByRole('button', { name: /no fault switch/ });
    assert.equal(
      document.getElementById(info.getAttribute('aria-describedby') ?? '')?.textContent,
      OBSERVED_NO_FAULT_REASON['node-status'],
    );
  });
});
