// The gateway as the container image runs it: the bundle (scripts/bundle.mjs) started by plain
// `node` outside the repository's node_modules, with the chart's default NODE_OPTIONS and
// MALLOC_ARENA_MAX, against kubelet-sim. It proves the bundle carries everything the gateway
// loads at run time — the plugins over gRPC, PodResources, @kubernetes/client-node's informers
// (a separate chunk), metrics — and that the chart's memory settings are accepted by node.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { startKubeletSim, type KubeletSim } from '@plugboard/kubelet-sim';
import type { NodeSnapshot } from '@plugboard/api';
import { chartGatewayEnv, connectStream, simGatewayArgs, waitFor } from './helpers.js';

const GPU = 'plugboard.example/gpu';
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'pb-gw-bundle-'));
let sim: KubeletSim;
let gateway: ChildProcess;
let url = '';
let output = '';

before(async () => {
  const bundle = join(dir, 'image');
  const built = spawnSync(
    process.execPath,
    [join(repoRoot, 'apps/node-gateway/scripts/bundle.mjs'), '--outdir', bundle],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(built.status, 0, built.stderr);
  assert.ok(
    readdirSync(join(bundle, 'chunks')).some((f) => f.startsWith('kube-')),
    'client-node is its own chunk',
  );
  sim = await startKubeletSim({
    devicePluginDir: join(dir, 'dp'),
    stateDir: join(dir, 'kubelet'),
    nodeName: 'bundle-node',
    logger: pino({ level: 'silent' }),
  });
  const config = join(dir, 'gateway.yaml');
  writeFileSync(
    config,
    `resources:\n  - name: ${GPU}\n    simulated: { count: 4, numaNodes: [0, 1] }\n` +
      'gateway:\n  faults: { enabled: true }\n',
  );
  // cwd outside the repository: nothing can be resolved from a node_modules directory.
  gateway = spawn(
    process.execPath,
    [
      join(bundle, 'plugboard-gateway.mjs'),
      ...simGatewayArgs(sim, {
        config,
        nodeName: 'bundle-node',
        listen: '127.0.0.1:0',
        stateDir: join(dir, 'state'),
      }),
    ],
    { cwd: bundle, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, ...chartGatewayEnv() } },
  );
  gateway.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  gateway.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  url = await waitFor('the listening log line', () => /"url":"(http:\/\/[^"]+)"/.exec(output)?.[1], 30_000);
});

after(async () => {
  if (gateway && gateway.exitCode === null) {
    gateway.kill('SIGKILL');
    await new Promise((r) => gateway.once('exit', r));
  }
  await sim?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const snapshot = async (): Promise<NodeSnapshot> =>
  (await (await fetch(`${url}/api/v1/node`)).json()) as NodeSnapshot;

test('the bundle carries only the client-node API classes the gateway and its DRA drivers name', () => {
  // A dynamic import of the package (or `import *`) defeats tree-shaking: every generated API class
  // is bundled and evaluated at load (67 instead of 6 once: +1.9 MB of chunk, several MB of RSS).
  const apiClass = /\b([A-Z][A-Za-z0-9]*V\d+(?:alpha\d+|beta\d+)?Api)\b/g;
  const named = new Set<string>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const f = join(d, e.name);
      if (e.isDirectory()) walk(f);
      else if (/\.ts$/.test(e.name) && !/\.test\.ts$/.test(e.name)) {
        for (const m of readFileSync(f, 'utf8').matchAll(apiClass)) named.add(m[1]!);
      }
    }
  };
  for (const src of ['apps/node-gateway/src', 'packages/plugin/src']) walk(join(repoRoot, src));
  const chunks = join(dir, 'image', 'chunks');
  const bundled = new Set<string>();
  for (const f of readdirSync(chunks).filter((n) => n.endsWith('.mjs'))) {
    for (const m of readFileSync(join(chunks, f), 'utf8').matchAll(
      /"([A-Z][A-Za-z0-9]*V\d+(?:alpha\d+|beta\d+)?Api)"/g,
    )) {
      bundled.add(m[1]!.replace(/^(Object|Observable)(?=[A-Z])/, ''));
    }
  }
  assert.ok(bundled.has('CoreV1Api'), `the client-node chunk was found: ${[...bundled].join(', ')}`);
  assert.deepEqual(
    [...bundled].filter((c) => !named.has(c)).sort(),
    [],
    `bundled but never named by the source (${[...named].sort().join(', ')})`,
  );
});

