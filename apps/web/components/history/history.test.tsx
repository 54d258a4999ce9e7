import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, render, screen, within } from '@testing-library/react';
import type { ResourcePoint } from '@plugboard/api';
import { DraDriverHistory, DraHistoryTable } from './dra-driver-history';
import { makeSnapshot } from '../../test/make-snapshot';
import { DRA_DRIVER, withDra } from '../../test/make-dra';
import { draPoint } from '../../test/make-history';
import { withHistory } from '../../test/with-history';
import { HealthStrip } from './health-strip';
import { NodeHistoryPanel } from './node-history';
import { NodeSparklines } from './node-sparklines';
import { HistoryTable } from './resource-history';
import { Sparkline, sparkPath } from './sparkline';

afterEach(() => cleanup());

const R = 'plugboard.example/gpu';
const pt = (t: number, allocatable: number, minAllocatable = allocatable): ResourcePoint => ({
  t,
  step: 10_000,
  capacity: 8,
  allocatable,
  allocated: 2,
  unhealthy: 8 - allocatable,
  minAllocatable,
  maxUnhealthy: 8 - minAllocatable,
});

describe('HistoryTable (the chart text equivalent)', () => {
  it('lists the live counts first, then one row per change, with dips spelled out', () => {
    render(
      <HistoryTable
        resource={R}
        points={[pt(0, 8), pt(10_000, 8), pt(20_000, 7), pt(30_000, 8, 6)]}
        live={{ capacity: 8, allocatable: 8, allocated: 3, unhealthy: 0 }}
      />,
    );
    const table = screen.getByRole('table', { name: `History of ${R}, newest first, one row per change` });
    const rows = within(table).getAllByRole('row').slice(1);
    const cells = rows.map((r) =>
      within(r)
        .getAllByRole('cell')
        .map((c) => c.textContent),
    );
    assert.equal(cells.length, 4);
    assert.deepEqual(cells[0], ['now (live)', '8', '8', '3', '0']);
    assert.deepEqual(cells[1]!.slice(2), ['8', '8 (dipped to 6)', '2', '0']);
    assert.deepEqual(cells[2]!.slice(2), ['8', '7', '2', '1']);
    assert.deepEqual(cells[3]!.slice(2), ['8', '8', '2', '0']);
    assert.deepEqual(
      within(table)
        .getAllByRole('columnheader')
        .map((h) => h.textContent),
      ['From', 'To', 'Capacity', 'Allocatable', 'Allocated', 'Unhealthy'],
    );
  });

  it('says so when there is no history yet', () => {
    render(<HistoryTable resource={R} points={[]} live={null} />);
    assert.ok(screen.getByText('No history recorded yet.'));
  });
});

describe('HealthStrip', () => {
  it('draws spans to scale and lists them as text, the last one until now', () => {
    const { container } = render(
      <HealthStrip
        device="gpu-3"
        transitions={[
          { t: 0, health: 'Healthy', reason: null },
          { t: 60_000, health: 'Unhealthy', reason: 'xid 79' },
        ]}
        from={0}
        to={100_000}
      />,
    );
    const segs = [...container.querySelectorAll<HTMLElement>('.health-strip .seg')];
    assert.deepEqual(
      segs.map((s) => [s.className, s.style.left, s.style.width]),
      [
        ['seg ok', '0%', '60%'],
        ['seg bad', '60%', '40%'],
      ],
    );
    const list = screen.getByRole('list', { name: 'Health history of gpu-3' });
    const items = within(list)
      .getAllByRole('listitem')
      .map((li) => li.textContent);
    assert.equal(items.length, 2);
    assert.match(items[0]!, /^Healthy from .+ to .+$/);
    assert.match(items[1]!, /^Unhealthy from .+ to now \(xid 79\)$/);
    assert.ok(screen.getByText(/unhealthy 1 time$/));
  });
});

describe('Sparkline', () => {
  it('steps through the buckets and has a text equivalent', () => {
    assert.equal(
      sparkPath([] as ResourcePoint[], (p) => p.capacity, 8),
      '',
    );
    const d = sparkPath([pt(0, 8), pt(10_000, 4)], (p) => p.allocatable, 8);
    assert.equal(d, 'M0.0,1.0L60.0,1.0L60.0,12.0L120.0,12.0');
    const { container } = render(
      <Sparkline
        points={[
          { t: 0, step: 10_000, top: 8, line: 8 },
          { t: 10_000, step: 10_000, top: 8, line: 4 },
        ]}
        text="gpu.plugboard.example usable dipped"
      />,
    );
    assert.ok(screen.getByText('gpu.plugboard.example usable dipped'));
    assert.equal(container.querySelector('.spark-allocatable')?.getAttribute('d'), d);
  });
});

const dpt = draPoint;

