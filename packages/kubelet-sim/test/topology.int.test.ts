// The Topology Manager end to end, over a real plugin socket, the API slice and PodResources:
// single-numa-node and restricted reject (TopologyAffinityError, pod Failed, Warning event) a
// pod that best-effort admits spread over both NUMA nodes; container vs pod scope; CPUs and
// memory follow the devices' NUMA node; reserved CPUs and hugepages in PodResources; the dry-run
// placement endpoints; the sysfs fixture.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { credentials, type ServiceError } from '@grpc/grpc-js';
import { podresources } from '@plugboard/proto';
import { KubeletSimError, type KubeletSimOptions, type AdmissionDecision } from '../src/index.js';
import { pod, startFixture, waitFor, type SimFixture } from './helpers.js';
import { TestPlugin } from './test-plugin.js';

const GPU = 'example.com/gpu';
const GIB = 2 ** 30;
/** 8 GPUs: g0-g3 on NUMA node 0, g4-g7 on node 1. */
const GPUS = Array.from({ length: 8 }, (_, i) => ({ id: `g${i}`, numa: [i < 4 ? 0 : 1] }));

interface Node {
  f: SimFixture;
  plugin: TestPlugin;
  stop: () => Promise<void>;
}

async function startNode(opts: Partial<KubeletSimOptions>): Promise<Node> {
  const f = await startFixture({ numaNodes: 2, cpus: 16, memoryPerNumaBytes: 8 * GIB, ...opts });
  const plugin = new TestPlugin({ dir: f.dir, resourceName: GPU, devices: GPUS });
  await plugin.start();
  await plugin.register();
  await waitFor(() => f.sim.state().resources[GPU]?.allocatable === 8, 'devices');
  return {
    f,
    plugin,
    stop: async () => {
      await plugin.stop();
      await f.cleanup();
    },
  };
}

const guaranteed = (name: string, containers: Record<string, Record<string, string>>) => ({
  metadata: { name, namespace: 'default' },
  spec: {
    containers: Object.entries(containers).map(([c, limits]) => ({ name: c, resources: { limits } })),
  },
});

const stateOf = (n: Node, name: string) => n.f.sim.state().pods.find((p) => p.name === name)!;
const devicesOf = (n: Node, name: string, container = 'main') =>
  stateOf(n, name).containers.find((c) => c.name === container)!.devices[GPU] ?? [];

/** Takes g0-g2 (node 0) and g4-g6 (node 1): only g3 and g7 stay free, one on each node. */
async function fragment(n: Node): Promise<void> {
  await n.f.sim.admitPod(pod('hold-a', { [GPU]: 3 }));
  await n.f.sim.admitPod(pod('hold-b', { [GPU]: 3 }));
  assert.deepEqual(devicesOf(n, 'hold-a'), ['g0', 'g1', 'g2']);
  assert.deepEqual(devicesOf(n, 'hold-b'), ['g4', 'g5', 'g6']);
}

