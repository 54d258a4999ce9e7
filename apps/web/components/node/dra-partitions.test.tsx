// Partitioned and shared DRA devices on the node page: a partitioned GPU as one tile of its counter
// set holding its partitions' tiles, with the counters used and left in words; a shared device's
// capacity used and left and each claim's share on its tile, in its drawer and in the claims table.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ReactNode } from 'react';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import type { NodeSnapshot } from '@plugboard/api';
import { makeSnapshot } from '../../test/make-snapshot';
import {
  PART_DRIVER,
  partKey,
  SHARE_DRIVER,
  SHARE_IDS,
  shareKey,
  withPartitionsAndShares,
} from '../../test/make-dra-partitions';
import { draTileKey } from '../../lib/dra-view';
import { withHistory } from '../../test/with-history';
import { ClaimsTable } from './claims-table';
import { DraDeviceDrawer } from './dra-device-drawer';
import { NumaMap } from './numa-map';

afterEach(() => cleanup());

const node = (): NodeSnapshot => withPartitionsAndShares(makeSnapshot({ devices: 2, numaNodes: 1, pods: 0 }));

const inDrawer = (children: ReactNode) =>
  withHistory(children, 'node-a', { draDevices: {}, draRecorded: true });

describe('partitioned devices on the NUMA map', () => {
  it('shows the counter set as one tile with its counters used and left in words, its partitions inside', () => {
    let opened: string | null = null;
    const n = node();
    render(
      <NumaMap
        node={n}
        faultControl={{ mode: 'enabled' }}
        pendingTiles={new Set()}
        onOpen={(k) => (opened = k)}
        onToggleFault={() => {}}
      />,
    );
    const driverList = screen.getByRole('list', { name: `${PART_DRIVER} DRA devices on NUMA node 0` });
    const set = driverList.querySelector('[data-counter-set="gpu-0"]') as HTMLElement;
    assert.ok(set, 'one tile for the counter set');
    const text = set.textContent ?? '';
    assert.match(
      text,
      /partitioned device: counter set in ResourceSlice node-a-part\.plugboard\.example-counters/,
    );
    assert.deepEqual(
      within(screen.getByRole('list', { name: 'Counters of gpu-0' }))
        .getAllByRole('listitem')
        .map((li) => li.textContent),
      ['memory 20Gi used of 40Gi, 20Gi left'],
    );
    assert.match(text, /2 of 7 partitions allocated/);
    assert.match(text, /the API reports no usage or health of a counter set/);
    const partitions = screen.getByRole('list', { name: 'Partitions of gpu-0' });
    assert.ok(set.contains(partitions), 'the partitions are inside their device');
    const tiles = within(partitions).getAllByRole('button', { name: /^gpu-0-/ });
    assert.deepEqual(
      tiles.map((b) => b.querySelector('.id')?.textContent),
      [
        'gpu-0-whole',
        'gpu-0-half-0',
        'gpu-0-half-1',
        'gpu-0-quarter-0',
        'gpu-0-quarter-1',
        'gpu-0-quarter-2',
        'gpu-0-quarter-3',
      ],
    );
    const q0 = tiles[3]!;
    assert.match(q0.textContent ?? '', /partition: takes 10Gi memory of gpu-0/);
    assert.match(q0.textContent ?? '', /used by claim ml\/part-quarter-0 → ml\/part-quarter-0/);
    assert.match(tiles[4]!.textContent ?? '', /free/);
    // Every partition keeps its own fault switch (its device's, through a DeviceTaintRule here).
    assert.ok(
      within(partitions).getByRole('switch', { name: `Fault gpu-0-quarter-0 (DRA, ${PART_DRIVER})` }),
    );
    fireEvent.click(q0);
    assert.equal(opened, draTileKey(partKey(n, 'quarter-0')));
    // No partition is outside its counter set's tile.
    assert.equal(within(driverList).getAllByRole('button', { name: /^gpu-0-/ }).length, 7);
  });

  it('shows a shared device’s capacity used and left and each claim’s share on its tile', () => {
    render(
      <NumaMap
        node={node()}
        faultControl={{ mode: 'enabled' }}
        pendingTiles={new Set()}
        onOpen={() => {}}
        onToggleFault={() => {}}
      />,
    );
    const list = screen.getByRole('list', { name: `${SHARE_DRIVER} DRA devices on NUMA node 0` });
    const tile = within(list).getByRole('button', { name: /^gpu-0/ });
    const text = tile.textContent ?? '';
    assert.match(text, /shared: memory 30Gi used of 40Gi, 10Gi left/);
    assert.match(
      text,
      /claim ml\/share-a \(20Gi memory\) → ml\/share-a; claim ml\/share-b \(10Gi memory\) → ml\/share-b/,
    );
    assert.equal(list.querySelector('[data-counter-set]'), null, 'a shared device is no counter set');
  });
});

