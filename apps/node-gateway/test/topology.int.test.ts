// NUMA placement through the gateway against kubelet-sim (Topology Manager restricted): CPUs per
// NUMA node from the sim's sysfs fixture, each pod's devices, CPUs and memory with an alignment
// verdict and the kubelet's admission decision, a TopologyAffinityError rejection in the event
// ring, and the "try to place" endpoints (the gateway's prediction, admit with auth through kubelet-sim,
// problems passed through).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { KubeletSim } from '@plugboard/kubelet-sim';
import { gatewayDocument, simNode, type SimNode } from '@plugboard/testbed';
import { parseGatewayConfig, startGateway, type Gateway } from '../src/index.js';
import { KubeletControl } from '../src/sources/kubelet-control.js';
import type { AdmissionView } from '@plugboard/api';
import { apiServerRequestTo, waitFor } from './helpers.js';

const GPU = 'plugboard.example/gpu';
const TOKEN = 'topology-test-token-0123456789';
const silent = pino({ level: 'silent' });
const GIB = 2 ** 30;

let dir: string;
let node: SimNode;
let sim: KubeletSim;
let gw: Gateway;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pb-gw-topo-'));
  node = await simNode(dir, 'topo-node', {
    sim: {
      numaNodes: 2,
      cpus: 16,
      memoryPerNumaBytes: 8 * GIB,
      topologyManagerPolicy: 'restricted',
      reservedCpus: [0, 1],
      podResourcesRateLimit: false,
    },
  });
  sim = node.sim;
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  const document = gatewayDocument(node, {
    resources: [{ name: GPU, simulated: { count: 8, numaNodes: [0, 1] } }],
    faults: false,
    tokenFile,
    gateway: { podResources: { pollIntervalMs: 100 }, topology: { pollIntervalMs: 100 } },
  });
  gw = await startGateway(parseGatewayConfig(document), { logger: silent });
  await waitFor('plugin registered', async () => (await fetch(`${gw.url}/readyz`)).status === 200);
});

after(async () => {
  await gw?.stop();
  await node?.remove();
  rmSync(dir, { recursive: true, force: true });
});

const snap = () => gw.model.snapshot();
const guaranteed = (name: string, limits: Record<string, string>) => ({
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'main', resources: { limits } }] },
});

