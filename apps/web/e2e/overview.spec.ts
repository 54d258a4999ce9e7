// Cluster overview against real gateways: every node with the right per-resource counts, live,
// an unreachable gateway that says why, filters, the first render from the server (no
// "Connecting" flash, readable without JavaScript), and an accessibility scan.
import { expect, test, type APIRequestContext } from '@playwright/test';
import type { ClusterDocument } from '../lib/cluster-types';
import { expectNoSeriousA11yViolations, gatewaySummary, saveScreenshot, webUrl } from './helpers';
import { advertised, GPU, NODES } from './fixture-spec';

/** Node cards: every fixture node and the unreachable gateway global setup adds. */
const CARDS = NODES.length + 1;

test('the overview lists every node with capacity, allocatable, allocated and free per resource', async ({
  page,
}) => {
  await page.goto(webUrl('/'));
  await expect(page.getByRole('heading', { level: 1, name: 'Cluster overview' })).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: 'Live' }).first()).toBeVisible();

  for (const spec of NODES) {
    const card = page.getByRole('article', { name: spec.name });
    await expect(card.getByText('● Live')).toBeVisible();
    const truth = await gatewaySummary(spec.name);
    for (const res of spec.resources) {
      const counts = truth.resources[res.name]!;
      const total = advertised(res);
      // The fixture's own arithmetic, independent of the gateway: devices minus the pods' limits.
      const requested = spec.pods.reduce((n, p) => n + (p.limits[res.name] ?? 0), 0);
      expect(counts.capacity).toBe(total);
      expect(counts.allocated).toBe(requested);
      const region = card.getByRole('region', { name: `${res.name} capacity ${total} allocatable ${total}` });
      await expect(region).toContainText(`capacity ${total}`);
      await expect(region).toContainText(`allocatable ${total}`);
      await expect(region).toContainText(`allocated ${requested}`);
      await expect(region).toContainText(`free ${total - requested}`);
    }
  }
  await expect(page.getByText(`${CARDS} nodes · 0 with unhealthy devices · 1 not live`)).toBeVisible();
  // Cluster totals: the sum of every node's devices per resource.
  await page.getByText('Cluster totals per resource').click();
  const gpuTotal = NODES.flatMap((n) => n.resources.filter((r) => r.name === GPU)).reduce(
    (t, r) => t + advertised(r),
    0,
  );
  await expect(
    page.getByRole('region', { name: `${GPU} capacity ${gpuTotal} allocatable ${gpuTotal}` }),
  ).toBeVisible();
  await saveScreenshot(page, 'overview');
  await expectNoSeriousA11yViolations(page, 'overview');
});

test('an unreachable gateway is listed with the reason, never as zeros', async ({ page }) => {
  await page.goto(webUrl('/'));
  const ghost = page.getByRole('article', { name: 'ghost-node' });
  await expect(ghost.getByText('Gateway unreachable')).toBeVisible();
  await expect(ghost).toContainText(/ECONNREFUSED/);
  await expect(ghost.getByText(/capacity \d/)).toHaveCount(0);
});

test('filters by node name, resource and health, and sorts', async ({ page }) => {
  await page.goto(webUrl('/'));
  await expect(page.getByRole('article')).toHaveCount(CARDS);
  await page.getByRole('searchbox', { name: 'Node' }).fill('edge');
  await expect(page.getByRole('article')).toHaveCount(1);
  await expect(page.getByRole('article', { name: 'edge-node' })).toBeVisible();
  await page.getByRole('searchbox', { name: 'Node' }).fill('');
  await page.getByRole('combobox', { name: 'Resource' }).selectOption('plugboard.example/gpu');
  await expect(page.getByRole('article', { name: 'gpu-node-a' })).toBeVisible();
  await expect(page.getByRole('article', { name: 'gpu-node-b' })).toBeVisible();
  await expect(page.getByRole('article', { name: 'edge-node' })).toHaveCount(0);
  await expect(
    page.getByRole('article', { name: 'gpu-node-a' }).getByRole('region', { name: /nic-vf/ }),
  ).toHaveCount(0);
  await page.getByRole('combobox', { name: 'Resource' }).selectOption('');
  await page.getByRole('combobox', { name: 'Health' }).selectOption('unreachable');
  await expect(page.getByRole('article')).toHaveCount(1);
  await expect(page.getByRole('article', { name: 'ghost-node' })).toBeVisible();
  await page.getByRole('combobox', { name: 'Health' }).selectOption('all');
  await page.getByRole('combobox', { name: 'Sort by' }).selectOption('free');
  await expect(page.getByRole('article').first()).toHaveAccessibleName('gpu-node-a');
});

