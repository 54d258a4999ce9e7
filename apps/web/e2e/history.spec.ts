// History charts against real gateways (1 s buckets, see cluster-fixture.ts): a fault injected on
// the gateway shows up in the node page chart's text equivalent as allocatable dropping, in the
// device drawer's health strip, and the overview carries sparklines with text equivalents.
import { expect, test } from '@playwright/test';
import { NIC } from './fixture-spec';
import { expectNoSeriousA11yViolations, fixture, gatewaySnapshot, saveScreenshot, webUrl } from './helpers';

const NODE = 'gpu-node-a';
const gatewayUrl = () => fixture().gateways.find((g) => g.name === NODE)!.url;

test('a fault shows as allocatable dropping in the chart table, and as Unhealthy in the health strip', async ({
  page,
}) => {
  const truth = await gatewaySnapshot(NODE);
  const capacity = truth.resources[NIC]!.kubelet.capacity;
  const target = Object.values(truth.devices).find(
    (d) => d.resource === NIC && !d.allocation && d.health === 'Healthy',
  )!;
  expect(target).toBeTruthy();

  await page.goto(webUrl(`/nodes/${NODE}`));
  await expect(page.getByRole('status').filter({ hasText: 'Live' }).first()).toBeVisible();
  const figure = page.getByRole('figure', {
    name: new RegExp(`^${NIC.replace('.', '\\.')} this gateway's plugin — `),
  });
  await expect(figure).toBeVisible();
  await figure.getByText(`Table: history of ${NIC}`).click();
  const table = figure.getByRole('table', { name: `History of ${NIC}, newest first, one row per change` });
  // Row 0 is "now (live)"; row 1 the newest closed bucket from the gateway's history.
  const newestBucketAllocatable = table.locator('tbody tr').nth(1).locator('td').nth(3);
  await expect(newestBucketAllocatable).toHaveText(String(capacity));

  const post = await fetch(`${gatewayUrl()}/api/v1/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ resource: NIC, deviceId: target.id, reason: 'e2e: history drill' }),
  });
  expect(post.status).toBe(201);
  const { id } = (await post.json()) as { id: string };
  try {
    // The drop arrives through the stream's history messages (the REST query is not refetched).
    await expect(newestBucketAllocatable).toHaveText(String(capacity - 1));
    // An older row still has the full count: the table shows the drop, not just the new value.
    await expect(
      table
        .locator('tbody tr td:nth-child(4)')
        .filter({ hasText: new RegExp(`^${capacity}$`) })
        .first(),
    ).toBeVisible();
    // The window also holds the gateway's start (allocatable 0 before registration): a range, not a value.
    await expect(figure.locator('figcaption')).toContainText(
      new RegExp(`allocatable ranged from \\d+ to ${capacity} of capacity ${capacity}`),
    );
    await expectNoSeriousA11yViolations(page, 'node page with the history table open');
    await saveScreenshot(page, 'history-node');

    await page.goto(webUrl(`/nodes/${NODE}?device=${encodeURIComponent(target.key)}`));
    const drawer = page.getByRole('dialog', { name: `Device ${target.id}` });
    await expect(drawer).toBeVisible();
    const strip = drawer.getByRole('list', { name: `Health history of ${target.id}` });
    await expect(strip.getByRole('listitem').last()).toContainText(/^Unhealthy from .+ to now/);
    await expect(strip.getByRole('listitem').last()).toContainText('e2e: history drill');
    await expectNoSeriousA11yViolations(page, 'device drawer with its health strip');
    await saveScreenshot(page, 'history-drawer');
  } finally {
    expect((await fetch(`${gatewayUrl()}/api/v1/faults/${id}`, { method: 'DELETE' })).status).toBe(204);
    await expect
      .poll(async () => (await gatewaySnapshot(NODE)).resources[NIC]!.kubelet.allocatable)
      .toBe(capacity);
  }
});

test('the overview has a sparkline per node and resource with a text equivalent', async ({ page }) => {
  await page.goto(webUrl('/'));
  const card = page.getByRole('article').filter({ has: page.getByRole('heading', { name: NODE }) });
  await expect(
    card.getByText(new RegExp(`^${NIC.replace('.', '\\.')} Last hour: allocatable `)),
  ).toBeAttached();
  expect(await card.locator('.sparkline svg path').count()).toBeGreaterThan(0);
  await expectNoSeriousA11yViolations(page, 'overview with sparklines');
});