describe('DraDeviceDrawer of a partition or a shared device', () => {
  it('a partition: its counter set with capacity, used, left and what it takes; every partition of it', () => {
    const n = node();
    render(inDrawer(<DraDeviceDrawer node={n} deviceKey={partKey(n, 'quarter-1')} onClose={() => {}} />));
    assert.ok(screen.getByRole('heading', { name: 'Partition of gpu-0' }));
    const counters = screen.getByRole('table', { name: 'Counters of gpu-0' });
    assert.deepEqual(
      within(counters)
        .getAllByRole('row')
        .map((r) => [...r.children].map((c) => c.textContent)),
      [
        ['Counter', 'Capacity', 'Used', 'Left', 'gpu-0-quarter-1 takes'],
        ['memory', '40Gi', '20Gi', '20Gi', '10Gi'],
      ],
    );
    assert.match(document.body.textContent ?? '', /The API reports no usage or health of a counter set/);
    const items = within(screen.getByRole('list', { name: 'Partitions of gpu-0' })).getAllByRole('listitem');
    assert.equal(items.length, 7);
    assert.equal(items[0]!.textContent, 'gpu-0-whole: takes 40Gi memory — free');
    assert.equal(
      items[3]!.textContent,
      'gpu-0-quarter-0: takes 10Gi memory — allocated to claim ml/part-quarter-0',
    );
    assert.equal(items[4]!.textContent, 'gpu-0-quarter-1 (this device): takes 10Gi memory — free');
    assert.equal(screen.queryByRole('table', { name: /Shares of/ }), null);
  });

  it('a shared device: capacity used and left with its request policy, each claim’s share ID, consumption and pods', () => {
    const n = node();
    render(inDrawer(<DraDeviceDrawer node={n} deviceKey={shareKey(n)} onClose={() => {}} />));
    const capacity = screen.getByRole('table', { name: 'Capacity of gpu-0 used by its shares' });
    assert.deepEqual(
      within(capacity)
        .getAllByRole('row')
        .slice(1)
        .map((r) => [...r.children].map((c) => c.textContent)),
      [['memory', '40Gi', '30Gi', '10Gi', 'default 10Gi; 10Gi and up in steps of 10Gi']],
    );
    const shares = screen.getByRole('table', { name: 'Shares of gpu-0' });
    assert.deepEqual(
      within(shares)
        .getAllByRole('row')
        .slice(1)
        .map((r) => [...r.children].map((c) => c.textContent)),
      [
        [
          'ml/share-a, request gpu',
          SHARE_IDS[0],
          '20Gi memory',
          'ml/share-a (Running)',
          'status not reported',
        ],
        [
          'ml/share-b, request gpu',
          SHARE_IDS[1],
          '10Gi memory',
          'ml/share-b (Running)',
          'status not reported',
        ],
      ],
    );
    assert.match(document.body.textContent ?? '', /PodResources reports the share ID, not the capacity/);
    assert.equal(screen.queryByRole('heading', { name: /Partition of/ }), null);
  });

  it('a share without a share ID, consumed capacity or device status says they are not reported', () => {
    const n = node();
    const d = n.dra!.devices[shareKey(n)]!;
    n.dra!.devices[shareKey(n)] = {
      ...d,
      allocations: [{ claim: 'ml/share-a', request: 'gpu', adminAccess: false, pods: [] }],
    };
    render(inDrawer(<DraDeviceDrawer node={n} deviceKey={shareKey(n)} onClose={() => {}} />));
    const row = within(screen.getByRole('table', { name: 'Shares of gpu-0' })).getAllByRole('row')[1]!;
    assert.deepEqual(
      [...row.children].map((c) => c.textContent),
      [
        'ml/share-a, request gpu',
        'not reported',
        'not reported',
        'reserved for no pod',
        'status not reported',
      ],
    );
  });
});

describe('ClaimsTable with shares', () => {
  it('names each shared device’s share ID and what the claim consumes of it', () => {
    render(<ClaimsTable node={node()} onOpenDevice={() => {}} />);
    const table = screen.getByRole('table', { name: 'ResourceClaims on node-a' });
    const row = within(table)
      .getAllByRole('row')
      .find((r) => /ml\/share-a|share-a/.test(r.querySelector('th')?.textContent ?? ''))!;
    assert.match(row.textContent ?? '', new RegExp(`share ${SHARE_IDS[0]}, 20Gi memory`));
  });
});
