// Node page against a real gateway: every device grouped by NUMA node with the pod using it,
// pod assignments as the kubelet made them, registration, error states and accessibility.
import { expect, test } from '@playwright/test';
import { expectNoSeriousA11yViolations, gatewaySnapshot, saveScreenshot, webUrl } from './helpers';

test('the node page shows every device grouped by NUMA node with correct pod assignments', async ({
  page,
}) => {
  const truth = await gatewaySnapshot('gpu-node-a');
  await page.goto(webUrl('/nodes/gpu-node-a'));
  await expect(page.getByRole('heading', { level: 1, name: 'Node gpu-node-a' })).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: 'Live' }).first()).toBeVisible();

  const devices = Object.values(truth.devices);
  expect(devices.length).toBe(16);
  for (const d of devices) {
    const numa = page.getByRole('region', { name: new RegExp(`^NUMA node ${d.numaNodes[0]} `) });
    const user = d.allocation ? `used by ${d.allocation.namespace}/${d.allocation.pod}` : 'free';
    await expect(
      numa.getByRole('button', {
        name: new RegExp(`^${d.id}\\s*,\\s*Healthy\\s*,\\s*${user}\\s*,\\s*device plugin$`),
      }),
    ).toBeVisible();
    await expect(page.getByRole('switch', { name: `Fault ${d.id}`, exact: true })).toHaveAttribute(
      'aria-checked',
      'false',
    );
  }
  // Nothing outside its NUMA node: each NUMA region holds exactly its devices.
  for (const numa of ['0', '1']) {
    const expected = devices.filter((d) => String(d.numaNodes[0]) === numa).length;
    await expect(
      page.getByRole('region', { name: new RegExp(`^NUMA node ${numa} `) }).getByRole('switch'),
    ).toHaveCount(expected);
  }

  // Pod table: every pod with the devices the kubelet gave it.
  const table = page.getByRole('table', { name: /Pods holding devices/ });
  for (const pod of Object.values(truth.pods)) {
    const rows = table.locator(`tr[data-pod="${pod.key}"]`);
    await expect(rows.first()).toContainText(pod.name);
    // Status as the kubelet reports it now (an earlier spec's fault may have crash-looped a pod).
    await expect
      .poll(async () => {
        const now = (await gatewaySnapshot('gpu-node-a')).pods[pod.key]!;
        return (await rows.first().locator('td').first().innerText()).includes(now.reason ?? now.phase);
      })
      .toBe(true);
    for (const c of pod.containers) {
      for (const keys of Object.values(c.devices)) {
        for (const k of keys) await expect(rows).toContainText([k.slice(k.lastIndexOf('/') + 1)].join(''));
      }
    }
    await expect(rows.first()).toContainText(
      pod.numaAlignment.verdict === 'aligned' ? 'NUMA-aligned' : 'spread',
    );
  }
  // A pod's footprint on the map.
  await page.getByRole('button', { name: 'Show ml/train on the map' }).click();
  const held = Object.values(truth.devices)
    .filter((d) => d.allocation?.pod === 'train')
    .map((d) => d.id)
    .sort();
  await expect(page.locator('li.tile.highlighted')).toHaveCount(held.length);
  for (const id of held) {
    await expect(
      page.getByRole('button', { name: new RegExp(`^${id}\\s*,.*held by the selected pod$`) }),
    ).toBeVisible();
  }
  await page.getByRole('button', { name: 'Clear highlight' }).click();
  await expect(page.locator('li.tile.highlighted')).toHaveCount(0);
  await expect(page.getByText('✓ registered', { exact: true })).toHaveCount(
    Object.keys(truth.resources).length,
  );
  await expect(page.getByText(/kubelet restarts seen 0/).first()).toBeVisible();
  await saveScreenshot(page, 'node-gpu-node-a');
  await expectNoSeriousA11yViolations(page, 'node page');
});

test('a device drawer shows the device with its history', async ({ page }) => {
  await page.goto(webUrl('/nodes/gpu-node-a'));
  await page.getByRole('button', { name: /^gpu-0\s*,\s*Healthy/ }).click();
  const drawer = page.getByRole('dialog', { name: 'Device gpu-0' });
  await expect(drawer).toBeVisible();
  await expect(drawer).toContainText('Healthy');
  await expect(page).toHaveURL(
    /device=plugboard\.example%2Fgpu%2Fgpu-0|device=plugboard.example\/gpu\/gpu-0/,
  );
  await saveScreenshot(page, 'device-drawer');
  await expectNoSeriousA11yViolations(page, 'device drawer');
  await drawer.getByRole('button', { name: 'Close' }).click();
  await expect(drawer).toHaveCount(0);
});

test('unknown and unreachable nodes say why', async ({ page }) => {
  await page.goto(webUrl('/nodes/no-such-node'));
  await expect(page.getByRole('alert').filter({ hasText: 'Unknown node no-such-node' })).toContainText(
    'no gateway known',
  );
  await page.goto(webUrl('/nodes/ghost-node'));
  const alert = page.getByRole('alert').filter({ hasText: 'Cannot reach the gateway of ghost-node' });
  await expect(alert).toContainText(/ECONNREFUSED/);
  await saveScreenshot(page, 'node-unreachable');
  await expectNoSeriousA11yViolations(page, 'unreachable node page');
});

test('a shared device is one tile with its replica use; a gateway with faults disabled shows no fault controls and says why', async ({
  page,
}) => {
  const truth = await gatewaySnapshot('gpu-node-b');
  await page.goto(webUrl('/nodes/gpu-node-b'));
  await expect(page.getByRole('status').filter({ hasText: 'Live' }).first()).toBeVisible();
  const physical = new Map<string, string[]>();
  for (const d of Object.values(truth.devices)) {
    const id = d.replicaOf ?? d.id;
    const users = physical.get(id) ?? [];
    if (d.allocation) users.push(`${d.allocation.namespace}/${d.allocation.pod}`);
    physical.set(id, users);
  }
  expect(physical.size).toBe(2);
  let inUse = 0;
  for (const [id, users] of physical) {
    const tile = page.getByRole('button', { name: new RegExp(`^${id}\\s*,\\s*Healthy`) });
    await expect(tile).toContainText(`${users.length}/4 replicas in use`);
    for (const u of users) await expect(tile).toContainText(u);
    inUse += users.length;
  }
  expect(inUse).toBe(3);
  await expect(page.getByRole('switch')).toHaveCount(0);
  await expect(page.getByText(/Fault injection is disabled on this gateway/)).toBeVisible();
  await expect(page.getByText('Shared: 4 replicas per physical device.')).toBeVisible();
  await saveScreenshot(page, 'node-shared-faults-disabled');
});
