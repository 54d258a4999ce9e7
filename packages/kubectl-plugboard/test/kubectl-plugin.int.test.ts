// kubectl-plugboard as kubectl runs it: a real kubectl (v1.35, from deploy/scripts/fetch-tools.mjs)
// finds the `kubectl-plugboard` executable on PATH (a shim in a temporary directory running the
// package's bin entry) and runs it as `kubectl plugboard …`, passing its arguments, environment and
// exit code through. The cluster is a simulated node (kubelet-sim + a real gateway with real device
// plugins and a real DRA driver), reached through the API server's pod proxy with $KUBECONFIG and
// directly with --gateway as the demo prints it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { EXIT_CODES } from '../src/errors.js';
import {
  claimPod,
  createClaimTemplate,
  createDeviceClass,
  GPU,
  startNode,
  stopNodes,
  waitForSnapshot,
  type TestNode,
} from './helpers.js';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../../..');
const bin = join(repoRoot, 'packages/kubectl-plugboard/bin/kubectl-plugboard.js');
const GATEWAY_POD = 'pb-plugboard-gateway-x1';

const root = mkdtempSync(join(tmpdir(), 'kubectl-plugboard-kubectl-'));
const pathDir = join(root, 'path');
const shim = join(pathDir, 'kubectl-plugboard');
const proxyTargets = new Map<string, string>();
let node: TestNode;
let kubectlPath: string;
let calls = 0;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function fetchKubectl(): Promise<string> {
  return new Promise((done, reject) => {
    execFile(
      process.execPath,
      [join(repoRoot, 'deploy/scripts/fetch-tools.mjs'), 'kubectl'],
      { timeout: 120_000 },
      (err, stdout, stderr) =>
        err ? reject(new Error(`fetch-tools kubectl: ${stderr}`)) : done(stdout.trim()),
    );
  });
}

