// The migration view against the fixture's real gateways: plugboard.example/gpu served by a device
// plugin on gpu-node-a and gpu-node-b and through DRA on migrate-node (a DeviceClass with
// extendedResourceName; the scheduler generated ml/train-dra's claim). Page and GET /api/migration
// are checked against each gateway's own summary; the page is scanned by axe and is the screenshot
// docs/images/migration-view.png.
import { expect, test } from '@playwright/test';
import type { ExtendedResourceView } from '@plugboard/api';
import type { MigrationView } from '../lib/migration-view';
import { expectNoSeriousA11yViolations, gatewaySummary, saveScreenshot, webUrl } from './helpers';
import { DRA_DRIVER, GPU } from './fixture-spec';

const PLUGIN_NODES = ['gpu-node-a', 'gpu-node-b'];
const DRA_NODE = 'migrate-node';

/** Each node's own view of the GPU, read from its gateway (the oracle). */
async function truth(): Promise<Record<string, ExtendedResourceView>> {
  const out: Record<string, ExtendedResourceView> = {};
  for (const node of [...PLUGIN_NODES, DRA_NODE]) {
    const v = (await gatewaySummary(node)).extendedResources?.[GPU];
    if (!v) throw new Error(`${node}'s gateway has no extendedResources[${GPU}]`);
    out[node] = v;
  }
  return out;
}

test('per extended resource: nodes on a device plugin and on DRA, pods with their generated claims, and what is left to move', async ({
  page,
  request,
}) => {
  const t = await truth();
  for (const node of PLUGIN_NODES) expect(t[node]!.servedBy, node).toBe('device-plugin');
  const dra = t[DRA_NODE]!;
  expect(dra.servedBy).toBe('dra');
  expect(dra.deviceClass).toBe(DRA_DRIVER);
  const moved = dra.pods.find((p) => p.pod === 'ml/train-dra')!;
  expect(moved.via).toBe('dra');
  expect(moved.claim).toMatch(/^ml\/train-dra-extended-resources-/);
  const left = PLUGIN_NODES.flatMap((n) =>
    t[n]!.pods.filter((p) => p.via === 'device-plugin').map((p) => p.pod),
  );
  expect(left.length).toBeGreaterThan(0);

  // The API: the same join, and the ghost gateway said to be not observed.
  const res = await request.get(webUrl(`/api/migration?resource=${encodeURIComponent(GPU)}`));
  expect(res.status()).toBe(200);
  const { migration } = (await res.json()) as { migration: MigrationView };
  const gpu = migration.resources[0]!;
  expect(gpu.name).toBe(GPU);
  expect(gpu.servedBy).toEqual({ 'device-plugin': PLUGIN_NODES, dra: [DRA_NODE], none: [] });
  expect(gpu.leftToMovePods).toEqual([...new Set(left)].sort());
  expect(gpu.pods.find((p) => p.pod === 'ml/train-dra')?.claim).toBe(moved.claim);
  expect(migration.notObserved.map((n) => [n.node, n.why])).toEqual([['ghost-node', 'no-summary']]);
  const unknown = await request.get(webUrl('/api/migration?resource=example.com%2Ffpga'));
  expect(unknown.status()).toBe(404);
  expect(unknown.headers()['content-type']).toBe('application/problem+json');

  // The page, reached from the header's navigation.
  await page.goto(webUrl('/'));
  await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: 'Migration to DRA' })
    .click();
  await expect(page.getByRole('heading', { level: 1, name: 'Migration to DRA' })).toBeVisible();
  await expect(page.getByRole('status').filter({ hasText: 'Live' }).first()).toBeVisible();
  const section = page.getByRole('region', { name: GPU });
  await expect(section).toContainText(
    `Left to move: ${new Set(left).size} pods on ${PLUGIN_NODES.length} nodes`,
  );
  await expect(section.locator('dl')).toHaveText(
    `Device plugin on${PLUGIN_NODES.join(', ')}DRA on${DRA_NODE}Neither onno node`,
  );
  const nodes = section.getByRole('table', { name: `Nodes serving ${GPU}` });
  for (const node of PLUGIN_NODES) {
    const row = nodes.getByRole('row', { name: new RegExp(`^${node}`) });
    const s = t[node]!.nodeStatus!;
    await expect(row).toContainText('■ device plugin');
    await expect(row).toContainText(`capacity ${s.capacity}, allocatable ${s.allocatable}`);
    // A gateway that does not read DeviceClasses: said, not guessed.
    if (t[node]!.deviceClasses === null) await expect(row).toContainText('? unknown: not readable');
  }
  const draRow = nodes.getByRole('row', { name: new RegExp(`^${DRA_NODE}`) });
  await expect(draRow).toContainText('◆ DRA');
  await expect(draRow).toContainText(`not listed${DRA_DRIVER}${dra.drivers.join(', ')}1`);

  const pods = section.getByRole('table', { name: `Pods asking for ${GPU}` });
  const movedRow = pods.getByRole('row', { name: /^ml\/train-dra/ });
  await expect(movedRow).toContainText('◆ DRA');
  await expect(movedRow).toContainText(`${moved.claim!} (${moved.request!})`);
  await expect(movedRow).toContainText(moved.devices.join(', '));
  await expect(pods.getByText('■ device plugin: left to move')).toHaveCount(left.length);
  for (const pod of left)
    await expect(pods.getByRole('row', { name: new RegExp(`^${pod}`) }).first()).toBeVisible();

  await expect(page.getByRole('list', { name: 'Nodes not observed' })).toContainText(
    /ghost-node: no summary from its gateway \(unreachable: .*ECONNREFUSED/,
  );
  await saveScreenshot(page, 'migration-view');
  await expectNoSeriousA11yViolations(page, 'migration view');
});
