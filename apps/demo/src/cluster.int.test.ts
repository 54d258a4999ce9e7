// The demo cluster from examples/demo.yaml, started in-process: node shapes, workloads really
// allocated by the plugins, a fault through a gateway's REST API reaching the kubelet, clean stop.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { socketsUnder } from '@plugboard/local-cluster';
import { startDemoCluster, waitForSnapshot, type DemoCluster, type SimDemoNode } from './cluster.js';
import { loadDemo } from './demo-config.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const GPU = 'plugboard.example/gpu';

describe('demo cluster (examples/demo.yaml)', () => {
  let stateDir: string;
  let cluster: DemoCluster<SimDemoNode>;

  before(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'plugboard-demo-test-'));
    cluster = await startDemoCluster({
      demo: loadDemo(join(repoRoot, 'examples/demo.yaml')),
      stateDir,
      logger: pino({ level: 'silent' }),
    });
  });
  after(async () => {
    await cluster?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('runs the four node shapes with their device-plugin counts and dra-node its DRA driver', () => {
    const counts = Object.fromEntries(
      cluster.nodes.map((n) => [
        n.name,
        Object.fromEntries(
          Object.entries(n.gateway.model.snapshot().resources).map(([r, s]) => [r, s.kubelet.capacity]),
        ),
      ]),
    );
    assert.deepEqual(counts, {
      'gpu-node-a': { [GPU]: 8, 'plugboard.example/nic-vf': 16 },
      'gpu-node-b': { [GPU]: 16 },
      'edge-node': { 'plugboard.example/serial': 4 },
      'dra-node': { 'plugboard.example/nic-vf': 8 },
    });
    const dra = cluster.node('dra-node').gateway.model.snapshot().dra;
    assert.equal(dra?.drivers['gpu.plugboard.example']?.counts.published, 8);
    const a = cluster.node('gpu-node-a').gateway.model.snapshot();
    assert.deepEqual(Object.keys(a.numa.nodes).sort(), ['0', '1']);
    assert.equal(
      cluster
        .node('gpu-node-a')
        .sim.state()
        .node.numaNodes.flatMap((n) => n.cpus).length,
      64,
    );
    const b = cluster.node('gpu-node-b').gateway.model.snapshot();
    assert.equal(b.resources[GPU]!.replicas, 4);
  });

  it('admits the workloads through the kubelet-sim, leaving free devices', () => {
    const a = cluster.node('gpu-node-a').gateway.model.snapshot();
    assert.deepEqual(
      { allocated: a.resources[GPU]!.kubelet.allocated, free: a.resources[GPU]!.kubelet.free },
      { allocated: 7, free: 1 },
    );
    assert.equal(a.pods['ml/train-aligned']!.numaAlignment.verdict, 'aligned');
    assert.equal(a.pods['ml/batch-spread']!.numaAlignment.verdict, 'spread');
    const b = cluster.node('gpu-node-b').gateway.model.snapshot();
    assert.equal(b.resources[GPU]!.kubelet.allocated, 4);
    const edge = cluster.node('edge-node').gateway.model.snapshot();
    assert.equal(edge.resources['plugboard.example/serial']!.kubelet.free, 2);
    // dra-node's claims (details in dra.int.test.ts): four claims, one left Pending by the scheduler,
    // one the scheduler made for render/frame-dra's `limits: {plugboard.example/gpu: 1}`.
    const claims = Object.values(cluster.node('dra-node').gateway.model.snapshot().dra?.claims ?? {});
    assert.deepEqual(claims.map((c) => c.phase).sort(), ['pending', 'prepared', 'prepared', 'prepared']);
    assert.ok(
      claims.some(
        (c) => /^render\/frame-dra-extended-resources-\w{5}$/.test(c.key) && c.phase === 'prepared',
      ),
      claims.map((c) => c.key).join(', '),
    );
    assert.deepEqual(
      cluster.pending.map((p) => p.pod),
      ['ml/train-wide'],
    );
  });

  it('a fault posted to a gateway lowers the kubelet-sim allocatable and flags the pod; clearing restores it', async () => {
    const node = cluster.node('gpu-node-a');
    const before = node.gateway.model.snapshot();
    const [key, device] = Object.entries(before.devices).find(
      ([, d]) => d.resource === GPU && d.allocation?.pod === 'batch-spread',
    )!;
    const res = await fetch(`${node.gateway.url}/api/v1/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ resource: GPU, deviceId: device.id, reason: 'demo test' }),
    });
    assert.equal(res.status, 201);
    const { id } = (await res.json()) as { id: string };
    // The plugin's ListAndWatch reaches the kubelet-sim; the gateway sees the kubelet's allocatable on its next poll.
    const faulted = await waitForSnapshot(
      node.gateway,
      (s) => s.devices[key]!.health === 'Unhealthy' && s.resources[GPU]!.kubelet.allocatable === 7,
      'the fault to reach the kubelet allocatable',
      10_000,
    );
    assert.equal(faulted.pods['ml/batch-spread']!.affectedByUnhealthyDevice, true);
    assert.equal(node.sim.state().resources[GPU]!.allocatable, 7);
    const del = await fetch(`${node.gateway.url}/api/v1/faults/${id}`, { method: 'DELETE' });
    assert.equal(del.status, 204);
    await waitForSnapshot(
      node.gateway,
      (s) => s.devices[key]!.health === 'Healthy' && s.resources[GPU]!.kubelet.allocatable === 8,
      'the heal',
      10_000,
    );
    assert.equal(node.sim.state().resources[GPU]!.allocatable, 8);
  });

  it('stops without leaving a socket behind', async () => {
    assert.ok(
      socketsUnder(stateDir).length >= 6,
      'kubelet, PodResources and plugin sockets exist while running',
    );
    await cluster.stop();
    assert.deepEqual(socketsUnder(stateDir), []);
  });
});