/** Runs kubectl with the shim's directory first on PATH, $KUBECONFIG set, and a HOME of its own. */
function kubectl(args: string[], env: Record<string, string> = {}): Promise<Result> {
  const home = join(root, `home-${++calls}`);
  return new Promise((done, reject) => {
    execFile(
      kubectlPath,
      args,
      {
        env: {
          PATH: [pathDir, dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
          HOME: home,
          KUBECACHEDIR: join(home, 'cache'),
          KUBECONFIG: node.sim.kubeconfigPath,
          ...env,
        },
        timeout: 90_000,
        killSignal: 'SIGKILL',
      },
      (err, stdout, stderr) => {
        if (err && (err.killed || typeof err.code !== 'number'))
          reject(new Error(`kubectl ${args.join(' ')} did not finish: ${err.message}\n${stdout}${stderr}`));
        else done({ code: err ? Number(err.code) : 0, stdout, stderr });
      },
    );
  });
}

function ok(r: Result): string {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r.stdout;
}

before(async () => {
  mkdirSync(pathDir);
  for (const p of [process.execPath, bin]) assert.doesNotMatch(p, /'/, 'paths quote safely in sh');
  writeFileSync(shim, `#!/bin/sh\nexec '${process.execPath}' '${bin}' "$@"\n`);
  chmodSync(shim, 0o755);
  [kubectlPath, node] = await Promise.all([
    fetchKubectl(),
    startNode(root, 'node-a', { faults: true, dra: true, sim: { podProxyTargets: proxyTargets } }),
  ]);
  await node.sim.admitPod({
    metadata: {
      name: GATEWAY_POD,
      namespace: 'plugboard',
      labels: {
        'app.kubernetes.io/name': 'plugboard',
        'app.kubernetes.io/instance': 'pb',
        'app.kubernetes.io/component': 'gateway',
      },
    },
    spec: { containers: [{ name: 'gateway', ports: [{ name: 'http', containerPort: 9400 }] }] },
  });
  proxyTargets.set(`plugboard/${GATEWAY_POD}`, node.gateway.url);
  await node.sim.admitPod({
    metadata: { name: 'trainer', namespace: 'ml' },
    spec: { containers: [{ name: 'main', resources: { limits: { [GPU]: '2' } } }] },
  });
  await createDeviceClass(node);
  await createClaimTemplate(node, 'ml', 'one-gpu', 1);
  await node.sim.admitPod(claimPod('ml', 'infer', 'one-gpu', 'node-a'));
  await waitForSnapshot(
    node,
    (s) =>
      (s.pods['ml/trainer']?.containers[0]?.devices[GPU]?.length ?? 0) === 2 &&
      Object.values(s.dra?.claims ?? {}).some((c) => c.owner?.pod === 'ml/infer' && c.phase === 'prepared'),
    "the trainer pod with two devices and the infer pod's prepared claim",
  );
});

after(async () => {
  if (node) await stopNodes([node]);
  rmSync(root, { recursive: true, force: true });
});

// Each plugin run loads the CLI under tsx (a few seconds of CPU): few runs, two at a time.
describe('kubectl plugboard', { concurrency: 2 }, () => {
  it('kubectl plugin list finds kubectl-plugboard on PATH', async () => {
    const out = ok(await kubectl(['plugin', 'list']));
    assert.match(out, /^The following compatible plugins are available:\n\n/);
    assert.ok(out.split('\n').includes(shim), out);
  });

  it('nodes: through the pod proxy with $KUBECONFIG, one row per node and resource, then per DRA driver', async () => {
    const [resources, dra] = ok(await kubectl(['plugboard', 'nodes']))
      .trimEnd()
      .split('\n\n')
      .map((t) => t.split('\n'));
    assert.match(resources![0]!, /^NODE +RESOURCE +CAPACITY +ALLOCATABLE +ALLOCATED +UNHEALTHY +REGISTERED/);
    assert.match(resources![1]!, /^node-a +plugboard\.example\/gpu +4 +4 +2 +0 +yes/);
    assert.equal(resources!.length, 2);
    assert.match(
      dra![0]!,
      /^NODE +DRA DRIVER +PUBLISHED +USABLE +ALLOCATED +FREE +UNHEALTHY +TAINTED +PENDING CLAIMS$/,
    );
    assert.match(dra![1]!, /^node-a +gpu\.plugboard\.example +4 +4 +1 +3 +0 +0 +0$/);
    assert.equal(dra!.length, 2);
  });

  it('devices with --kubeconfig after the plugin name (kubectl passes it through): the holders', async () => {
    const out = ok(
      await kubectl(['plugboard', 'devices', '--node', 'node-a', '--kubeconfig', node.sim.kubeconfigPath], {
        KUBECONFIG: join(root, 'no-such-kubeconfig'),
      }),
    );
    const rows = out.trimEnd().split('\n');
    assert.equal(rows.filter((r) => / device-plugin /.test(r)).length, 4, out);
    assert.equal(rows.filter((r) => / DRA /.test(r)).length, 4, out);
    assert.equal(rows.filter((r) => r.includes('ml/trainer/main')).length, 2, out);
    assert.equal(rows.filter((r) => / ml\/infer /.test(r)).length, 1, out);
  });

  it('claims -n ml: kubectl passes -n through to the plugin, which lists the claims of that namespace', async () => {
    const lines = ok(await kubectl(['plugboard', 'claims', '-n', 'ml']))
      .trimEnd()
      .split('\n');
    assert.match(lines[0]!, /^NAMESPACE +NAME +NODE +PHASE +REQUESTS +DEVICES +PODS +HEALTH +REASON$/);
    assert.match(
      lines[1]!,
      /^ml +infer-gpus-\S+ +node-a +prepared +gpus:1 gpu\.plugboard\.example +gpu-\d +infer +/,
    );
    assert.equal(lines.length, 2);
  });

  it('nodes --gateway: the demo mode, straight to the gateway', async () => {
    const out = ok(await kubectl(['plugboard', 'nodes', '--gateway', node.gateway.url]));
    assert.match(out, /^node-a +plugboard\.example\/gpu +4 +4 +2 +0 +yes/m);
  });

  it("the plugin's exit code is kubectl's: 3 for a node nobody serves", async () => {
    const r = await kubectl(['plugboard', 'devices', '--node', 'node-z', '--gateway', node.gateway.url]);
    assert.equal(r.code, EXIT_CODES['not-found'], r.stderr);
    assert.match(r.stderr, /no gateway serves node "node-z"; nodes: node-a/);
  });

  it('kubectl refuses flags before the plugin name (they go after it)', async () => {
    const r = await kubectl(['--kubeconfig', node.sim.kubeconfigPath, 'plugboard', 'nodes']);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'Error: flags cannot be placed before plugin name: --kubeconfig\n');
  });
});