test('the bundled gateway registers its plugin, reads PodResources and the API server, and runs faults', async () => {
  await waitFor('ready', async () => (await fetch(`${url}/readyz`)).status === 200, 20_000);
  await sim.admitPod({
    metadata: { name: 'trainer', namespace: 'ml' },
    spec: { containers: [{ name: 'main', resources: { limits: { [GPU]: 1 } } }] },
  });
  const s = await waitFor(
    'the pod through PodResources and the Node through the informer',
    async () => {
      const snap = await snapshot();
      // Each source says ok once its first list is in (on a busy machine the informers' initial
      // lists may land after the Node's).
      return snap.pods['ml/trainer'] &&
        snap.resources[GPU]?.apiServer?.allocatable === 4 &&
        snap.sources.kubernetes.status === 'ok' &&
        snap.sources.podResources.status === 'ok'
        ? snap
        : null;
    },
    20_000,
  );
  assert.equal(s.sources.kubernetes.status, 'ok');
  assert.equal(s.sources.podResources.status, 'ok');

  const stream = await connectStream(`${url.replace('http', 'ws')}/api/v1/stream`);
  await stream.next((m) => m.type === 'snapshot', 'snapshot');
  const free = Object.values(s.devices).find((d) => !d.allocation)!;
  const res = await fetch(`${url}/api/v1/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ resource: GPU, deviceId: free.id, reason: 'bundle test' }),
  });
  assert.equal(res.status, 201);
  const path = `/devices/${free.key.replace(/\//g, '~1')}/health`;
  await stream.next(
    (m) =>
      m.type === 'patch' && m.ops.some((o) => o.path === path && 'value' in o && o.value === 'Unhealthy'),
    'the Unhealthy patch',
  );
  await waitFor('kubelet-sim allocatable drop', () => sim.state().resources[GPU]?.allocatable === 3);
  await stream.close();

  const metrics = await (await fetch(`${url}/metrics`)).text();
  assert.match(
    metrics,
    /^plugboard_gateway_faults_injected_total\{resource="plugboard\.example\/gpu",node="bundle-node"\} 1$/m,
  );
});

test('the chart heap cap is in force, and SIGTERM stops the bundle cleanly (plugin socket removed)', async () => {
  const metrics = await (await fetch(`${url}/metrics`)).text();
  const limitMb = Number(/--max-old-space-size=(\d+)/.exec(chartGatewayEnv().NODE_OPTIONS)![1]);
  // V8's limit is the old-space cap plus the young generation: without the cap it would be GBs.
  const limit = Number(/^plugboard_gateway_heap_limit_bytes\{node="bundle-node"\} (\S+)$/m.exec(metrics)![1]);
  assert.ok(
    limit >= limitMb * 2 ** 20 && limit < (limitMb + 16) * 2 ** 20,
    `heap limit ${limit} B follows --max-old-space-size=${limitMb}`,
  );
  const sockets = () =>
    readdirSync(sim.devicePluginDir).filter((f) => f.endsWith('.sock') && f !== 'kubelet.sock');
  assert.ok(sockets().length > 0);
  gateway.kill('SIGTERM');
  const code = await new Promise<number | null>((r) => gateway.once('exit', r));
  assert.equal(code, 0, output.slice(-2000));
  assert.deepEqual(sockets(), []);
  assert.ok(existsSync(join(dir, 'state', 'faults.json')), 'the active fault was persisted');
});