describe('Topology Manager policies on a fragmented node (one free GPU per NUMA node)', () => {
  test('best-effort admits a 2-GPU pod spread over both NUMA nodes', async () => {
    const n = await startNode({ topologyManagerPolicy: 'best-effort' });
    try {
      await fragment(n);
      // A dry run may ask what another policy would say, without changing the node's.
      const whatIf = async (query: string) => {
        const res = await fetch(`${n.f.sim.url}/control/v1/placement?${query}`, {
          method: 'POST',
          body: JSON.stringify(pod('batch', { [GPU]: 2 })),
        });
        return { status: res.status, body: (await res.json()) as AdmissionDecision & { detail?: string } };
      };
      const strict = await whatIf('topologyManagerPolicy=single-numa-node&topologyManagerScope=pod');
      assert.deepEqual(
        [strict.body.policy, strict.body.scope, strict.body.result, strict.body.reason],
        ['single-numa-node', 'pod', 'rejected', 'TopologyAffinityError'],
      );
      assert.equal((await n.f.sim.dryRunPod(pod('batch', { [GPU]: 2 }))).result, 'admitted');
      const bad = await whatIf('topologyManagerPolicy=strict');
      assert.equal(bad.status, 400);
      assert.match(
        bad.body.detail ?? '',
        /topologyManagerPolicy: expected one of none, best-effort, restricted, single-numa-node, got "strict"/,
      );
      await n.f.sim.admitPod(pod('batch', { [GPU]: 2 }));
      assert.deepEqual(devicesOf(n, 'batch'), ['g3', 'g7']);
      const decision = stateOf(n, 'batch').admission!;
      assert.equal(decision.policy, 'best-effort');
      assert.equal(decision.result, 'admitted');
      assert.deepEqual(decision.steps[0]!.hints[0], {
        provider: 'devices',
        resource: GPU,
        hints: [{ numaNodes: [0, 1], preferred: false }],
      });
      assert.deepEqual(decision.steps[0]!.merged, { numaNodes: [0, 1], preferred: false });
      assert.deepEqual(decision.containers[0]!.devices[0]!.numaNodes, { g3: [0], g7: [1] });
    } finally {
      await n.stop();
    }
  });

  for (const policy of ['single-numa-node', 'restricted'] as const) {
    test(`${policy} rejects the same pod with TopologyAffinityError`, async () => {
      const n = await startNode({ topologyManagerPolicy: policy });
      try {
        await fragment(n);
        const allocateCalls = n.plugin.calls.allocate.length;
        await assert.rejects(n.f.sim.admitPod(pod('batch', { [GPU]: 2 })), (err: KubeletSimError) => {
          assert.ok(err instanceof KubeletSimError);
          assert.equal(err.code, 'TopologyAffinityError');
          assert.equal(err.reason, 'TopologyAffinityError');
          assert.equal(err.message, 'Resources cannot be allocated with Topology locality');
          return true;
        });
        assert.equal(n.plugin.calls.allocate.length, allocateCalls, 'the plugin is never asked to Allocate');
        assert.deepEqual(n.f.sim.state().resources[GPU]!.allocated, ['g0', 'g1', 'g2', 'g4', 'g5', 'g6']);

        const res = await fetch(`${n.f.sim.url}/api/v1/namespaces/default/pods/batch`);
        const obj = (await res.json()) as { status: { phase: string; reason: string; message: string } };
        assert.equal(obj.status.phase, 'Failed');
        assert.equal(obj.status.reason, 'TopologyAffinityError');
        assert.equal(
          obj.status.message,
          'Pod was rejected: Resources cannot be allocated with Topology locality',
        );
        const events = (await (
          await fetch(
            `${n.f.sim.url}/api/v1/namespaces/default/events?fieldSelector=reason%3DTopologyAffinityError`,
          )
        ).json()) as { items: { type: string; involvedObject: { name: string }; message: string }[] };
        assert.deepEqual(
          events.items.map((e) => [e.type, e.involvedObject.name, e.message]),
          [['Warning', 'batch', 'Resources cannot be allocated with Topology locality']],
        );

        const decision = stateOf(n, 'batch').admission!;
        assert.equal(decision.result, 'rejected');
        assert.equal(decision.reason, 'TopologyAffinityError');
        assert.equal(decision.steps[0]!.admit, false);
        assert.deepEqual(
          decision.steps[0]!.merged,
          policy === 'restricted'
            ? { numaNodes: [0, 1], preferred: false }
            : { numaNodes: null, preferred: false },
        );

        // The control API answers the kubelet's reason as problem+json.
        const post = await fetch(`${n.f.sim.url}/control/v1/pods`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(pod('batch-2', { [GPU]: 2 })),
        });
        assert.equal(post.status, 409);
        assert.equal(post.headers.get('content-type'), 'application/problem+json');
        assert.equal(((await post.json()) as { reason: string }).reason, 'TopologyAffinityError');
        // An aligned pod still fits.
        await n.f.sim.admitPod(pod('small', { [GPU]: 1 }));
        assert.deepEqual(devicesOf(n, 'small'), ['g3']);
      } finally {
        await n.stop();
      }
    });
  }
});