/** The hub's document (GET /api/cluster waits for every gateway's first answer). */
async function hubWithSummaries(request: APIRequestContext): Promise<ClusterDocument> {
  const r = (await (await request.get(webUrl('/api/cluster'))).json()) as { cluster: ClusterDocument };
  for (const spec of NODES) {
    expect(r.cluster.nodes[spec.name]?.status, spec.name).toBe('live');
    expect(r.cluster.nodes[spec.name]?.summary, spec.name).not.toBeNull();
  }
  return r.cluster;
}

test('the first HTML already lists every node with its numbers, readable without JavaScript', async ({
  browser,
  request,
}) => {
  await hubWithSummaries(request);
  // The document as the server sends it: node names and each resource's counts are in it.
  const html = await (await request.get(webUrl('/'))).text();
  for (const spec of NODES) {
    expect(html).toContain(`id="node-${spec.name}"`);
    const truth = await gatewaySummary(spec.name);
    for (const res of spec.resources) {
      const c = truth.resources[res.name]!;
      expect(html).toContain(`aria-label="${res.name} capacity ${c.capacity} allocatable ${c.allocatable}"`);
    }
  }
  expect(html).not.toContain('◌ Connecting');
  expect(html).not.toContain('Loading nodes…');

  // And as a reader without JavaScript sees it.
  const context = await browser.newContext({ javaScriptEnabled: false });
  try {
    const page = await context.newPage();
    await page.goto(webUrl('/'));
    await expect(page.getByText(`${CARDS} nodes · 0 with unhealthy devices · 1 not live`)).toBeVisible();
    for (const spec of NODES) {
      const card = page.getByRole('article', { name: spec.name });
      await expect(card.getByText('● Live')).toBeVisible();
      const truth = await gatewaySummary(spec.name);
      for (const res of spec.resources) {
        const c = truth.resources[res.name]!;
        const region = card.getByRole('region', {
          name: `${res.name} capacity ${c.capacity} allocatable ${c.allocatable}`,
        });
        await expect(region).toContainText(`capacity ${c.capacity}`);
        await expect(region).toContainText(`allocatable ${c.allocatable}`);
        await expect(region).toContainText(`allocated ${c.allocated}`);
        await expect(region).toContainText(`free ${c.free}`);
      }
    }
    await expect(page.getByRole('article', { name: 'ghost-node' })).toContainText('Gateway unreachable');
    await expect(page.getByRole('article').filter({ hasText: 'Connecting' })).toHaveCount(0);
    await saveScreenshot(page, 'overview-no-javascript');
  } finally {
    await context.close();
  }
});

test('with JavaScript the first paint already has the numbers: no "Loading nodes…", no node "Connecting"', async ({
  page,
  request,
}) => {
  await hubWithSummaries(request);
  // Watch every DOM change from the first parsed byte until the stream is live.
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { plugboardSeen: string[] }).plugboardSeen = seen;
    new MutationObserver(() => {
      for (const status of document.querySelectorAll('[role="status"]'))
        if (status.textContent?.includes('Loading nodes…')) seen.push('Loading nodes…');
      for (const badge of document.querySelectorAll('article .badge'))
        if (badge.textContent?.includes('Connecting'))
          seen.push(`${badge.closest('article')?.getAttribute('aria-labelledby') ?? '?'}: Connecting`);
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  await page.goto(webUrl('/'));
  await expect(page.getByRole('status').filter({ hasText: 'Live' }).first()).toBeVisible();
  for (const spec of NODES)
    await expect(page.getByRole('article', { name: spec.name }).getByText('● Live')).toBeVisible();
  const seen = await page.evaluate(() => (window as unknown as { plugboardSeen: string[] }).plugboardSeen);
  expect([...new Set(seen)]).toEqual([]);
});
