// `npm start` as a user runs it: a child process group from the repo root, waited on until it prints
// its URL; four nodes over HTTP and in the browser; a fault injected through the UI lowers
// allocatable; dra-node's claims through a real kubectl; SIGINT (what Ctrl-C sends to the foreground group) leaves no process, socket or port.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import type { NodeSnapshot } from '@plugboard/api';
import { CHROMIUM_ARGS, CHROMIUM_EXECUTABLE } from '@plugboard/web/e2e/chromium';
import { socketsUnder } from '@plugboard/local-cluster';
import { repoRoot, startDemo, type DemoProcess } from './demo-process.js';

const GPU = 'plugboard.example/gpu';
const NODES = ['gpu-node-a', 'gpu-node-b', 'edge-node', 'dra-node'];
/** Screenshots of the demo's views, kept as test artefacts (the README's image is one of them). */
const SHOTS = join(repoRoot, 'apps/demo/test-results/screenshots');

async function portFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.once('error', () => res(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => res(true)));
  });
}

describe('npm start', { timeout: 600_000 }, () => {
  let demo: DemoProcess;
  let browser: Browser | null = null;

  before(async () => {
    demo = startDemo('npm', ['start']);
    await demo.ready;
  });

  after(async () => {
    await browser?.close();
    demo?.kill();
  });

  it('serves four nodes with the expected device counts over HTTP', async () => {
    const counts: Record<string, Record<string, number>> = {};
    for (const node of NODES) {
      const res = await fetch(`${demo.url}/api/nodes/${node}/node`);
      assert.equal(res.status, 200, `GET /api/nodes/${node}/node`);
      const snap = (await res.json()) as NodeSnapshot;
      counts[node] = Object.fromEntries(
        Object.entries(snap.resources).map(([r, s]) => [r, s.kubelet.capacity]),
      );
    }
    assert.deepEqual(counts, {
      'gpu-node-a': { [GPU]: 8, 'plugboard.example/nic-vf': 16 },
      'gpu-node-b': { [GPU]: 16 },
      'edge-node': { 'plugboard.example/serial': 4 },
      'dra-node': { 'plugboard.example/nic-vf': 8 },
    });
    const dra = ((await (await fetch(`${demo.url}/api/nodes/dra-node/node`)).json()) as NodeSnapshot).dra;
    assert.equal(dra?.drivers['gpu.plugboard.example']?.counts.published, 8);
    assert.match(
      demo.output,
      /node dra-node: .*DRA driver gpu\.plugboard\.example \(8 devices published\) registered/,
    );
    assert.match(demo.output, /ml\/train-wide on dra-node stays Pending: 0\/1 nodes are available/);
  });

  it('shows the nodes in the browser and a fault injected from the UI lowers allocatable', async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM_EXECUTABLE, args: CHROMIUM_ARGS });
    const page = await browser.newPage();
    await page.goto(demo.url);
    for (const node of NODES) {
      await page.getByRole('article', { name: node }).waitFor({ timeout: 20_000 });
    }
    const snap = (await (await fetch(`${demo.url}/api/nodes/gpu-node-a/node`)).json()) as NodeSnapshot;
    const target = Object.values(snap.devices).find(
      (d) => d.resource === GPU && d.allocation?.pod === 'batch-spread',
    )!;
    assert.ok(target, 'ml/batch-spread holds a GPU');
    await page.goto(`${demo.url}/nodes/gpu-node-a`);
    const summary = (allocatable: number) =>
      page.getByRole('region', { name: `${GPU} capacity 8 allocatable ${allocatable}` }).first();
    await summary(8).waitFor({ timeout: 20_000 });
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.screenshot({ path: join(SHOTS, 'demo-node-gpu-node-a.png'), fullPage: true });
    await page.getByRole('switch', { name: `Fault ${target.id}`, exact: true }).click();
    const dialog = page.getByRole('dialog', { name: `Inject a simulated fault on ${target.id}?` });
    await dialog.getByRole('button', { name: 'Inject simulated fault' }).click();
    await summary(7).waitFor({ timeout: 20_000 });
    await page.screenshot({ path: join(SHOTS, 'demo-node-gpu-node-a-with-fault.png'), fullPage: true });
    const after = (await (await fetch(`${demo.url}/api/nodes/gpu-node-a/node`)).json()) as NodeSnapshot;
    assert.equal(after.resources[GPU]!.kubelet.allocatable, 7);
    assert.equal(after.pods['ml/batch-spread']!.affectedByUnhealthyDevice, true);
  });

  it('prints a kubeconfig with one context per node that a real kubectl reads', async () => {
    const m = /kubectl: export KUBECONFIG=(\S+);/.exec(demo.output);
    assert.ok(m, `the demo prints how to point kubectl at it:\n${demo.output}`);
    const kubectl = execFileSync(
      process.execPath,
      [join(repoRoot, 'deploy/scripts/fetch-tools.mjs'), 'kubectl'],
      {
        encoding: 'utf8',
      },
    ).trim();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      KUBECONFIG: m[1]!,
      HOME: demo.stateDir,
      KUBECACHEDIR: join(demo.stateDir, 'kube-cache'),
    };
    const run = (...args: string[]) => promisify(execFile)(kubectl, args, { env, encoding: 'utf8' });
    const contexts = (await run('config', 'get-contexts', '-o', 'name')).stdout.trim().split('\n');
    assert.deepEqual(contexts, [...NODES].sort());
    for (const node of contexts) {
      const { stdout } = await run('--context', node, 'get', 'nodes');
      assert.match(stdout, new RegExp(`^${node}\\s+Ready\\s`, 'm'), stdout);
    }
    const pods = (await run('--context', 'gpu-node-a', 'get', 'pods', '-A', '-o', 'wide')).stdout;
    // The previous test's fault holds batch-spread's GPU: kubectl shows the container crash-looping.
    assert.match(pods, /^ml\s+batch-spread\s+0\/1\s+CrashLoopBackOff\s+\d+ \([^)]+ ago\)\s/m, pods);
    assert.match(pods, /^ml\s+inference\s+1\/1\s+Running\s+0\s/m, pods);
    // dra-node: the claims as kubectl prints them (the README's DRA tour).
    const claims = (await run('--context', 'dra-node', 'get', 'resourceclaims', '-A')).stdout;
    assert.match(claims, /^ml\s+inference-gpu\s+allocated,reserved\s/m, claims);
    assert.match(claims, /^ml\s+train-pair-gpus-\w+\s+allocated,reserved\s/m, claims);
    assert.match(claims, /^ml\s+train-wide-gpus-\w+\s+pending\s/m, claims);
    // render/frame-dra asked `limits: {plugboard.example/gpu: 1}`: the scheduler's claim for it.
    assert.match(claims, /^render\s+frame-dra-extended-resources-\w{5}\s+allocated,reserved\s/m, claims);

    // The plugin through kubectl, as printed: kubectl finds kubectl-plugboard on the PATH given, and
    // PLUGBOARD_GATEWAYS names every node's gateway.
    const p = /kubectl plugboard: export PATH=(\S+):\$PATH PLUGBOARD_GATEWAYS=(\S+);/.exec(demo.output);
    assert.ok(p, `the demo prints how to run kubectl plugboard:\n${demo.output}`);
    const withPlugin = { ...env, PATH: `${p[1]!}:${env.PATH ?? ''}`, PLUGBOARD_GATEWAYS: p[2]! };
    const nodes = (
      await promisify(execFile)(kubectl, ['plugboard', 'nodes'], { env: withPlugin, encoding: 'utf8' })
    ).stdout;
    for (const node of NODES) assert.match(nodes, new RegExp(`^${node}\\s`, 'm'), nodes);
    assert.match(nodes, /^dra-node\s.*gpu\.plugboard\.example/m, nodes);
  });

  it('stops on SIGINT within 5 s: no process, no socket, the port is free', async () => {
    const port = Number(new URL(demo.url).port);
    assert.ok(demo.stateDir && existsSync(demo.stateDir));
    assert.ok(socketsUnder(demo.stateDir).length > 0);
    const t0 = Date.now();
    const { code, signal } = await demo.interrupt();
    const stopMs = Date.now() - t0;
    assert.ok(stopMs < 5000, `stopped in ${stopMs} ms`);
    // npm itself ends by the signal (as in a terminal); the demo reports its own clean stop.
    assert.ok(code === 0 || signal === 'SIGINT', `npm start ended with code ${code}, signal ${signal}`);
    assert.match(demo.output, /\[plugboard\] stopped\n/);
    assert.doesNotMatch(demo.output, /demo failed|exiting anyway/);
    assert.equal(demo.groupAlive(), false, 'no process of the demo remains');
    assert.equal(existsSync(demo.stateDir), false, 'the temporary state directory is removed');
    assert.equal(await portFree(port), true);
  });
});
