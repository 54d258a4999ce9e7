// The dashboard on the real cluster (issue #28): the demo's four nodes as real kubelets v1.37.2 on a
// control plane of this suite's own (startRealDemoCluster), each node's gateway beside its kubelet,
// the dashboard's production build in front of them, driven in Chromium (playwright-core) and
// checked against the real kubectl:
//   a device-plugin fault flipped in the UI: the real kubelet lowers the Node's allocatable by one and
//     the page shows it; clearing heals both;
//   a fault on a claimed DRA device: the real kubelet's allocatedResourcesStatus says Unhealthy and
//     the claims table follows; clearing heals both;
//   the eviction preview: a DeviceTaintRule dry run on the device of a DRA driver the gateway does
//     not run (upstream's DRA test driver, started here on dra-node), with the real
//     kube-controller-manager's "1 pod would be evicted" status in the dialog and in kubectl;
//   NoExecute: the real device taint eviction controller evicts the pod; the page drops it and its
//     claim, kubectl sees both gone.
// The overview and every node page visited are axe-clean; screenshots are kept under
// apps/demo/test-results/screenshots/.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { deviceClassFor } from '@plugboard/plugin';
import { expect } from '@playwright/test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { pino } from 'pino';
import { runKubectl } from '@plugboard/local-cluster';
import { pinnedPod, thirdParty, type DraTestDriver, type TestNode } from '@plugboard/testbed';
import { seriousA11yViolations } from '@plugboard/web/e2e/axe';
import { CHROMIUM_ARGS, CHROMIUM_EXECUTABLE } from '@plugboard/web/e2e/chromium';
import { startWebServer, type WebServer } from '@plugboard/web/server';
import { loadWebConfig } from '@plugboard/web/server/config';
import { waitForSnapshot, type RealDemoNode } from './cluster.js';
import { loadDemo } from './demo-config.js';
import { startRealDemoCluster, type RealDemoCluster } from './real-cluster.js';
import { ensureWebBuild } from './web-build.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SHOTS = join(repoRoot, 'apps/demo/test-results/screenshots');
const NODES = ['dra-node', 'edge-node', 'gpu-node-a', 'gpu-node-b'];
const GPU = 'plugboard.example/gpu';
const DRA_DRIVER = 'gpu.plugboard.example';
/** Where the other driver's pod lives (the demo's own are in ml, render and iot). */
const NS = 'drill';
/** The real control plane's round trips: kubelet status sync, the stream, the controllers. */
const REAL_PATH = { timeout: 60_000 };

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The test bed's node shape for a demo node's real kubelet, so that `thirdParty` can start a driver
 * against it: its directories, its own kubeconfig and the argv prefix into its mount namespace.
 */
function thirdPartyNode(node: RealDemoNode): TestNode & { exec: string[] } {
  const k = node.kubelet;
  return {
    kind: 'real',
    name: node.name,
    dir: k.dir,
    devicePluginDir: k.devicePluginDir,
    pluginsDir: k.pluginsDir,
    pluginsRegistryDir: k.pluginsRegistryDir,
    cdiDir: join(k.dir, 'cdi'),
    podResourcesSocket: k.podResourcesSocket,
    kubeconfig: k.kubeconfig,
    sysfsRoot: '/sys',
    exec: k.exec,
    // The demo cluster's stop() removes the node.
    remove: () => Promise.resolve(),
  };
}

interface PodJson {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  status: {
    phase: string;
    resourceClaimStatuses?: { name: string; resourceClaimName: string }[];
    containerStatuses?: {
      allocatedResourcesStatus?: { name: string; resources?: { resourceID: string; health: string }[] }[];
    }[];
  };
}
interface RuleJson {
  metadata: { name: string };
  spec: { deviceSelector: Record<string, string>; taint: { effect: string } };
  status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
}

