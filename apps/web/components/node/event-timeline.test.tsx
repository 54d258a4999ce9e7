import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import type { NodeEvent } from '@plugboard/api';
import { EventTimeline } from './event-timeline';

afterEach(() => cleanup());

const at = '2026-01-01T00:00:00.000Z';
const events: NodeEvent[] = [
  {
    seq: 1,
    at,
    kind: 'claim',
    resource: 'gpu.plugboard.example',
    deviceIds: ['gpu-3'],
    pod: { namespace: 'ml', name: 'train', container: null },
    message: 'claim ml/train-gpu prepared',
  },
  {
    seq: 2,
    at,
    kind: 'taint',
    resource: 'gpu.plugboard.example',
    deviceIds: ['gpu-3'],
    pod: null,
    message: 'gpu-3 tainted NoExecute (ResourceSlice)',
  },
  {
    seq: 3,
    at,
    kind: 'health',
    resource: 'plugboard.example/gpu',
    deviceIds: ['gpu-0'],
    pod: null,
    message: 'gpu-0 Unhealthy',
  },
];

describe('EventTimeline', () => {
  it('renders DRA taint and claim events newest first, and filters by those kinds', () => {
    render(<EventTimeline events={events} />);
    const list = screen.getByRole('list', { name: 'Node events, newest first' });
    const items = within(list).getAllByRole('listitem');
    assert.deepEqual(
      items.map((li) => li.querySelector('.badge')?.textContent),
      ['health', 'taint', 'claim'],
    );
    assert.match(items[1]!.textContent ?? '', /gpu-3 tainted NoExecute \(ResourceSlice\)\s*\[gpu-3\]/);
    assert.match(items[2]!.textContent ?? '', /claim ml\/train-gpu prepared.*pod ml\/train/);

    fireEvent.change(screen.getByRole('combobox', { name: 'Kind' }), { target: { value: 'taint' } });
    assert.equal(within(screen.getByRole('list')).getAllByRole('listitem').length, 1);
    fireEvent.change(screen.getByRole('combobox', { name: 'Kind' }), { target: { value: 'claim' } });
    assert.match(within(screen.getByRole('list')).getByRole('listitem').textContent ?? '', /prepared/);
  });
});
