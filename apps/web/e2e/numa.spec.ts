// NUMA placement in the browser against the real gateway on kubelet-sim (Topology Manager
// best-effort): "try to place" previews a pod that cannot be aligned, admits it, and the NUMA map
// then marks it as misaligned; selecting it highlights its devices, CPUs and memory and "why
// here?" shows the hints each manager gave and the merged result.
import { expect, test, type Page } from '@playwright/test';
import { GPU, NIC } from './fixture-spec';
import { expectNoSeriousA11yViolations, fixture, gatewaySnapshot, saveScreenshot, webUrl } from './helpers';

const POD = 'default/spread-1';
const SPREAD_BADGE = '! pod spread over NUMA nodes';

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** How far `inner` sticks out of `outer` on each side (px), or null when it lies inside. */
function overflow(inner: Box, outer: Box): string | null {
  const out = {
    left: outer.x - inner.x,
    right: inner.x + inner.width - (outer.x + outer.width),
    top: outer.y - inner.y,
    bottom: inner.y + inner.height - (outer.y + outer.height),
  };
  const sides = Object.entries(out).filter(([, px]) => px > 0.5);
  return sides.length ? sides.map(([side, px]) => `${side} ${px.toFixed(1)}px`).join(', ') : null;
}

/**
 * Every misaligned tile's spread badge lies inside the tile: its box, and its text (a badge that
 * does not wrap keeps its box at the tile's width and lets the text spill out of both).
 */
async function spreadBadgesOutsideTheirTiles(page: Page): Promise<string[]> {
  const problems: string[] = [];
  for (const tile of await page.locator('li.tile.misaligned').all()) {
    const id = await tile.getAttribute('data-device');
    const badge = tile.locator('.badge', { hasText: SPREAD_BADGE });
    // Tiles off screen skip layout (content-visibility: auto): measure them on screen.
    await badge.scrollIntoViewIfNeeded();
    const tileBox = await tile.boundingBox();
    const badgeBox = await badge.boundingBox();
    const textBox = await badge.evaluate((el): Box => {
      const range = document.createRange();
      range.selectNodeContents(el);
      const r = range.getBoundingClientRect();
      return { x: r.x, y: r.y, width: r.width, height: r.height };
    });
    if (!tileBox || !badgeBox) {
      problems.push(`${id}: tile or badge not rendered`);
      continue;
    }
    const box = overflow(badgeBox, tileBox);
    if (box) problems.push(`${id}: badge outside its tile (${box})`);
    const text = overflow(textBox, tileBox);
    if (text) problems.push(`${id}: badge text outside its tile (${text})`);
  }
  return problems;
}

async function deletePod(): Promise<void> {
  const sim = fixture().sims.find((s) => s.name === 'gpu-node-a')!;
  const res = await fetch(`${sim.url}/control/v1/pods/default/spread-1`, { method: 'DELETE' });
  expect([204, 404]).toContain(res.status);
}

