// Partitionable devices (KEP-4815) and shared devices (KEP-5075) on the node page, against the
// fixture's parts-node: two DRA drivers of Plugboard's library, run beside an observer gateway on
// kubelet-sim, whose scheduler allocated two quarters of the partitioned GPU and two shares of the
// shared one. Every number the page shows is checked against the gateway's own snapshot; the page
// and both drawers are scanned by axe.
import { expect, test, type Page } from '@playwright/test';
import { expectNoSeriousA11yViolations, gatewaySnapshot, saveScreenshot, webUrl } from './helpers';
import { PART_DRIVER, SHARE_DRIVER } from './fixture-spec';

const NODE = 'parts-node';

async function openLive(page: Page): Promise<void> {
  await page.goto(webUrl(`/nodes/${NODE}`));
  await expect(page.getByRole('heading', { level: 1, name: `Node ${NODE}` })).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: 'Live' }).first()).toBeVisible();
}

test('a partitioned GPU is one tile of its counter set holding its partitions; a shared GPU lists its shares', async ({
  page,
}) => {
  const truth = await gatewaySnapshot(NODE);
  const pool = Object.values(truth.dra!.drivers[PART_DRIVER]!.pools)[0]!;
  const set = pool.counterSets!['gpu-0']!;
  // The scheduler's doing, as the gateway observed it: two quarters taken, 20Gi of 40Gi used.
  expect(set.counters['memory']).toEqual({ capacity: '40Gi', used: '20Gi', left: '20Gi' });
  expect(set.deviceKeys).toHaveLength(7);
  const taken = set.deviceKeys.filter((k) => truth.dra!.devices[k]!.allocations.length > 0);
  expect(taken.every((k) => k.includes('-quarter-'))).toBe(true);
  const shared = Object.values(truth.dra!.devices).find((d) => d.driver === SHARE_DRIVER)!;
  expect(shared.sharedCapacity?.['memory']).toEqual({ capacity: '40Gi', used: '30Gi', left: '10Gi' });
  expect(shared.allocations.map((a) => a.shareID).every(Boolean)).toBe(true);

  await openLive(page);
  const counterSet = page.locator('[data-counter-set="gpu-0"]');
  await expect(counterSet).toContainText(`counter set in ResourceSlice ${set.slice}`);
  await expect(page.getByRole('list', { name: 'Counters of gpu-0' })).toHaveText(
    'memory 20Gi used of 40Gi, 20Gi left',
  );
  await expect(counterSet).toContainText('2 of 7 partitions allocated');
  const partitions = page.getByRole('list', { name: 'Partitions of gpu-0' });
  await expect(partitions.getByRole('button', { name: /^gpu-0-/ })).toHaveCount(7);
  await expect(partitions.getByRole('button', { name: /^gpu-0-whole/ })).toContainText(
    'partition: takes 40Gi memory of gpu-0',
  );
  const sharedTile = page
    .getByRole('list', { name: `${SHARE_DRIVER} DRA devices on NUMA node 0` })
    .getByRole('button', { name: /^gpu-0/ });
  await expect(sharedTile).toContainText('shared: memory 30Gi used of 40Gi, 10Gi left');
  await expect(sharedTile).toContainText(/claim ml\/share-a-gpu-\w+ \(20Gi memory\) → ml\/share-a/);
  await saveScreenshot(page, 'dra-partitions-node');
  await expectNoSeriousA11yViolations(page, 'node page with partitions and shares');

  // A taken quarter's drawer: its counter set, what it takes, every partition of the set.
  const quarter = truth.dra!.devices[taken[0]!]!;
  await partitions.getByRole('button', { name: new RegExp(`^${quarter.name}`) }).click();
  const drawer = page.getByRole('dialog', { name: `DRA device ${quarter.name}` });
  await expect(drawer.getByRole('heading', { name: 'Partition of gpu-0' })).toBeVisible();
  await expect(drawer.getByRole('table', { name: 'Counters of gpu-0' }).getByRole('row').nth(1)).toHaveText(
    /memory\s*40Gi\s*20Gi\s*20Gi\s*10Gi/,
  );
  await expect(drawer.getByRole('list', { name: 'Partitions of gpu-0' }).getByRole('listitem')).toHaveCount(
    7,
  );
  await expectNoSeriousA11yViolations(page, 'partition drawer');
  await drawer.getByRole('button', { name: 'Close' }).click();
  await expect(drawer).toHaveCount(0);

  // The shared GPU's drawer: capacity used and left with the request policy, one row per share.
  await sharedTile.click();
  const sharedDrawer = page.getByRole('dialog', { name: `DRA device ${shared.name}` });
  await expect(
    sharedDrawer.getByRole('table', { name: `Capacity of ${shared.name} used by its shares` }),
  ).toContainText('default 10Gi; 10Gi and up in steps of 10Gi');
  const shares = sharedDrawer.getByRole('table', { name: `Shares of ${shared.name}` });
  await expect(shares.getByRole('row')).toHaveCount(3);
  for (const a of shared.allocations) {
    await expect(shares).toContainText(a.shareID!);
    await expect(shares).toContainText(`${a.consumedCapacity!['memory']} memory`);
  }
  await saveScreenshot(page, 'dra-shared-drawer');
  await expectNoSeriousA11yViolations(page, 'shared device drawer');
});
