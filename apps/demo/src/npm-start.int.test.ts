// `npm start` as a user runs it: a child process group from the repo root, waited on until it prints
// its URL; four nodes over HTTP and in the browser; a fault injected through the UI lowers
// allocatable; dra-node's claims through a real kubectl; SIGINT (what Ctrl-C sends to the foreground group) leaves no process, socket or port.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import type { NodeSnapshot } from '@plugboard/api';
import { CHROMIUM_ARGS, CHROMIUM_EXECUTABLE } from '@plugboard/web/e2e/chromium';
import { socketsUnder } from '@plugboard/local-cluster';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const GPU = 'plugboard.example/gpu';
const NODES = ['gpu-node-a', 'gpu-node-b', 'edge-node', 'dra-node'];
/** Screenshots of the demo's views, kept as test artefacts (the README's image is one of them). */
const SHOTS = join(repoRoot, 'apps/demo/test-results/screenshots');

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.once('error', () => res(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => res(true)));
  });
}

describe('npm start', { timeout: 600_000 }, () => {
  let child: ChildProcess;
  let output = '';
  let url = '';
  let stateDir = '';
  let browser: Browser | null = null;
  let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  before(async () => {
    child = spawn('npm', ['start'], {
      cwd: repoRoot,
      env: { ...process.env, PORT: '0', NEXT_TELEMETRY_DISABLED: '1' },
      detached: true, // its own process group, like a terminal's foreground job
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    exited = new Promise((res) => child.once('exit', (code, signal) => res({ code, signal })));
    const ready = new Promise<void>((res, rej) => {
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        stateDir ||= /state directory (\S+)/.exec(output)?.[1] ?? '';
        const m = /ready in [\d.]+ s — open (http:\/\/\S+)/.exec(output);
        if (m) {
          url = m[1]!;
          res();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      void exited.then(({ code, signal }) =>
        rej(new Error(`npm start exited (code ${code}, signal ${signal}) before it was ready:\n${output}`)),
      );
    });
    await ready;
  });

  after(async () => {
    await browser?.close();
    if (child.exitCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  });

  it('serves four nodes with the expected device counts over HTTP', async () => {
    const counts: Record<string, Record<string, number>> = {};
    for (const node of NODES) {
      const res = await fetch(`${url}/api/nodes/${node}/node`);
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
    const dra = ((await (await fetch(`${url}/api/nodes/dra-node/node`)).json()) as NodeSnapshot).dra;
    assert.equal(dra?.drivers['gpu.plugboard.example']?.counts.published, 8);
    assert.match(
      output,
      /node dra-node: .*DRA driver gpu\.plugboard\.example \(8 devices published\) registered/,
    );
    assert.match(output, /ml\/train-wide on dra-node stays Pending: 0\/1 nodes are available/);
  });

  it('shows the nodes in the browser and a fault injected from the UI lowers allocatable', async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM_EXECUTABLE, args: CHROMIUM_ARGS });
    const page = await browser.newPage();
    await page.goto(url);
    for (const node of NODES) {
      await page.getByRole('article', { name: node }).waitFor({ timeout: 20_000 });
    }
    const snap = (await (await fetch(`${url}/api/nodes/gpu-node-a/node`)).json()) as NodeSnapshot;
    const target = Object.values(snap.devices).find(
      (d) => d.resource === GPU && d.allocation?.pod === 'batch-spread',
    )!;
    assert.ok(target, 'ml/batch-spread holds a GPU');
    await page.goto(`${url}/nodes/gpu-node-a`);
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
    const after = (await (await fetch(`${url}/api/nodes/gpu-node-a/node`)).json()) as NodeSnapshot;
    assert.equal(after.resources[GPU]!.kubelet.allocatable, 7);
    assert.equal(after.pods['ml/batch-spread']!.affectedByUnhealthyDevice, true);
  });

  it('prints a kubeconfig with one context per node that a real kubectl reads', async () => {
    const m = /kubectl: export KUBECONFIG=(\S+);/.exec(output);
    assert.ok(m, `the demo prints how to point kubectl at it:\n${output}`);
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
      HOME: stateDir,
      KUBECACHEDIR: join(stateDir, 'kube-cache'),
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
    const p = /kubectl plugboard: export PATH=(\S+):\$PATH PLUGBOARD_GATEWAYS=(\S+);/.exec(output);
    assert.ok(p, `the demo prints how to run kubectl plugboard:\n${output}`);
    const withPlugin = { ...env, PATH: `${p[1]!}:${env.PATH ?? ''}`, PLUGBOARD_GATEWAYS: p[2]! };
    const nodes = (
      await promisify(execFile)(kubectl, ['plugboard', 'nodes'], { env: withPlugin, encoding: 'utf8' })
    ).stdout;
    for (const node of NODES) assert.match(nodes, new RegExp(`^${node}\\s`, 'm'), nodes);
    assert.match(nodes, /^dra-node\s.*gpu\.plugboard\.example/m, nodes);
  });

  it('stops on SIGINT within 5 s: no process, no socket, the port is free', async () => {
    const port = Number(new URL(url).port);
    assert.ok(stateDir && existsSync(stateDir));
    assert.ok(socketsUnder(stateDir).length > 0);
    const t0 = Date.now();
    process.kill(-child.pid!, 'SIGINT');
    const { code, signal } = await exited;
    const stopMs = Date.now() - t0;
    assert.ok(stopMs < 5000, `stopped in ${stopMs} ms`);
    // npm itself ends by the signal (as in a terminal); the demo reports its own clean stop.
    assert.ok(code === 0 || signal === 'SIGINT', `npm start ended with code ${code}, signal ${signal}`);
    assert.match(output, /\[plugboard\] stopped\n/);
    assert.doesNotMatch(output, /demo failed|exiting anyway/);
    assert.equal(groupAlive(child.pid!), false, 'no process of the demo remains');
    assert.equal(existsSync(stateDir), false, 'the temporary state directory is removed');
    assert.equal(await portFree(port), true);
  });
});
