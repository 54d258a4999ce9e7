// DRA beside device plugins against a real gateway running a DRA driver on kubelet-sim (its plugin
// watcher, the scheduler's DRA allocator, the device taint eviction controller): both APIs' devices
// on one NUMA map, the claims table with the scheduler's reason for a pending claim, the DRA device
// drawer, and a fault on a DRA device travelling the real DRA path — health to the pod's status and
// its affected flag, then a NoExecute taint (its pod named before confirm) evicting the pod, the
// drawer's health strip and the driver's history chart — and clearing it.
import { expect, test, type Page } from '@playwright/test';
import type { NodeSnapshot } from '@plugboard/api';
import { DRA_DRIVER, NIC } from './fixture-spec';
import { expectNoSeriousA11yViolations, gatewaySnapshot, saveScreenshot, webUrl } from './helpers';

const NODE = 'dra-node';
/** The eviction and the heal wait on the scheduler, the kubelet's status sync and the stream. */
const DRA_PATH = { timeout: 30_000 };

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

async function openLive(page: Page): Promise<void> {
  await page.goto(webUrl(`/nodes/${NODE}`));
  await expect(page.getByRole('heading', { level: 1, name: `Node ${NODE}` })).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: 'Live' }).first()).toBeVisible();
}

function draTile(page: Page, name: string) {
  return page.locator(`li[data-dra="${DRA_DRIVER}/${NODE}/${name}"]`);
}

test('DRA and device-plugin devices on one NUMA map, each marked; claims with why one is pending; the DRA device drawer', async ({
  page,
}) => {
  const truth = await gatewaySnapshot(NODE);
  const dra = truth.dra!;
  expect(Object.keys(dra.devices)).toHaveLength(4);
  await openLive(page);

  for (const d of Object.values(dra.devices)) {
    const numa = page.getByRole('region', { name: new RegExp(`^NUMA node ${d.numaNodes[0]} `) });
    const list = numa.getByRole('list', { name: `${DRA_DRIVER} DRA devices on NUMA node ${d.numaNodes[0]}` });
    const user =
      d.allocations.length === 0
        ? 'free'
        : `used by ${d.allocations.map((a) => `claim ${a.claim} → ${a.pods.join(', ')}`).join('; ')}`;
    await expect(
      list.getByRole('button', {
        name: new RegExp(`^${d.name}\\s*,\\s*Healthy\\s*,\\s*${escape(user)}\\s*,\\s*DRA$`),
      }),
    ).toBeVisible();
  }
  for (const d of Object.values(truth.devices)) {
    const numa = page.getByRole('region', { name: new RegExp(`^NUMA node ${d.numaNodes[0]} `) });
    await expect(
      numa
        .getByRole('list', { name: `${NIC} devices on NUMA node ${d.numaNodes[0]}` })
        .getByRole('button', { name: new RegExp(`^${d.id}\\s*,.*,\\s*device plugin$`) }),
    ).toBeVisible();
  }
  await expect(
    page.getByRole('region', { name: `${DRA_DRIVER} DRA devices published 4 allocated 2` }),
  ).toContainText('published 4');

  // Claims: the pending one first, with the scheduler's message; the prepared ones with their pods.
  const claims = page.getByRole('table', { name: `ResourceClaims on ${NODE}` });
  const pending = claims.locator('tr[data-claim="ml/too-many-gpus"]');
  await expect(pending).toContainText('pending: not allocated');
  await expect(pending).toContainText(`5 × ${DRA_DRIVER}`);
  await expect(claims.locator('tr[data-claim-why="ml/too-many-gpus"]')).toContainText(
    /Why pending: .*cannot allocate all claims/,
  );
  const trainClaim = truth.pods['ml/dra-train']!.claims![0]!.claim!;
  const trainRow = claims.locator(`tr[data-claim="${trainClaim}"]`);
  await expect(trainRow).toContainText('prepared by the kubelet');
  await expect(trainRow).toContainText('ml/dra-train');
  await expect(trainRow.getByText('Healthy', { exact: true })).toBeVisible();
  await expectNoSeriousA11yViolations(page, 'node page with DRA');
  await saveScreenshot(page, 'node-dra');

  // The claim's device opens its drawer: where it is published, health and what the kubelet was told.
  const device = dra.claims[trainClaim]!.devices[0]!;
  await trainRow.getByRole('button', { name: `Open DRA device ${device.device} (${DRA_DRIVER})` }).click();
  const drawer = page.getByRole('dialog', { name: `DRA device ${device.device}` });
  await expect(drawer).toContainText('not a device plugin');
  await expect(drawer.getByRole('row', { name: /The kubelet was told/ })).toContainText('Healthy');
  await expect(
    drawer.getByRole('table', { name: `Attributes and capacity of ${device.device}` }),
  ).toContainText(/capacity memory\s*80Gi/);
  await expect(drawer.getByRole('list', { name: `Claims allocated ${device.device}` })).toContainText(
    `claim ${trainClaim}, request gpu → pod ml/dra-train`,
  );
  await expectNoSeriousA11yViolations(page, 'DRA device drawer');
  await drawer.getByRole('button', { name: 'Close' }).click();
  await expect(drawer).toHaveCount(0);
});

