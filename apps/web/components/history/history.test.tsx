import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, render, screen, within } from '@testing-library/react';
import type { ResourcePoint } from '@plugboard/api';
import { HealthStrip } from './health-strip';
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
      sparkPath([], (p) => p.capacity, 8),
      '',
    );
    const d = sparkPath([pt(0, 8), pt(10_000, 4)], (p) => p.allocatable, 8);
    assert.equal(d, 'M0.0,1.0L60.0,1.0L60.0,12.0L120.0,12.0');
    render(<Sparkline resource={R} points={[pt(0, 8), pt(10_000, 8, 5)]} windowLabel="Last hour" />);
    assert.ok(
      screen.getByText(`${R} Last hour: allocatable ranged from 5 to 8 of capacity 8; at most 2 allocated.`),
    );
  });
});