test("the snapshot carries the host layout from sysfs and the kubelet settings from the kubelet's configz", async () => {
  const s = await waitFor(
    'kubelet settings and the admit path',
    () => snap().topology?.kubelet && snap().topology?.placement.admit?.available && snap(),
  );
  assert.deepEqual(s.topology!.sysfs, { root: sim.sysfsRoot, available: true, reason: null });
  assert.deepEqual(s.topology!.kubelet, {
    source: 'configz',
    topologyManagerPolicy: 'restricted',
    topologyManagerScope: 'container',
    cpuManagerPolicy: 'static',
    memoryManagerPolicy: 'Static',
    reservedCpuIds: [0, 1],
  });
  assert.deepEqual(s.topology!.placement, {
    available: true,
    reason: null,
    admit: { available: true, reason: null },
  });
  const n0 = s.numa.nodes['0']!;
  assert.deepEqual(n0.cpuIds, [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(n0.cpuCores, [
    [0, 1],
    [2, 3],
    [4, 5],
    [6, 7],
  ]);
  assert.equal(n0.memoryTotalBytes, 8 * GIB);
  await waitFor(
    'reserved CPUs from PodResources',
    () => snap().numa.nodes['0']!.reservedCpuIds?.length === 2,
  );
  assert.deepEqual(snap().numa.nodes['0']!.reservedCpuIds, [0, 1]);
  assert.deepEqual(snap().numa.nodes['1']!.reservedCpuIds, []);
});

test("a Guaranteed pod: devices, CPUs and memory with their NUMA nodes, aligned, with the kubelet's decision", async () => {
  await sim.admitPod(guaranteed('aligned', { [GPU]: '1', cpu: '2', memory: '1Gi' }));
  const pod = await waitFor('pod with its decision', () => {
    const p = snap().pods['default/aligned'];
    return p?.topology?.admission && p.containers[0]?.cpuIds.length ? p : null;
  });
  const c = pod.containers[0]!;
  assert.deepEqual(c.cpuNumaNodes, [0, 0]);
  assert.equal(pod.numaAlignment.verdict, 'aligned');
  assert.deepEqual(pod.numaAlignment.numaNodes, [0]);
  assert.match(
    pod.numaAlignment.reason,
    /^aligned on NUMA node 0: plugboard\.example\/gpu ×1, 2 exclusive CPUs, memory 1 GiB$/,
  );
  assert.deepEqual(
    pod.numaAlignment.parts?.map((p) => [p.kind, p.name, p.numaNodes]),
    [
      ['devices', GPU, [0]],
      ['cpus', 'cpu', [0]],
      ['memory', 'memory', [0]],
    ],
  );
  assert.equal(pod.topology!.policy, 'restricted');
  const a = pod.topology!.admission!;
  assert.equal(a.result, 'admitted');
  assert.deepEqual(a.steps[0]!.merged, { numaNodes: [0], preferred: true });
  assert.deepEqual(
    a.steps[0]!.hints.map((h) => h.provider),
    ['devices', 'cpu', 'memory'],
  );
});

test('a TopologyAffinityError rejection shows as a Failed pod and in the event ring', async () => {
  await assert.rejects(
    sim.admitPod(guaranteed('too-wide', { [GPU]: '5', cpu: '2', memory: '1Gi' })),
    /Resources cannot be allocated with Topology locality/,
  );
  const event = await waitFor('admission-rejected event', () =>
    snap().events.find((e) => e.kind === 'admission-rejected' && e.pod?.name === 'too-wide'),
  );
  assert.equal(event.pod!.namespace, 'default');
  assert.equal(
    event.message,
    'TopologyAffinityError: Pod was rejected: Resources cannot be allocated with Topology locality',
  );
  const pod = await waitFor(
    'rejected pod decision',
    () => snap().pods['default/too-wide']?.topology?.admission && snap().pods['default/too-wide'],
  );
  assert.equal(pod.phase, 'Failed');
  assert.equal(pod.reason, 'TopologyAffinityError');
  assert.equal(pod.topology!.admission!.result, 'rejected');
  // One event per rejection, however often the pod is seen again.
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(snap().events.filter((e) => e.kind === 'admission-rejected').length, 1);
});

test('a pod that needs both NUMA nodes is spread, and says so', async () => {
  await sim.admitPod({
    metadata: { name: 'wide', namespace: 'default' },
    spec: { containers: [{ name: 'main', resources: { limits: { [GPU]: '5' } } }] },
  });
  const pod = await waitFor('spread pod', () => {
    const p = snap().pods['default/wide'];
    return p?.numaAlignment.verdict === 'spread' && p.topology?.admission ? p : null;
  });
  assert.deepEqual(pod.numaAlignment.numaNodes, [0, 1]);
  assert.match(
    pod.numaAlignment.reason,
    /^spread over 2 NUMA nodes \(0, 1\): plugboard\.example\/gpu ×5 on 0, 1$/,
  );
  assert.deepEqual(pod.topology!.admission!.steps[0]!.merged, { numaNodes: [0, 1], preferred: true });
});

test('try to place: a dry run through the gateway, then an admission that needs the token', async () => {
  const pod = guaranteed('placed', { [GPU]: '1', cpu: '2', memory: '1Gi' });
  const res = await fetch(`${gw.url}/api/v1/placement`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(pod),
  });
  assert.equal(res.status, 200);
  const preview = (await res.json()) as AdmissionView;
  assert.equal(preview.source, 'prediction', 'the gateway predicts; it does not ask kubelet-sim');
  assert.equal(preview.dryRun, true);
  assert.equal(preview.result, 'admitted');
  assert.equal(snap().pods['default/placed'], undefined, 'a preview admits nothing');
  // What would another policy say? (restricted admits it; pod scope + single-numa-node too, on one node)
  const whatIf = await fetch(
    `${gw.url}/api/v1/placement?topologyManagerPolicy=single-numa-node&topologyManagerScope=pod`,
    { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(pod) },
  );
  assert.equal(whatIf.status, 200);
  const other = (await whatIf.json()) as AdmissionView;
  assert.deepEqual([other.policy, other.scope, other.dryRun], ['single-numa-node', 'pod', true]);
  assert.equal(snap().topology!.kubelet!.topologyManagerPolicy, 'restricted', 'the node keeps its policy');
  const badPolicy = await fetch(`${gw.url}/api/v1/placement?topologyManagerPolicy=strict`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(pod),
  });
  assert.equal(badPolicy.status, 400);

  const anon = await fetch(`${gw.url}/api/v1/pods`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(pod),
  });
  assert.equal(anon.status, 401);
  const ok = await fetch(`${gw.url}/api/v1/pods`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(pod),
  });
  assert.equal(ok.status, 201);
  await waitFor(
    'admitted pod in the snapshot',
    () => snap().pods['default/placed']?.containers[0]?.cpuIds.length,
  );
  const again = await fetch(`${gw.url}/api/v1/pods`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(pod),
  });
  assert.equal(again.status, 409);
  assert.equal(again.headers.get('content-type'), 'application/problem+json');
  assert.match(((await again.json()) as { detail: string }).detail, /already exists/);
  const bad = await fetch(`${gw.url}/api/v1/placement`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ spec: {} }),
  });
  assert.equal(bad.status, 422);
});