describe('the dashboard on the real cluster', { timeout: 600_000 }, () => {
  let stateDir = '';
  let cluster: RealDemoCluster | null = null;
  let driver: DraTestDriver | null = null;
  let web: WebServer | null = null;
  let browser: Browser | null = null;
  let page: Page;
  /** The other driver's device the pod drill/holder holds, and that pod's claim. */
  let otherDevice = '';
  let holderClaim = '';

  const kubectl = async (args: string[], input?: string): Promise<string> =>
    (await runKubectl(cluster!.kubectl, cluster!.kubeconfig, args, input === undefined ? {} : { input }))
      .stdout;
  const kubectlJson = async <T>(args: string[]): Promise<T> =>
    JSON.parse(await kubectl([...args, '-o', 'json'])) as T;
  const apply = (object: unknown): Promise<string> => kubectl(['apply', '-f', '-'], JSON.stringify(object));

  async function openNode(name: string): Promise<void> {
    await page.goto(`${web!.url}/nodes/${name}`);
    await expect(page.getByRole('heading', { level: 1, name: `Node ${name}` })).toBeVisible();
    await expect(page.getByRole('status').filter({ hasText: 'Live' }).first()).toBeVisible();
  }
  async function axeClean(what: string): Promise<void> {
    assert.deepEqual(await seriousA11yViolations(page), [], `axe on ${what}`);
  }
  const screenshot = (name: string): Promise<Buffer> =>
    page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  before(
    async () => {
      // Short: the kubelets' Unix sockets live under it (107 bytes an address).
      stateDir = mkdtempSync(join(tmpdir(), 'pb-'));
      const logger = pino({ level: 'info' }, pino.destination({ dest: join(stateDir, 'demo.log') }));
      await ensureWebBuild(join(repoRoot, 'apps/web'), join(stateDir, 'web-build.log'), () => {});
      cluster = await startRealDemoCluster({
        demo: loadDemo(join(repoRoot, 'examples/demo.yaml')),
        stateDir,
        logger,
      });

      // A DRA driver the gateway does not run, on dra-node, and a pod holding one of its devices.
      const draNode = cluster.node('dra-node');
      driver = await thirdParty.draTestDriver(thirdPartyNode(draNode), {
        numDevices: 2,
        kubeconfig: cluster.kubeconfig,
      });
      await apply(deviceClassFor(driver.driverName, { name: 'drill-accelerator' }));
      await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
      await apply({
        apiVersion: 'resource.k8s.io/v1',
        kind: 'ResourceClaimTemplate',
        metadata: { namespace: NS, name: 'one-accelerator' },
        spec: {
          spec: {
            devices: { requests: [{ name: 'acc', exactly: { deviceClassName: 'drill-accelerator' } }] },
          },
        },
      });
      await driver.registered(90_000);
      await apply(pinnedPod('holder', NS, 'dra-node', { claims: { acc: { template: 'one-accelerator' } } }));
      await kubectl(['wait', '-n', NS, '--for=condition=Ready', 'pod/holder', '--timeout=120s']);
      const holder = await kubectlJson<PodJson>(['get', 'pod', '-n', NS, 'holder']);
      holderClaim = `${NS}/${holder.status.resourceClaimStatuses![0]!.resourceClaimName}`;
      const driverName = driver.driverName;
      const snap = await waitForSnapshot(
        draNode.gateway,
        (s) =>
          s.pods[`${NS}/holder`]?.phase === 'Running' &&
          s.dra?.claims[holderClaim]?.phase === 'prepared' &&
          s.dra.claims[holderClaim]!.devices.every(
            (d) => s.dra!.devices[`${driverName}/${d.pool}/${d.device}`]?.published === true,
          ),
        "dra-node's gateway to show drill/holder with its claim prepared on the other driver's device",
        60_000,
      );
      assert.equal(snap.dra!.drivers[driverName]!.inProcess, false, 'the gateway does not run it');
      otherDevice = snap.dra!.claims[holderClaim]!.devices[0]!.device;

      web = await startWebServer(
        loadWebConfig({
          ...process.env,
          NODE_ENV: 'production',
          PORT: '0',
          HOST: '127.0.0.1',
          PLUGBOARD_GATEWAYS: cluster.nodes.map((n) => `${n.name}=${n.gateway.url}`).join(','),
          PLUGBOARD_LOG_LEVEL: 'warn',
        }),
      );
      browser = await chromium.launch({ executablePath: CHROMIUM_EXECUTABLE, args: CHROMIUM_ARGS });
      // A context of its own: axe opens a page beside this one.
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      page = await context.newPage();
    },
    { timeout: 480_000 },
  );

  after(async () => {
    await browser?.close();
    await web?.stop();
    await driver?.stop();
    await cluster?.stop();
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  it('the overview shows the four real nodes live, axe-clean', async () => {
    await page.goto(web!.url);
    for (const name of NODES) {
      await expect(page.getByRole('article', { name }).getByText('● Live')).toBeVisible();
    }
    await expect(
      page
        .getByRole('article', { name: 'dra-node' })
        .getByRole('region', { name: new RegExp(`^${escape(DRA_DRIVER)} DRA devices`) }),
    ).toContainText('published 8');
    await axeClean('the overview');
    await screenshot('dashboard-real-overview');
  });

  it('a device-plugin fault flipped in the UI: the real kubelet lowers allocatable by one, the page shows it; clearing heals', async () => {
    const truth = cluster!.node('gpu-node-a').gateway.model.snapshot();
    const capacity = truth.resources[GPU]!.kubelet.capacity;
    const target = Object.values(truth.devices).find(
      (d) => d.resource === GPU && d.allocation?.pod === 'batch-spread',
    )!;
    assert.ok(target, 'ml/batch-spread holds a GPU');
    const summary = (allocatable: number) =>
      page.getByRole('region', { name: `${GPU} capacity ${capacity} allocatable ${allocatable}` }).first();
    const nodeAllocatable = async (): Promise<string | undefined> =>
      (await kubectlJson<{ status: { allocatable: Record<string, string> } }>(['get', 'node', 'gpu-node-a']))
        .status.allocatable[GPU];
    const waitAllocatable = (n: number): Promise<string> =>
      kubectl([
        'wait',
        'node/gpu-node-a',
        `--for=jsonpath={.status.allocatable.${GPU.replace('.', '\\.')}}=${n}`,
        '--timeout=60s',
      ]);
    assert.equal(await nodeAllocatable(), String(capacity), 'the Node before the fault');

    await openNode('gpu-node-a');
    await expect(summary(capacity)).toBeVisible();
    await axeClean('the node page of gpu-node-a');
    const sw = page.getByRole('switch', { name: `Fault ${target.id}`, exact: true });
    await sw.click();
    const dialog = page.getByRole('dialog', { name: `Inject a simulated fault on ${target.id}?` });
    await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
    await expect(dialog.getByRole('list', { name: 'Affected pods' })).toContainText('ml/batch-spread');
    await dialog.getByLabel('Reason').fill('real cluster: simulated ECC error');
    await dialog.getByRole('button', { name: 'Inject simulated fault' }).click();
    await expect(dialog).toHaveCount(0);
    await expect(sw).toHaveAttribute('aria-checked', 'true');

    // The real kubelet lowers the Node's allocatable (capacity stays); the page shows the same.
    await waitAllocatable(capacity - 1);
    const node = await kubectlJson<{ status: { capacity: Record<string, string> } }>([
      'get',
      'node',
      'gpu-node-a',
    ]);
    assert.equal(node.status.capacity[GPU], String(capacity));
    await expect(summary(capacity - 1)).toBeVisible(REAL_PATH);
    await expect(
      page.getByRole('button', {
        name: new RegExp(`^${escape(target.id)}\\s*,\\s*Unhealthy\\s*,\\s*simulated fault`),
      }),
    ).toBeVisible();
    await expect(page.locator('tr[data-pod="ml/batch-spread"]').first()).toContainText(
      'affected: uses an unhealthy device',
    );
    await screenshot('dashboard-real-gpu-node-a-fault');

    await sw.click();
    await page
      .getByRole('dialog', { name: `Clear the simulated fault on ${target.id}?` })
      .getByRole('button', { name: 'Clear simulated fault' })
      .click();
    await expect(sw).toHaveAttribute('aria-checked', 'false');
    await waitAllocatable(capacity);
    await expect(summary(capacity)).toBeVisible(REAL_PATH);
    await expect(page.locator('tr[data-pod="ml/batch-spread"]').first()).not.toContainText('affected');
  });

  it("a fault on a claimed DRA device reaches the pod's allocatedResourcesStatus through the real kubelet and the claims table; clearing heals", async () => {
    const claimKey = 'ml/inference-gpu';
    const truth = cluster!.node('dra-node').gateway.model.snapshot();
    const device = truth.dra!.claims[claimKey]!.devices[0]!.device;
    assert.deepEqual(truth.dra!.claims[claimKey]!.reservedFor, ['ml/infer-dra']);
    // The real kubelet names a DRA entry `claim:<pod claim name>` and each device by its CDI device ID.
    const health = async (): Promise<{ resourceID: string; health: string }[] | undefined> =>
      (
        await kubectlJson<PodJson>(['get', 'pod', '-n', 'ml', 'infer-dra'])
      ).status.containerStatuses?.[0]?.allocatedResourcesStatus?.find((s) => s.name === 'claim:gpu')
        ?.resources;
    const waitHealth = (h: string): Promise<string> =>
      kubectl([
        'wait',
        '-n',
        'ml',
        'pod/infer-dra',
        `--for=jsonpath={.status.containerStatuses[0].allocatedResourcesStatus[0].resources[0].health}=${h}`,
        '--timeout=90s',
      ]);
    await waitHealth('Healthy');
    const reported = (await health()) ?? [];
    assert.equal(reported.length, 1, JSON.stringify(reported));
    assert.match(
      reported[0]!.resourceID,
      new RegExp(`^k8s\\.${escape(DRA_DRIVER)}/gpu=[0-9a-f-]+-${device}$`),
    );

    await openNode('dra-node');
    const claimRow = page
      .getByRole('table', { name: 'ResourceClaims on dra-node' })
      .locator(`tr[data-claim="${claimKey}"]`);
    await expect(claimRow).toContainText('ml/infer-dra');
    await expect(claimRow.getByText('Healthy', { exact: true })).toBeVisible(REAL_PATH);
    await axeClean('the node page of dra-node');
    const sw = page.getByRole('switch', { name: `Fault ${device} (DRA, ${DRA_DRIVER})`, exact: true });
    await sw.click();
    const inject = page.getByRole('dialog', {
      name: `Inject a simulated fault on ${device} (DRA, ${DRA_DRIVER})?`,
    });
    await expect(inject.getByRole('button', { name: 'Cancel' })).toBeFocused();
    await expect(inject.getByRole('radio', { name: 'No taint (health only)' })).toBeChecked();
    await expect(inject.getByRole('list', { name: 'Affected pods' })).toContainText('ml/infer-dra');
    await inject.getByLabel('Reason').fill('real cluster: DRA ECC error');
    await inject.getByRole('button', { name: 'Inject simulated fault' }).click();
    await expect(inject).toHaveCount(0);
    await expect(sw).toHaveAttribute('aria-checked', 'true');

    // The driver tells the real kubelet; the kubelet writes it into the pod's status; the gateway
    // reads it from there, and the claims table shows it.
    await waitHealth('Unhealthy');
    await expect(claimRow.getByText('Unhealthy', { exact: true })).toBeVisible(REAL_PATH);
    await expect(page.locator('tr[data-pod="ml/infer-dra"]').first()).toContainText(
      'affected: uses an unhealthy device',
    );
    await screenshot('dashboard-real-dra-node-claim-unhealthy');

    await sw.click();
    await page
      .getByRole('dialog', { name: `Clear the simulated fault on ${device} (DRA, ${DRA_DRIVER})?` })
      .getByRole('button', { name: 'Clear simulated fault' })
      .click();
    await expect(sw).toHaveAttribute('aria-checked', 'false');
    await waitHealth('Healthy');
    await expect(claimRow.getByText('Healthy', { exact: true })).toBeVisible(REAL_PATH);
  });

  /** The DeviceTaintRule on the other driver's device, as the real API server holds it. */
  let ruleName = '';

  it("the eviction preview: a DeviceTaintRule dry run on another driver's device shows kube-controller-manager's status", async () => {
    const driverName = driver!.driverName;
    await openNode('dra-node');
    // The pod and its claim on the page (what the eviction will take away).
    await expect(page.locator(`tr[data-pod="${NS}/holder"]`)).toContainText('Running');
    await expect(page.locator(`tr[data-claim="${holderClaim}"]`)).toContainText(`${NS}/holder`);
    const sw = page.getByRole('switch', { name: `Fault ${otherDevice} (DRA, ${driverName})`, exact: true });
    await sw.click();
    const dry = page.getByRole('dialog', {
      name: `Dry-run a DeviceTaintRule on ${otherDevice} (DRA, ${driverName})?`,
    });
    await expect(dry.getByRole('button', { name: 'Cancel' })).toBeFocused();
    await expect(dry.getByRole('radio')).toHaveCount(0);
    await dry.getByLabel('Reason').fill('real cluster: would a drain evict anything?');
    await dry.getByRole('button', { name: 'Create the rule as a dry run (effect None)' }).click();
    await expect(dry).toHaveCount(0);
    await expect(sw).toHaveAttribute('aria-checked', 'true', REAL_PATH);

    // The rule in the real API server: exactly this device, effect None.
    const rules = (await kubectlJson<{ items: RuleJson[] }>(['get', 'devicetaintrules'])).items.filter(
      (r) =>
        r.spec.deviceSelector['driver'] === driverName && r.spec.deviceSelector['device'] === otherDevice,
    );
    assert.equal(rules.length, 1, JSON.stringify(rules));
    ruleName = rules[0]!.metadata.name;
    assert.deepEqual(rules[0]!.spec.deviceSelector, {
      driver: driverName,
      pool: 'dra-node',
      device: otherDevice,
    });
    assert.equal(rules[0]!.spec.taint.effect, 'None');
    // kube-controller-manager's device taint eviction controller writes what NoExecute would do.
    await kubectl([
      'wait',
      `devicetaintrule/${ruleName}`,
      '--for=condition=EvictionInProgress=False',
      '--timeout=60s',
    ]);
    const rule = await kubectlJson<RuleJson>(['get', 'devicetaintrule', ruleName]);
    const condition = rule.status!.conditions!.find((c) => c.type === 'EvictionInProgress')!;
    assert.equal(condition.reason, 'NoEffect');
    assert.match(condition.message, /1 pod would be evicted in 1 namespace if the effect was NoExecute/);

    // The dialog shows the rule, the controller's words and the pod; the pod keeps running.
    await sw.click();
    const ruleDialog = page.getByRole('dialog', {
      name: new RegExp(`^DeviceTaintRule ${escape(ruleName)} on ${escape(otherDevice)}`),
    });
    await expect(ruleDialog.getByTestId('taint-rule-status')).toContainText(
      '1 pod would be evicted in 1 namespace if the effect was NoExecute',
      REAL_PATH,
    );
    await expect(ruleDialog.getByRole('list', { name: 'Pods using this device' })).toContainText(
      `${NS}/holder`,
    );
    await axeClean('the DeviceTaintRule dialog after the dry run');
    await screenshot('dashboard-real-taint-rule-dry-run');
    // The dialog as the viewport shows it (docs/images/real-cluster-taint-rule-dry-run.png).
    await page.screenshot({ path: join(SHOTS, 'dashboard-real-taint-rule-dialog.png') });
    const holder = await kubectlJson<PodJson>(['get', 'pod', '-n', NS, 'holder']);
    assert.equal(holder.status.phase, 'Running');
    assert.equal(holder.metadata.deletionTimestamp, undefined, 'a dry run evicts nothing');
  });

  it('NoExecute: the real device taint eviction controller evicts the pod; the page drops the pod and its claim', async () => {
    assert.ok(ruleName, 'the dry run made the rule');
    const ruleDialog = page.getByRole('dialog', {
      name: new RegExp(`^DeviceTaintRule ${escape(ruleName)} `),
    });
    await ruleDialog.getByRole('radio', { name: 'Set the effect to NoExecute' }).check();
    await ruleDialog.getByRole('button', { name: 'Set NoExecute and evict 1 pod' }).click();
    await expect(ruleDialog).toHaveCount(0);

    // kubectl: the same rule turns NoExecute, the pod is deleted, the claim made for it goes too.
    await kubectl([
      'wait',
      `devicetaintrule/${ruleName}`,
      '--for=jsonpath={.spec.taint.effect}=NoExecute',
      '--timeout=30s',
    ]);
    await kubectl(['wait', '-n', NS, '--for=delete', 'pod/holder', '--timeout=90s']);
    const [claimNs, claimName] = holderClaim.split('/') as [string, string];
    await kubectl(['wait', '-n', claimNs, '--for=delete', `resourceclaim/${claimName}`, '--timeout=60s']);
    const events = await kubectlJson<{ items: { reason: string; involvedObject: { name: string } }[] }>([
      'get',
      'events',
      '-n',
      NS,
    ]);
    assert.ok(
      events.items.some(
        (e) => e.reason === 'DeviceTaintManagerEviction' && e.involvedObject.name === 'holder',
      ),
      'the real controller’s eviction Event',
    );

    // The page: the pod gone from the pod table, its claim from the claims table, the device free.
    await expect(page.locator(`tr[data-pod="${NS}/holder"]`)).toHaveCount(0, REAL_PATH);
    await expect(page.locator(`tr[data-claim="${holderClaim}"]`)).toHaveCount(0, REAL_PATH);
    const tile = page.locator(`li[data-dra="${driver!.driverName}/dra-node/${otherDevice}"]`);
    await expect(tile.getByRole('button', { name: /taint NoExecute.*free/ })).toBeVisible(REAL_PATH);
    await axeClean('the node page of dra-node after the eviction');
    await screenshot('dashboard-real-dra-node-evicted');

    // Clearing deletes the rule.
    const sw = page.getByRole('switch', {
      name: `Fault ${otherDevice} (DRA, ${driver!.driverName})`,
      exact: true,
    });
    await sw.click();
    await page
      .getByRole('dialog', { name: /^DeviceTaintRule / })
      .getByRole('button', { name: 'Delete the DeviceTaintRule' })
      .click();
    await expect(sw).toHaveAttribute('aria-checked', 'false', REAL_PATH);
    await kubectl(['wait', '--for=delete', `devicetaintrule/${ruleName}`, '--timeout=30s']);
  });
});