describe('DRA driver history', () => {
  it("the table has DRA's own columns, the live counts first, dips and peaks spelled out", () => {
    render(
      <DraHistoryTable
        driver={DRA_DRIVER}
        points={[dpt(0, 8), dpt(10_000, 8, { minUsable: 6, maxUnhealthy: 2, maxTainted: 1 }), dpt(20_000, 7)]}
        live={{ published: 8, usable: 8, allocated: 3, free: 5, unhealthy: 0, tainted: 0 }}
      />,
    );
    const table = screen.getByRole('table', {
      name: `History of DRA driver ${DRA_DRIVER}, newest first, one row per change`,
    });
    assert.deepEqual(
      within(table)
        .getAllByRole('columnheader')
        .map((h) => h.textContent),
      ['From', 'To', 'Published', 'Usable', 'Allocated', 'Unhealthy', 'Tainted'],
    );
    const cells = within(table)
      .getAllByRole('row')
      .slice(1)
      .map((r) =>
        within(r)
          .getAllByRole('cell')
          .map((c) => c.textContent),
      );
    assert.equal(cells.length, 4);
    assert.deepEqual(cells[0], ['now (live)', '8', '8', '3', '0', '0']);
    assert.deepEqual(cells[1]!.slice(2), ['8', '7', '2', '1', '0']);
    assert.deepEqual(cells[2]!.slice(2), ['8', '8 (dipped to 6)', '2', '0 (peaked at 2)', '0 (peaked at 1)']);
    assert.deepEqual(cells[3]!.slice(2), ['8', '8', '2', '0', '0']);
  });

  it('the figure is marked DRA, named by its summary, with a legend of its own series', () => {
    render(
      <DraDriverHistory
        driver={DRA_DRIVER}
        points={[dpt(0, 8), dpt(10_000, 8, { minUsable: 6, maxUnhealthy: 2 })]}
        live={null}
        windowLabel="Last hour"
        now={20_000}
      />,
    );
    const figure = screen.getByRole('figure', {
      name: `${DRA_DRIVER} DRA driver — Last hour: usable ranged from 6 to 8 of 8 published; at most 2 allocated, at most 2 unhealthy.`,
    });
    assert.match(
      figure.querySelector('.history-legend')?.textContent ?? '',
      /published.*usable.*allocated.*unhealthy/,
    );
    assert.doesNotMatch(figure.querySelector('.history-legend')?.textContent ?? '', /capacity|allocatable/);
    assert.ok(within(figure).getByText(`Table: history of DRA driver ${DRA_DRIVER}`));
  });
});

describe('HealthStrip of a DRA device', () => {
  it('shows Unknown and tainted spans, in the strip and as text', () => {
    const { container } = render(
      <HealthStrip
        device="gpu-1"
        transitions={[
          { t: 0, health: 'Unknown', reason: null, taint: null },
          { t: 20_000, health: 'Healthy', reason: null, taint: null },
          { t: 50_000, health: 'Unhealthy', reason: 'xid 79', taint: null },
          { t: 60_000, health: 'Unhealthy', reason: 'xid 79', taint: 'NoExecute' },
        ]}
        from={0}
        to={100_000}
      />,
    );
    assert.deepEqual(
      [...container.querySelectorAll<HTMLElement>('.health-strip .seg')].map((s) => s.className),
      ['seg unknown', 'seg ok', 'seg bad', 'seg bad tainted'],
    );
    const items = within(screen.getByRole('list', { name: 'Health history of gpu-1' }))
      .getAllByRole('listitem')
      .map((li) => li.textContent);
    assert.match(items[0]!, /^Unknown from /);
    assert.match(items[3]!, /^Unhealthy, tainted NoExecute from .+ to now \(xid 79\)$/);
    assert.ok(screen.getByText(/unhealthy 1 time, tainted 1 time$/));
  });
});

describe('node history with a DRA driver', () => {
  const node = withDra(makeSnapshot({ devices: 4, numaNodes: 2, pods: 1 }), {
    devices: 4,
    numaNodes: 2,
    claims: 1,
  });
  const history = {
    resources: { [R]: [pt(0, 8)] },
    draDrivers: { [DRA_DRIVER]: [dpt(0, 4, { published: 4, minUsable: 3, maxUnhealthy: 1 })] },
  };

  it('the node panel charts the DRA driver beside the resources, marked DRA', () => {
    render(withHistory(<NodeHistoryPanel node={node} />, node.nodeName, history));
    const figures = screen.getAllByRole('figure').map((f) => f.getAttribute('aria-labelledby'));
    assert.equal(figures.length, Object.keys(node.resources).length + 1);
    assert.ok(
      screen.getByRole('figure', {
        name: `${DRA_DRIVER} DRA driver — Last hour: usable ranged from 3 to 4 of 4 published; at most 2 allocated, at most 1 unhealthy.`,
      }),
    );
    assert.ok(
      screen.getByRole('figure', {
        name: new RegExp(`^${R} this gateway's plugin — Last hour: allocatable`),
      }),
    );
  });

  it('a gateway that predates DRA history: no DRA chart, and the panel says why', () => {
    render(withHistory(<NodeHistoryPanel node={node} />, node.nodeName, { ...history, draRecorded: false }));
    assert.equal(screen.queryByRole('figure', { name: new RegExp(`^${DRA_DRIVER}`) }), null);
    assert.ok(screen.getByText(/does not record DRA drivers \(it predates DRA history\)/));
  });

  it('the overview sparklines include the DRA driver: usable against published', () => {
    render(
      withHistory(
        <NodeSparklines nodeName={node.nodeName} resources={[R]} draDrivers={[DRA_DRIVER]} />,
        node.nodeName,
        history,
      ),
    );
    assert.ok(screen.getByText(`${DRA_DRIVER} (DRA), last hour`));
    assert.ok(
      screen.getByText(
        `DRA driver ${DRA_DRIVER} Last hour: usable ranged from 3 to 4 of 4 published; at most 2 allocated, at most 1 unhealthy.`,
      ),
    );
    assert.ok(screen.getByText(new RegExp(`^${R} Last hour: allocatable stayed at 8`)));
  });
});