describe('Topology Manager scopes', () => {
  const twoContainers = {
    metadata: { name: 'pair', namespace: 'default' },
    spec: {
      containers: [
        { name: 'a', resources: { limits: { [GPU]: '3' } } },
        { name: 'b', resources: { limits: { [GPU]: '3' } } },
      ],
    },
  };

  test('container scope aligns each container on its own NUMA node', async () => {
    const n = await startNode({
      topologyManagerPolicy: 'single-numa-node',
      topologyManagerScope: 'container',
    });
    try {
      await n.f.sim.admitPod(twoContainers);
      assert.deepEqual(devicesOf(n, 'pair', 'a'), ['g0', 'g1', 'g2']);
      assert.deepEqual(devicesOf(n, 'pair', 'b'), ['g4', 'g5', 'g6']);
      const steps = stateOf(n, 'pair').admission!.steps;
      assert.deepEqual(
        steps.map((s) => [s.container, s.merged]),
        [
          ['a', { numaNodes: [0], preferred: true }],
          ['b', { numaNodes: [1], preferred: true }],
        ],
      );
    } finally {
      await n.stop();
    }
  });

  test('pod scope merges the whole pod once: single-numa-node rejects 6 GPUs, restricted admits them on both nodes', async () => {
    const single = await startNode({
      topologyManagerPolicy: 'single-numa-node',
      topologyManagerScope: 'pod',
    });
    try {
      await assert.rejects(single.f.sim.admitPod(twoContainers), { code: 'TopologyAffinityError' });
      const steps = stateOf(single, 'pair').admission!.steps;
      assert.equal(steps.length, 1);
      assert.equal(steps[0]!.container, null);
      assert.deepEqual(
        steps[0]!.hints[0]!.hints,
        [{ numaNodes: [0, 1], preferred: true }],
        'pod-level request: 6 GPUs',
      );
    } finally {
      await single.stop();
    }
    const restricted = await startNode({ topologyManagerPolicy: 'restricted', topologyManagerScope: 'pod' });
    try {
      await restricted.f.sim.admitPod(twoContainers);
      const decision = stateOf(restricted, 'pair').admission!;
      assert.deepEqual(decision.steps[0]!.merged, { numaNodes: [0, 1], preferred: true });
      assert.deepEqual(
        decision.containers.map((c) => c.affinity),
        [
          [0, 1],
          [0, 1],
        ],
      );
    } finally {
      await restricted.stop();
    }
  });
});