test('against an API server without the kubelet-sim control API there are no decisions and no admit path', async () => {
  const seen: { url?: string; authorization?: string }[] = [];
  const server: Server = createServer((req, res) => {
    seen.push({ url: req.url, authorization: req.headers.authorization });
    res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const states: (string | null)[] = [];
  const { url: apiUrl, request } = apiServerRequestTo(server, 'secret-token');
  const control = new KubeletControl({
    server: apiUrl,
    request,
    intervalMs: 50,
    timeoutMs: 1000,
    logger: silent,
    onState: (state, reason) => states.push(state ? 'state' : reason),
  });
  control.start();
  try {
    await waitFor('unavailable', () => states.length > 0);
    assert.deepEqual(states, ['the Kubernetes API server is not a kubelet-sim (no /control/v1/state)']);
    // Through the kubeconfig: its credentials go along (client-node applies them per request).
    assert.deepEqual(seen[0], {
      url: '/control/v1/state?view=admissions',
      authorization: 'Bearer secret-token',
    });
    await assert.rejects(control.admit({}), /admitting a pod needs kubelet-sim's control API/);
  } finally {
    control.stop();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('API server requests: the kubeconfig credentials on every request, one kept-alive connection, closed on close()', async () => {
  const connections = new Set<number>();
  const auth: (string | undefined)[] = [];
  const server: Server = createServer((req, res) => {
    connections.add(req.socket.remotePort!);
    auth.push(req.headers.authorization);
    res.writeHead(200, { 'content-type': 'application/json', etag: '"v1"' }).end('{"ok":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { request } = apiServerRequestTo(server, 'secret-token');
  try {
    for (let i = 0; i < 3; i++) {
      const res = await request('GET', '/control/v1/state?view=admissions', { timeoutMs: 2000 });
      assert.deepEqual(res, {
        status: 200,
        contentType: 'application/json',
        etag: '"v1"',
        body: '{"ok":true}',
      });
    }
    assert.deepEqual(auth, ['Bearer secret-token', 'Bearer secret-token', 'Bearer secret-token']);
    assert.equal(connections.size, 1, 'one connection for every poll');
  } finally {
    request.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});
