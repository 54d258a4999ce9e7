// An observer gateway (`resources: []`) against kubelet-sim, beside another device plugin and a DRA
// driver it does not run (both started by the fixture): the node page shows both; the other
// plugin's devices have no fault switch and say why (reachable by keyboard); a fault on the other
// driver's device is a DeviceTaintRule drill — dry run, its status "would be evicted", then NoExecute
// evicts the pod —; the overview counts what is observed; both pages are axe-clean.
import { expect, test, type Page } from '@playwright/test';
import { expectNoSeriousA11yViolations, gatewaySnapshot, saveScreenshot, webUrl } from './helpers';
import { OTHER_DRA_DRIVER, OTHER_GPU } from './fixture-spec';

const NODE = 'observer-node';
/** The rule's status is written by kubelet-sim's eviction controller; eviction goes through the kubelet. */
const RULE_PATH = { timeout: 30_000 };

async function openLive(page: Page): Promise<void> {
  await page.goto(webUrl(`/nodes/${NODE}`));
  await expect(page.getByRole('heading', { level: 1, name: `Node ${NODE}` })).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: 'Live' }).first()).toBeVisible();
}

test("the observed node shows another device plugin's devices with who serves them, and no fault switch on them", async ({
  page,
}) => {
  const truth = await gatewaySnapshot(NODE);
  const observed = truth.resources[OTHER_GPU]!;
  expect(observed.servedBy).toBe('device-plugin');
  expect(observed.kubelet.capacity).toBe(4);
  await openLive(page);

  // Every device of the other plugin on the NUMA map, labelled as observed; none has a switch.
  for (const key of observed.deviceKeys) {
    const d = truth.devices[key]!;
    const list = page.getByRole('list', { name: `${OTHER_GPU} devices on NUMA node ${d.numaNodes[0]}` });
    await expect(
      list.getByRole('button', {
        name: new RegExp(`^${d.id}\\s*,.*,\\s*another device plugin \\(observed\\)$`),
      }),
    ).toBeVisible();
  }
  await expect(page.locator(`li[data-device^="og-"]`).getByRole('switch')).toHaveCount(0);
  await expect(page.getByRole('button', { name: /^og-\d.*used by ml\/observed-user/ })).toBeVisible();

  // The reason is reachable by keyboard: focus the info button with Tab, its tooltip describes it.
  const info = page.getByRole('button', { name: 'no fault switch for og-0' });
  await info.focus();
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Tab');
  await expect(info).toBeFocused();
  await expect(info).toHaveAccessibleDescription(
    'Served by another device plugin: the device-plugin API lets only that plugin mark a device unhealthy.',
  );
  const tooltip = page.getByRole('tooltip').filter({ hasText: 'Served by another device plugin' }).first();
  await expect(tooltip).toBeVisible();
  // Whole, not clipped by its tile (tiles use content-visibility, which clips what overflows them).
  await tooltip.scrollIntoViewIfNeeded();
  await expect(info).toBeFocused();
  await expect(tooltip).toBeInViewport({ ratio: 1 });

  // The resource's card names who serves it; the other DRA driver's devices are on the map too.
  await expect(page.getByRole('region', { name: `${OTHER_GPU} capacity 4 allocatable 4` })).toContainText(
    'another device plugin (observed)',
  );
  await expect(page.getByRole('switch', { name: `Fault acc-0 (DRA, ${OTHER_DRA_DRIVER})` })).toBeVisible();
  await saveScreenshot(page, 'observer-node');
  await expectNoSeriousA11yViolations(page, 'observer node page');
});

test("a fault on the other driver's DRA device is a DeviceTaintRule: dry run says 'would be evicted', then NoExecute evicts", async ({
  page,
}) => {
  const truth = await gatewaySnapshot(NODE);
  expect(truth.dra!.drivers[OTHER_DRA_DRIVER]!.inProcess).toBe(false);
  const target = Object.values(truth.dra!.devices).find((d) =>
    d.allocations.some((a) => a.pods.includes('ml/acc-holder')),
  )!;
  expect(target).toBeTruthy();
  await openLive(page);
  const sw = page.getByRole('switch', {
    name: `Fault ${target.name} (DRA, ${OTHER_DRA_DRIVER})`,
    exact: true,
  });

  // 1. The dry run first: nothing stronger offered yet.
  await sw.click();
  const dry = page.getByRole('dialog', {
    name: `Dry-run a DeviceTaintRule on ${target.name} (DRA, ${OTHER_DRA_DRIVER})?`,
  });
  await expect(dry.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await expect(dry).toContainText('cluster-wide API object');
  await expect(dry.getByRole('radio')).toHaveCount(0);
  await dry.getByLabel('Reason').fill('e2e: would a drain evict anything?');
  await dry.getByRole('button', { name: 'Create the rule as a dry run (effect None)' }).click();
  await expect(dry).toHaveCount(0);
  await expect(sw).toHaveAttribute('aria-checked', 'true', RULE_PATH);

  // 2. The rule's observed status: what NoExecute would do, and the pod using the device.
  await sw.click();
  const rule = page.getByRole('dialog', {
    name: new RegExp(`^DeviceTaintRule plugboard-fault-[0-9a-f]{20} on ${target.name}`),
  });
  await expect(rule.getByTestId('taint-rule-status')).toContainText(
    '1 pod would be evicted in 1 namespace if the effect was NoExecute',
    RULE_PATH,
  );
  await expect(rule.getByRole('list', { name: 'Pods using this device' })).toContainText('ml/acc-holder');
  await expect(rule).toContainText(/a cluster-wide API object\) named plugboard-fault-[0-9a-f]{20}/);
  await saveScreenshot(page, 'observer-taint-rule-dry-run');
  await expectNoSeriousA11yViolations(page, 'DeviceTaintRule dry-run dialog');
  expect((await gatewaySnapshot(NODE)).pods['ml/acc-holder']?.phase).toBe('Running');

  // 3. Only now NoExecute: the same rule turns NoExecute and the pod is evicted.
  await rule.getByRole('radio', { name: 'Set the effect to NoExecute' }).check();
  await rule.getByRole('button', { name: 'Set NoExecute and evict 1 pod' }).click();
  await expect(rule).toHaveCount(0);
  await expect(
    page.locator('tr[data-pod="ml/acc-holder"]').filter({ hasNotText: /Failed|Evicted/ }),
  ).toHaveCount(0, RULE_PATH);
  await expect
    .poll(async () => {
      const s = await gatewaySnapshot(NODE);
      const f = Object.values(s.faults).find(
        (x) => x.taintRule?.device === target.name && x.taint === 'NoExecute',
      );
      return f?.taintRuleStatus?.effect;
    }, RULE_PATH)
    .toBe('NoExecute');

  // 4. Clearing deletes the rule.
  await sw.click();
  const after = page.getByRole('dialog', { name: /^DeviceTaintRule / });
  await after.getByRole('button', { name: 'Delete the DeviceTaintRule' }).click();
  await expect(sw).toHaveAttribute('aria-checked', 'false', RULE_PATH);
  expect(Object.values((await gatewaySnapshot(NODE)).faults)).toEqual([]);
});

test('the overview counts the resources served here and observed', async ({ page }) => {
  await page.goto(webUrl('/'));
  const card = page.getByRole('article', { name: NODE });
  await expect(card.getByText('● Live')).toBeVisible();
  await expect(card).toContainText('0 resources served here (0 devices), 1 observed (4 devices)');
  await expect(
    page.getByText(/^Across nodes: \d+ resources served here \(\d+ devices\), 1 observed \(4 devices\)$/),
  ).toBeVisible();
});
