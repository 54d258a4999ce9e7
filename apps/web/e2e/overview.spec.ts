// Cluster overview against real gateways: every node with the right per-resource counts, live,
// an unreachable gateway that says why, filters, and an accessibility scan.
import { expect, test } from '@playwright/test';
import { expectNoSeriousA11yViolations, gatewaySummary, saveScreenshot, webUrl } from './helpers';
import { advertised, GPU, NODES } from './fixture-spec';

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
  await expect(page.getByText(/4 nodes · 0 with unhealthy devices · 1 not live/)).toBeVisible();
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
  await expect(page.getByRole('article')).toHaveCount(4);
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