test('a pod spread over both NUMA nodes is marked on the NUMA map, with its footprint and why', async ({
  page,
}) => {
  const before = await gatewaySnapshot('gpu-node-a');
  const freeGpus = Object.values(before.devices).filter((d) => d.resource === GPU && !d.allocation);
  // More GPUs than either NUMA node has free: only both nodes together can hold the request.
  const perNode = [0, 1].map((n) => freeGpus.filter((d) => d.numaNodes.includes(n)).length);
  const want = Math.max(...perNode) + 1;
  expect(want).toBeLessThanOrEqual(freeGpus.length);
  expect(before.topology?.kubelet?.topologyManagerPolicy).toBe('best-effort');

  await page.goto(webUrl('/nodes/gpu-node-a'));
  await expect(page.getByRole('status').filter({ hasText: 'Live' }).first()).toBeVisible();
  // CPUs per NUMA node from the sysfs fixture, beside the devices.
  await expect(page.getByRole('list', { name: 'CPUs of NUMA node 1' }).locator('[data-cpu]')).toHaveCount(32);

  try {
    const form = page.getByRole('region', { name: 'Try to place a pod' });
    await form.getByLabel('Name', { exact: true }).fill('spread-1');
    await form.getByLabel(GPU).fill(String(want));
    await form.getByLabel(NIC).fill('0');
    await form.getByLabel('Whole CPUs').fill('4');
    await form.getByLabel('Memory (GiB)').fill('1');
    await form.getByRole('button', { name: 'Preview placement' }).click();
    const result = form.getByTestId('placement-result');
    // The gateway predicts (the same rules kubelet-sim admits with); the label says so.
    await expect(result.getByTestId('prediction-label')).toContainText('A prediction');
    await expect(result).toContainText('admitted by best-effort');
    await expect(result).toContainText('not the preferred (aligned) placement');
    await expect(result).toContainText('NUMA 0+1 (not preferred)');
    // A preview changes nothing.
    expect((await gatewaySnapshot('gpu-node-a')).pods[POD]).toBeUndefined();
    await form.getByRole('button', { name: 'Admit pod' }).click();
    await expect(result).toContainText(`Admitted ${POD}`);

    // The stream brings the pod; the NUMA map marks it as misaligned.
    const misaligned = page.getByRole('list', { name: 'Misaligned pods' });
    await expect(misaligned).toContainText(POD);
    await expect(misaligned).toContainText('spread over 2 NUMA nodes');
    await expect(page.locator('li.tile.misaligned')).toHaveCount(want);
    await expect(page.locator('li.tile.misaligned').first()).toContainText(SPREAD_BADGE);
    // The badge stays inside its tile at the widths the tile grid takes (150px tiles and up),
    // from a wide screen to a phone.
    for (const width of [1440, 1280, 1024, 800, 390]) {
      await page.setViewportSize({ width, height: 900 });
      expect(await spreadBadgesOutsideTheirTiles(page), `viewport ${width}px`).toEqual([]);
      if (width === 390) await saveScreenshot(page, 'numa-misaligned-tiles-narrow');
    }
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.getByRole('heading', { level: 1 }).scrollIntoViewIfNeeded();
    const truth = await gatewaySnapshot('gpu-node-a');
    const pod = truth.pods[POD]!;
    expect(pod.numaAlignment.verdict).toBe('spread');
    const cpus = pod.containers.flatMap((c) => c.cpuIds);
    expect(cpus).toHaveLength(4);

    // Hovering its row previews the footprint; moving away clears it.
    await page.locator(`tr[data-pod="${POD}"]`).first().hover();
    await expect(page.locator('li.tile.highlighted')).toHaveCount(want);
    await expect(page.locator('.cpu.highlighted')).toHaveCount(4);
    await page.getByRole('heading', { level: 1 }).hover();
    await expect(page.locator('li.tile.highlighted')).toHaveCount(0);

    // Selecting it highlights devices, CPUs and memory, and explains the placement.
    await page.getByRole('button', { name: `Show ${POD} on the map` }).click();
    await expect(page.locator('li.tile.highlighted')).toHaveCount(want);
    await expect(page.locator('.cpu.highlighted')).toHaveCount(4);
    for (const id of cpus) await expect(page.locator(`.cpu.highlighted[data-cpu="${id}"]`)).toBeVisible();
    await expect(page.locator('.mem-bar .pinned.highlighted').first()).toBeVisible();
    const why = page.getByRole('region', { name: `Why here? ${POD}` });
    await expect(why).toContainText('Topology Manager best-effort (scope container)');
    await expect(why).toContainText('Device manager');
    await expect(why).toContainText('CPU Manager');
    await expect(why).toContainText('Memory Manager');
    await expect(why).toContainText('Merged (best-effort)');
    await saveScreenshot(page, 'numa-misaligned-pod');
    await expectNoSeriousA11yViolations(page, 'NUMA map with a misaligned pod');

    // An aligned pod's panel carries the plugin's reason for the devices it preferred.
    await page.getByRole('button', { name: 'Show ml/train on the map' }).click();
    const train = page.getByRole('region', { name: 'Why here? ml/train' });
    await expect(train).toContainText('aligned on NUMA node 0');
    const reason = Object.values(truth.pods['ml/train']!.topology?.preferredAllocations ?? [])[0]?.reason;
    expect(reason, 'the gateway matched a GetPreferredAllocation answer to ml/train').toBeTruthy();
    await expect(train).toContainText(reason!);

    // What would single-numa-node say about a pod like spread-1? (preview only)
    await form.getByLabel('Name', { exact: true }).fill('what-if');
    await form.getByLabel(GPU).fill('1');
    await form.getByLabel('Preview under policy').selectOption('single-numa-node');
    await form.getByRole('button', { name: 'Preview placement' }).click();
    await expect(result).toContainText('single-numa-node');
    await expect(form.getByRole('button', { name: 'Admit pod' })).toBeDisabled();
    await form.getByLabel('Preview under policy').selectOption('');

    // More GPUs than are left: a preview says why the pod would be refused.
    await form.getByLabel('Name', { exact: true }).fill('spread-2');
    await form.getByLabel(GPU).fill(String(freeGpus.length - want + 1));
    await form.getByRole('button', { name: 'Preview placement' }).click();
    await expect(result).toContainText('rejected: UnexpectedAdmissionError');
  } finally {
    await deletePod();
  }
  await expect(page.getByRole('list', { name: 'Misaligned pods' })).toHaveCount(0);
});
