// Keyboard operation, visible focus, dark mode and a laptop-sized viewport.
import { expect, test } from '@playwright/test';
import { expectNoSeriousA11yViolations, saveScreenshot, webUrl } from './helpers';

test('fault controls work from the keyboard with visible focus; Escape cancels', async ({ page }) => {
  await page.goto(webUrl('/nodes/gpu-node-a'));
  await expect(page.getByRole('status').filter({ hasText: 'Live' }).first()).toBeVisible();
  const tile = page.getByRole('button', { name: /^gpu-3\s*,\s*Healthy/ });
  await tile.focus();
  await page.keyboard.press('Tab');
  const sw = page.getByRole('switch', { name: 'Fault gpu-3', exact: true });
  await expect(sw).toBeFocused();
  const outline = await sw.evaluate('getComputedStyle(document.activeElement).outlineStyle');
  expect(outline).not.toBe('none');
  await page.keyboard.press('Space');
  const dialog = page.getByRole('dialog', { name: 'Inject a simulated fault on gpu-3?' });
  await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
  // Enter on the focused Cancel must not inject anything.
  await page.keyboard.press('Enter');
  await expect(dialog).toHaveCount(0);
  await expect(sw).toHaveAttribute('aria-checked', 'false');
  await sw.focus();
  await page.keyboard.press('Enter');
  await expect(dialog).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(dialog).toHaveCount(0);
  await expect(sw).toHaveAttribute('aria-checked', 'false');
  // The tile opens its drawer from the keyboard too.
  await tile.focus();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('dialog', { name: 'Device gpu-3' })).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByRole('dialog', { name: 'Device gpu-3' })).toHaveCount(0);
});

test('dark mode follows the system and stays accessible', async ({ page }) => {
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.goto(webUrl('/nodes/gpu-node-a'));
  await expect(page.getByRole('status').filter({ hasText: 'Live' }).first()).toBeVisible();
  const bg = await page.evaluate('getComputedStyle(document.body).backgroundColor');
  expect(bg).toBe('rgb(17, 19, 24)');
  await saveScreenshot(page, 'node-dark');
  await expectNoSeriousA11yViolations(page, 'node page (dark)');
  await page.goto(webUrl('/'));
  await expect(page.getByRole('article', { name: 'gpu-node-a' })).toBeVisible();
  await expectNoSeriousA11yViolations(page, 'overview (dark)');
  await page.goto(webUrl('/migration'));
  await expect(page.getByRole('region', { name: 'plugboard.example/gpu' })).toBeVisible();
  await expectNoSeriousA11yViolations(page, 'migration view (dark)');
});

test('a laptop screen shows the NUMA map without horizontal scrolling', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.goto(webUrl('/nodes/gpu-node-a'));
  await expect(page.getByRole('region', { name: /^NUMA node 1 / })).toBeVisible();
  const overflow = await page.evaluate(
    'document.documentElement.scrollWidth - document.documentElement.clientWidth',
  );
  expect(overflow).toBe(0);
  await saveScreenshot(page, 'node-laptop');
});