test("a fault on a DRA device: health reaches the pod's status; a NoExecute taint names and evicts the pod; clearing heals", async ({
  page,
}) => {
  const truth = await gatewaySnapshot(NODE);
  const target = Object.values(truth.dra!.devices).find((d) =>
    d.allocations.some((a) => a.pods.includes('ml/dra-evictee')),
  )!;
  expect(target).toBeTruthy();
  const claimKey = target.allocations[0]!.claim;
  await openLive(page);
  const sw = page.getByRole('switch', { name: `Fault ${target.name} (DRA, ${DRA_DRIVER})`, exact: true });
  const tile = draTile(page, target.name);
  const claimRow = page.locator(`tr[data-claim="${claimKey}"]`);

  // 1. Health only: the driver tells the kubelet Unhealthy; the pod's allocatedResourcesStatus follows.
  await sw.click();
  const inject = page.getByRole('dialog', {
    name: `Inject a simulated fault on ${target.name} (DRA, ${DRA_DRIVER})?`,
  });
  await expect(inject.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await expect(inject.getByRole('radio', { name: 'No taint (health only)' })).toBeChecked();
  await expect(inject.getByRole('list', { name: 'Affected pods' })).toContainText('ml/dra-evictee');
  await inject.getByLabel('Reason').fill('e2e: DRA ECC error');
  await inject.getByRole('button', { name: 'Inject simulated fault' }).click();
  await expect(inject).toHaveCount(0);
  await expect(sw).toHaveAttribute('aria-checked', 'true');
  await expect(sw).toHaveText('fault on');
  await expect(
    tile.getByRole('button', {
      name: new RegExp(`^${target.name}\\s*,\\s*Unhealthy\\s*,\\s*simulated fault`),
    }),
  ).toBeVisible();
  await expect(claimRow.getByText('Unhealthy', { exact: true })).toBeVisible(DRA_PATH);
  await expect
    .poll(async () => (await gatewaySnapshot(NODE)).dra?.claims[claimKey]?.health, DRA_PATH)
    .toBe('Unhealthy');
  // The pod holding it is in the fault's blast radius, as on a device-plugin device.
  const evicteeRow = page.locator('tr[data-pod="ml/dra-evictee"]').first();
  await expect(evicteeRow).toContainText('affected: uses an unhealthy device');

  await sw.click();
  await page
    .getByRole('dialog', { name: `Clear the simulated fault on ${target.name} (DRA, ${DRA_DRIVER})?` })
    .getByRole('button', { name: 'Clear simulated fault' })
    .click();
  await expect(sw).toHaveAttribute('aria-checked', 'false');
  await expect(claimRow.getByText('Healthy', { exact: true })).toBeVisible(DRA_PATH);
  await expect(evicteeRow).not.toContainText('affected', DRA_PATH);

  // 2. NoExecute: the dialog names the pod it evicts before anything is sent.
  await sw.click();
  await inject.getByRole('radio', { name: 'NoExecute' }).check();
  await expect(inject.getByRole('list', { name: 'Pods that will be evicted' })).toContainText(
    'ml/dra-evictee',
  );
  await expectNoSeriousA11yViolations(page, 'DRA fault dialog (NoExecute)');
  await inject.getByRole('button', { name: 'Inject simulated fault and evict 1 pod' }).click();
  await expect(inject).toHaveCount(0);
  await expect(sw).toHaveAttribute('aria-checked', 'true');
  await expect(tile).toContainText('taint NoExecute', DRA_PATH);
  // The device taint eviction controller evicts the pod and its claim goes; the device is free.
  await expect(claimRow).toHaveCount(0, DRA_PATH);
  await expect(
    page.locator('tr[data-pod="ml/dra-evictee"]').filter({ hasNotText: /Failed|Evicted/ }),
  ).toHaveCount(0, DRA_PATH);
  const evictedTile = tile.getByRole('button', {
    name: new RegExp(`^${target.name}\\s*,\\s*Unhealthy.*taint NoExecute.*free`),
  });
  await expect(evictedTile).toBeVisible(DRA_PATH);
  // Its drawer's health strip, from the gateway's history (1 s buckets here): now unhealthy with
  // the NoExecute taint.
  await evictedTile.click();
  const drawer = page.getByRole('dialog', { name: `DRA device ${target.name}` });
  const strip = drawer.getByRole('list', { name: `Health history of ${target.name}` });
  await expect(strip.getByRole('listitem').last()).toContainText(
    /^Unhealthy, tainted NoExecute from .* to now/,
    DRA_PATH,
  );
  await expect(drawer).toContainText(new RegExp(`${target.name}: unhealthy \\d+ times?, tainted 1 time`));
  await expectNoSeriousA11yViolations(page, 'DRA device drawer with its health strip');
  await drawer.getByRole('button', { name: 'Close' }).click();
  // The driver's chart beside the device plugins', marked DRA.
  await expect(
    page.getByRole('figure', { name: new RegExp(`^${escape(DRA_DRIVER)} DRA driver — Last hour: usable`) }),
  ).toBeVisible();
  await expect(page.getByRole('region', { name: /Active simulated faults/ })).toContainText(
    'taint NoExecute',
  );
  const after: NodeSnapshot = await gatewaySnapshot(NODE);
  expect(after.dra!.claims[claimKey]).toBeUndefined();
  await saveScreenshot(page, 'node-dra-noexecute');

  // The overview sees it: the driver's counts and the node card.
  const overview = await page.context().newPage();
  await overview.goto(webUrl('/'));
  const card = overview.getByRole('article', { name: NODE });
  await expect(card).toContainText('1 unhealthy DRA device');
  await expect(
    card.getByRole('region', { name: new RegExp(`^${escape(DRA_DRIVER)} DRA devices`) }),
  ).toContainText('tainted 1');
  const cluster = overview.getByRole('region', { name: 'DRA across the cluster' });
  await expect(cluster.getByRole('list', { name: 'Pending claims, cluster-wide' })).toContainText(
    `ml/too-many-gpus on ${NODE}`,
  );
  await expectNoSeriousA11yViolations(overview, 'overview with DRA');
  await saveScreenshot(overview, 'overview-dra');
  await overview.close();

  // 3. Clear: the taint leaves the slice and the kubelet is told Healthy.
  await sw.click();
  await page
    .getByRole('dialog', { name: `Clear the simulated fault on ${target.name} (DRA, ${DRA_DRIVER})?` })
    .getByRole('button', { name: 'Clear simulated fault' })
    .click();
  await expect(sw).toHaveAttribute('aria-checked', 'false');
  await expect(
    tile.getByRole('button', {
      name: new RegExp(`^${target.name}\\s*,\\s*Healthy\\s*,\\s*free\\s*,\\s*DRA$`),
    }),
  ).toBeVisible(DRA_PATH);
  await expect
    .poll(async () => {
      const d = (await gatewaySnapshot(NODE)).dra?.devices[target.key];
      return d ? [d.kubeletHealth, d.taints.length, d.fault] : null;
    }, DRA_PATH)
    .toEqual(['Healthy', 0, null]);
});