describe('CPUs and memory follow the devices; PodResources, dry runs and sysfs', () => {
  let n: Node;
  let c: podresources.PodResourcesListerClient;
  before(async () => {
    n = await startNode({
      topologyManagerPolicy: 'single-numa-node',
      reservedCpus: [0, 1],
      hugepagesPerNumaBytes: { 'hugepages-2Mi': GIB },
      podResourcesRateLimit: false,
    });
    c = new podresources.PodResourcesListerClient(
      `unix://${n.f.sim.podResourcesSocket}`,
      credentials.createInsecure(),
    );
    await n.f.sim.admitPod(pod('hold', { [GPU]: 4 }));
  });
  after(async () => {
    c.close();
    await n.stop();
  });
  const call = <Res>(run: (cb: (err: ServiceError | null, res: Res) => void) => unknown) =>
    new Promise<Res>((resolve, reject) => run((err, res) => (err ? reject(err) : resolve(res))));

  test("a Guaranteed pod's CPUs, memory and hugepages come from its device's NUMA node", async () => {
    await n.f.sim.admitPod(
      guaranteed('pinned', { main: { [GPU]: '1', cpu: '4', memory: '2Gi', 'hugepages-2Mi': '512Mi' } }),
    );
    const main = stateOf(n, 'pinned').containers[0]!;
    assert.deepEqual(main.devices[GPU], ['g4'], 'node 0 is full');
    assert.deepEqual(main.cpuIds, [8, 9, 10, 11], 'two whole cores of node 1');
    assert.deepEqual(main.memory, [
      { type: 'memory', bytes: 2 * GIB, numaNodes: [1] },
      { type: 'hugepages-2Mi', bytes: 512 * 2 ** 20, numaNodes: [1] },
    ]);
    const decision = stateOf(n, 'pinned').admission!;
    assert.deepEqual(
      decision.steps[0]!.hints.map((h) => [
        h.provider,
        h.resource,
        h.hints?.filter((x) => x.preferred).map((x) => x.numaNodes),
      ]),
      [
        ['devices', GPU, [[1]]],
        ['cpu', 'cpu', [[0], [1]]],
        ['memory', 'memory', [[0], [1]]],
        ['memory', 'hugepages-2Mi', [[0], [1]]],
      ],
    );

    const list = await call<podresources.ListPodResourcesResponse>((cb) => c.list({}, cb));
    const pr = list.podResources.find((p) => p.name === 'pinned')!.containers[0]!;
    assert.deepEqual(pr.cpuIds.map(Number), [8, 9, 10, 11]);
    assert.deepEqual(
      pr.memory.map((m) => [m.memoryType, Number(m.size), m.topology?.nodes.map((x) => x.ID)]),
      [
        ['memory', 2 * GIB, [1]],
        ['hugepages-2Mi', 512 * 2 ** 20, [1]],
      ],
    );
  });

  test('GetAllocatableResources leaves reserved CPUs out and lists hugepages per NUMA node', async () => {
    const all = await call<podresources.AllocatableResourcesResponse>((cb) =>
      c.getAllocatableResources({}, cb),
    );
    assert.deepEqual(all.cpuIds.map(Number), [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    assert.deepEqual(
      all.memory.map((m) => [m.memoryType, Number(m.size), m.topology?.nodes.map((x) => x.ID)]),
      [
        ['memory', 8 * GIB, [0]],
        ['hugepages-2Mi', GIB, [0]],
        ['memory', 8 * GIB, [1]],
        ['hugepages-2Mi', GIB, [1]],
      ],
    );
    const node = (await (await fetch(`${n.f.sim.url}/api/v1/nodes/${n.f.sim.nodeName}`)).json()) as {
      status: { capacity: Record<string, string>; allocatable: Record<string, string> };
    };
    assert.equal(node.status.capacity.cpu, '16');
    assert.equal(node.status.allocatable.cpu, '14', 'reserved CPUs come off allocatable');
    assert.equal(node.status.capacity['hugepages-2Mi'], '2097152Ki');
  });

  test('a dry run shows where a pod would land, or why not, and changes nothing', async () => {
    const before = n.f.sim.state();
    const calls = { allocate: n.plugin.calls.allocate.length, preferred: n.plugin.calls.preferred.length };
    const fits = (await (
      await fetch(`${n.f.sim.url}/control/v1/placement`, {
        method: 'POST',
        body: JSON.stringify(guaranteed('try', { main: { [GPU]: '2', cpu: '2', memory: '1Gi' } })),
      })
    ).json()) as AdmissionDecision;
    assert.equal(fits.dryRun, true);
    assert.equal(fits.result, 'admitted');
    assert.deepEqual(fits.containers[0]!.affinity, [1]);
    assert.deepEqual(fits.containers[0]!.devices[0]!.deviceIds, ['g5', 'g6']);
    assert.equal(fits.containers[0]!.cpuIds.length, 2);

    const res = await fetch(`${n.f.sim.url}/control/v1/pods?dryRun=All`, {
      method: 'POST',
      body: JSON.stringify(pod('try', { [GPU]: 4 })),
    });
    assert.equal(res.status, 200);
    const refused = (await res.json()) as AdmissionDecision;
    assert.equal(refused.result, 'rejected');
    assert.equal(refused.reason, 'TopologyAffinityError');
    assert.equal(refused.message, 'Resources cannot be allocated with Topology locality');

    assert.deepEqual(n.f.sim.state(), before, 'no pod, device, CPU or memory changed');
    assert.deepEqual(
      { allocate: n.plugin.calls.allocate.length, preferred: n.plugin.calls.preferred.length },
      calls,
      'no plugin RPC',
    );
    const bad = await fetch(`${n.f.sim.url}/control/v1/placement`, {
      method: 'POST',
      body: '{"metadata":{}}',
    });
    assert.equal(bad.status, 422);
  });

  test('the sysfs fixture describes the NUMA nodes and SMT siblings like Linux does', () => {
    const root = n.f.sim.sysfsRoot;
    assert.equal(n.f.sim.state().node.sysfsRoot, root);
    const read = (p: string) => readFileSync(join(root, p), 'utf8');
    assert.equal(read('devices/system/node/online'), '0-1\n');
    assert.equal(read('devices/system/node/node1/cpulist'), '8-15\n');
    assert.match(read('devices/system/node/node0/meminfo'), /^Node 0 MemTotal:\s+9437184 kB$/m);
    assert.equal(read('devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages'), '512\n');
    assert.equal(read('devices/system/cpu/cpu9/topology/thread_siblings_list'), '8-9\n');
    assert.equal(read('devices/system/cpu/cpu9/topology/core_id'), '4\n');
    assert.equal(
      readlinkSync(join(root, 'devices/system/cpu/cpu9/node1')),
      join('..', '..', 'node', 'node1'),
    );
  });
});
