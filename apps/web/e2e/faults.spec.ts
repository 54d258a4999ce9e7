// Fault injection from the UI through the real kubelet path: the switch opens a confirmation with
// Cancel focused and the affected pods; allocatable drops by one only when the stream says so;
// clearing restores it.
import { expect, test } from '@playwright/test';
import { E2E_TOKEN, GPU, SERIAL } from './fixture-spec';
import { expectNoSeriousA11yViolations, gatewaySnapshot, saveScreenshot, webUrl } from './helpers';

test('injecting a fault drops allocatable by one and flags the affected pod; clearing restores both', async ({
  page,
}) => {
  const truth = await gatewaySnapshot('gpu-node-a');
  const target = Object.values(truth.devices).find(
    (d) => d.resource === GPU && d.allocation?.pod === 'train',
  )!;
  expect(target).toBeTruthy();
  const capacity = truth.resources[GPU]!.kubelet.capacity;
  const gpuSummary = () =>
    page
      .getByRole('region', {
        name: new RegExp(`^${GPU.replace('.', '\\.')} capacity ${capacity} allocatable \\d+$`),
      })
      .first();

  await page.goto(webUrl('/nodes/gpu-node-a'));
  await expect(page.getByRole('status').filter({ hasText: 'Live' }).first()).toBeVisible();
  await expect(gpuSummary()).toContainText(`allocatable ${capacity}`);
  const trainRow = page.locator('tr[data-pod="ml/train"]').first();
  await expect(trainRow).not.toContainText('affected');

  // Inject: confirm dialog names the device, previews the pod, Cancel has focus.
  const sw = page.getByRole('switch', { name: `Fault ${target.id}`, exact: true });
  await sw.click();
  const dialog = page.getByRole('dialog', { name: `Inject a simulated fault on ${target.id}?` });
  await expect(dialog).toBeVisible();
  await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await expect(dialog.getByRole('list', { name: 'Affected pods' })).toContainText('ml/train');
  await expect(dialog).toContainText('simulated');
  await expectNoSeriousA11yViolations(page, 'fault dialog');
  // Cancel really cancels.
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toHaveCount(0);
  expect(Object.keys((await gatewaySnapshot('gpu-node-a')).faults)).toHaveLength(0);

  await sw.click();
  await dialog.getByLabel('Reason').fill('e2e: simulated ECC error');
  await dialog.getByRole('button', { name: 'Inject simulated fault' }).click();
  await expect(dialog).toHaveCount(0);
  await expect(sw).toHaveAttribute('aria-checked', 'true');
  await expect(
    page.getByRole('button', { name: new RegExp(`^${target.id}\\s*,\\s*Unhealthy\\s*,\\s*simulated fault`) }),
  ).toBeVisible();
  await expect(gpuSummary()).toContainText(`allocatable ${capacity - 1}`);
  await expect(trainRow).toContainText('affected: uses an unhealthy device');
  await expect(page.getByText(/Why allocatable is 7 of 8/)).toBeVisible();
  const active = page.getByRole('region', { name: /Active simulated faults/ });
  await expect(active).toContainText('Active simulated faults (1)');
  await expect(active).toContainText(`${target.id} (${GPU}) — e2e: simulated ECC error`);
  // The kubelet agrees (the gateway's kubelet view, not the UI's).
  await expect
    .poll(async () => (await gatewaySnapshot('gpu-node-a')).resources[GPU]!.kubelet.allocatable)
    .toBe(capacity - 1);
  await saveScreenshot(page, 'node-with-fault');

  // The overview sees it too.
  const overview = await page.context().newPage();
  await overview.goto(webUrl('/'));
  const card = overview.getByRole('article', { name: 'gpu-node-a' });
  await expect(
    card.getByRole('region', { name: `${GPU} capacity ${capacity} allocatable ${capacity - 1}` }),
  ).toBeVisible();
  await expect(card).toContainText('1 unhealthy device');
  await expect(card).toContainText('1 simulated fault');
  await saveScreenshot(overview, 'overview-with-fault');
  await overview.close();

  // Device history shows the injected fault.
  await page.getByRole('button', { name: new RegExp(`^${target.id}\\s*,\\s*Unhealthy`) }).click();
  const drawer = page.getByRole('dialog', { name: `Device ${target.id}` });
  await expect(drawer.getByRole('list', { name: new RegExp(`History of ${target.id}`) })).toContainText(
    'fault-injected',
  );
  await expect(drawer).toContainText('e2e: simulated ECC error');
  await drawer.getByRole('button', { name: 'Close' }).click();

  // Clear.
  await sw.click();
  const clearDialog = page.getByRole('dialog', { name: `Clear the simulated fault on ${target.id}?` });
  await expect(clearDialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await clearDialog.getByRole('button', { name: 'Clear simulated fault' }).click();
  await expect(sw).toHaveAttribute('aria-checked', 'false');
  await expect(page.getByRole('button', { name: new RegExp(`^${target.id}\\s*,\\s*Healthy`) })).toBeVisible();
  await expect(gpuSummary()).toContainText(`allocatable ${capacity}`);
  await expect(trainRow).not.toContainText('affected');
  // The gateway's kubelet view settles on the same number (a PodResources poll taken before the
  // heal may land just after it, so poll rather than read once), and the page follows it.
  await expect
    .poll(async () => (await gatewaySnapshot('gpu-node-a')).resources[GPU]!.kubelet.allocatable)
    .toBe(capacity);
  await expect(gpuSummary()).toContainText(`allocatable ${capacity}`);
  await expect(page.getByRole('region', { name: /Active simulated faults/ })).toContainText(
    'Active simulated faults (0)',
  );
});

test('a NUMA-node scenario is previewed, confirmed and stopped', async ({ page }) => {
  await page.goto(webUrl('/nodes/gpu-node-a'));
  await expect(page.getByRole('status').filter({ hasText: 'Live' }).first()).toBeVisible();
  const panel = page.getByRole('region', { name: 'Simulated fault scenarios' });
  await panel.getByRole('combobox', { name: 'Scenario' }).selectOption('fail-numa-node');
  await panel.getByRole('combobox', { name: 'NUMA node' }).selectOption('1');
  await panel.getByRole('combobox', { name: 'Resource' }).selectOption(GPU);
  await panel.getByRole('button', { name: 'Start scenario…' }).click();
  const dialog = page.getByRole('dialog', { name: /Start the "fail-numa-node" scenario/ });
  await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await expect(dialog).toContainText('4 device(s) targeted');
  await dialog.getByRole('button', { name: 'Start simulated scenario' }).click();
  await expect(dialog).toHaveCount(0);
  const numa1 = page.getByRole('region', { name: /^NUMA node 1 / });
  await expect(numa1.getByRole('button', { name: /^gpu-\d\s*,\s*Unhealthy/ })).toHaveCount(4);
  await expect(
    page.getByRole('region', { name: /^NUMA node 0 / }).getByRole('button', { name: /Unhealthy/ }),
  ).toHaveCount(0);
  await panel.getByRole('button', { name: 'Stop all scenarios' }).click();
  await expect(numa1.getByRole('button', { name: /^gpu-\d\s*,\s*Unhealthy/ })).toHaveCount(0);
  await expect(numa1.getByRole('button', { name: /^gpu-\d\s*,\s*Healthy/ })).toHaveCount(4);
});

test('a gateway that requires a token: controls wait for one, a wrong token is refused with the reason, the right one works', async ({
  page,
}) => {
  const truth = await gatewaySnapshot('edge-node');
  const free = Object.values(truth.devices).find((d) => !d.allocation)!;
  const capacity = truth.resources[SERIAL]!.kubelet.capacity;
  const summary = () =>
    page.getByRole('region', {
      name: new RegExp(`^${SERIAL.replace('.', '\\.')} capacity ${capacity} allocatable \\d+$`),
    });
  await page.goto(webUrl('/nodes/edge-node'));
  await expect(page.getByRole('status').filter({ hasText: 'Live' }).first()).toBeVisible();
  const sw = page.getByRole('switch', { name: `Fault ${free.id}`, exact: true });
  await expect(sw).toBeDisabled();
  await expect(sw).toHaveAccessibleDescription(/requires a bearer token/);

  await page.getByLabel('Bearer token').fill('not-the-token');
  await page.getByRole('button', { name: 'Use token' }).click();
  await expect(sw).toBeEnabled();
  await sw.click();
  const dialog = page.getByRole('dialog', { name: `Inject a simulated fault on ${free.id}?` });
  await dialog.getByRole('button', { name: 'Inject simulated fault' }).click();
  await expect(dialog.getByRole('alert')).toContainText('enter a valid bearer token');
  await expect(sw).toHaveAttribute('aria-checked', 'false');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  expect(Object.keys((await gatewaySnapshot('edge-node')).faults)).toHaveLength(0);

  await page.getByRole('button', { name: 'Forget token' }).click();
  await page.getByLabel('Bearer token').fill(E2E_TOKEN);
  await page.getByRole('button', { name: 'Use token' }).click();
  await sw.click();
  await dialog.getByRole('button', { name: 'Inject simulated fault' }).click();
  await expect(sw).toHaveAttribute('aria-checked', 'true');
  await expect(summary()).toContainText(`allocatable ${capacity - 1}`);
  await sw.click();
  await page
    .getByRole('dialog', { name: `Clear the simulated fault on ${free.id}?` })
    .getByRole('button', { name: 'Clear simulated fault' })
    .click();
  await expect(sw).toHaveAttribute('aria-checked', 'false');
  await expect(summary()).toContainText(`allocatable ${capacity}`);
});
