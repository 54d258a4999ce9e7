// PodResources v1 over its Unix socket: List and Get match the admissions, GetAllocatableResources
// lists healthy devices only with the node's CPUs and memory, the kubelet's error text for an
// unknown pod, and the token-bucket rate limit.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { credentials, status, type ServiceError } from '@grpc/grpc-js';
import { podresources } from '@plugboard/proto';
import { pod, startFixture, waitFor, type SimFixture } from './helpers.js';
import { TestPlugin } from './test-plugin.js';

const GPU = 'example.com/gpu';

function client(socket: string): podresources.PodResourcesListerClient {
  return new podresources.PodResourcesListerClient(`unix://${socket}`, credentials.createInsecure());
}

type Callback<Res> = (err: ServiceError | null, res: Res) => void;
const promised = <Res>(run: (cb: Callback<Res>) => unknown): Promise<Res> =>
  new Promise((resolve, reject) => run((err, res) => (err ? reject(err) : resolve(res))));
const listOn = (c: podresources.PodResourcesListerClient) =>
  promised<podresources.ListPodResourcesResponse>((cb) => c.list({}, cb));

describe('PodResources v1', () => {
  let f: SimFixture;
  let plugin: TestPlugin;
  let c: podresources.PodResourcesListerClient;
  before(async () => {
    f = await startFixture({
      numaNodes: 2,
      cpus: 4,
      memoryPerNumaBytes: 2 ** 30,
      podResourcesRateLimit: false,
    });
    plugin = new TestPlugin({
      dir: f.dir,
      resourceName: GPU,
      devices: [{ id: 'g0', numa: [0] }, { id: 'g1', numa: [1] }, { id: 'g2', numa: [1] }, { id: 'g3' }],
    });
    await plugin.start();
    await plugin.register();
    await waitFor(() => f.sim.state().resources[GPU]?.allocatable === 4, 'devices');
    c = client(f.sim.podResourcesSocket);
  });
  after(async () => {
    c.close();
    await plugin.stop();
    await f.cleanup();
  });

  const list = () => listOn(c);
  const allocatable = () =>
    promised<podresources.AllocatableResourcesResponse>((cb) => c.getAllocatableResources({}, cb));
  const get = (podName: string, podNamespace = 'default') =>
    promised<podresources.GetPodResourcesResponse>((cb) => c.get({ podName, podNamespace }, cb));

  test('List reports every active pod with its devices per NUMA node, exclusive CPUs and memory', async () => {
    await f.sim.admitPod(pod('pair', { [GPU]: 2 }));
    await f.sim.admitPod({
      metadata: { name: 'pinned', namespace: 'team-a' },
      spec: {
        containers: [
          { name: 'work', resources: { limits: { cpu: '2', memory: '256Mi', [GPU]: '1' } } },
          { name: 'side', resources: { limits: { cpu: '500m', memory: '64Mi' } } },
        ],
      },
    });
    const res = await list();
    const byName = new Map(res.podResources.map((p) => [`${p.namespace}/${p.name}`, p]));
    assert.deepEqual([...byName.keys()].sort(), ['default/pair', 'team-a/pinned']);

    const pair = byName.get('default/pair')!;
    assert.equal(pair.containers.length, 1);
    const pairDevices = f.sim.state().pods.find((p) => p.name === 'pair')!.containers[0]!.devices[GPU]!;
    assert.deepEqual(pairDevices, ['g1', 'g2'], 'both on NUMA node 1');
    assert.deepEqual(pair.containers[0]!.devices, [
      { resourceName: GPU, deviceIds: ['g1', 'g2'], topology: { nodes: [{ ID: 1 }] } },
    ]);
    assert.deepEqual(pair.containers[0]!.cpuIds, []);

    const pinned = byName.get('team-a/pinned')!;
    assert.deepEqual(
      pinned.containers.map((x) => x.name),
      ['work', 'side'],
    );
    const work = pinned.containers[0]!;
    assert.deepEqual(work.devices, [
      { resourceName: GPU, deviceIds: ['g0'], topology: { nodes: [{ ID: 0 }] } },
    ]);
    assert.deepEqual(work.cpuIds, [0, 1], 'the two CPUs of NUMA node 0, where its device is');
    assert.deepEqual(work.memory, [
      { memoryType: 'memory', size: 256 * 2 ** 20, topology: { nodes: [{ ID: 0 }] } },
    ]);
    const side = pinned.containers[1]!;
    assert.deepEqual(side.devices, []);
    assert.deepEqual(side.cpuIds, [], 'a fractional CPU request stays in the shared pool');
  });

  test("Get answers one pod, and an unknown pod with the kubelet's error", async () => {
    const res = await get('pinned', 'team-a');
    assert.equal(res.podResources?.name, 'pinned');
    assert.deepEqual(res.podResources?.containers[0]?.devices[0]?.deviceIds, ['g0']);
    // A terminated pod is still known by name; it no longer holds devices.
    await assert.rejects(f.sim.admitPod(pod('rejected', { [GPU]: 9 })));
    const rejected = await get('rejected');
    assert.deepEqual(
      rejected.podResources?.containers.map((x) => [x.name, x.devices]),
      [['main', []]],
    );
    assert.ok(!(await list()).podResources.some((p) => p.name === 'rejected'), 'List shows active pods only');
    await assert.rejects(get('nope'), (err: ServiceError) => {
      assert.equal(err.code, status.UNKNOWN);
      assert.equal(err.details, 'pod nope in namespace default not found');
      return true;
    });
  });

  test("GetAllocatableResources lists healthy devices only, with the node's CPUs and memory", async () => {
    const all = await allocatable();
    assert.deepEqual(
      all.devices.map((d) => [d.deviceIds.join(), d.topology?.nodes.map((n) => n.ID) ?? null]).sort(),
      [
        ['g0', [0]],
        ['g1', [1]],
        ['g2', [1]],
        ['g3', null],
      ],
    );
    assert.deepEqual(all.cpuIds, [0, 1, 2, 3]);
    assert.deepEqual(all.memory, [
      { memoryType: 'memory', size: 2 ** 30, topology: { nodes: [{ ID: 0 }] } },
      { memoryType: 'memory', size: 2 ** 30, topology: { nodes: [{ ID: 1 }] } },
    ]);
    plugin.setHealth('g3', 'Unhealthy');
    await waitFor(() => f.sim.state().resources[GPU]?.allocatable === 3, 'fault');
    const after = await allocatable();
    assert.deepEqual(after.devices.map((d) => d.deviceIds[0]).sort(), ['g0', 'g1', 'g2']);
  });

  test('deleted pods disappear from List; a kubelet restart recreates the socket', async () => {
    await f.sim.deletePod('default', 'pair');
    assert.deepEqual(
      (await list()).podResources.map((p) => p.name),
      ['pinned'],
    );
    // Another identity (inode, birth and change times: an inode number alone can be reused) is
    // the socket removed and created again.
    const identity = () => {
      const s = statSync(f.sim.podResourcesSocket, { bigint: true });
      return `${s.ino}:${s.birthtimeNs}:${s.ctimeNs}`;
    };
    const before = identity();
    await f.sim.restart();
    assert.notEqual(identity(), before, 'the socket is removed and created again');
    c.close();
    c = client(f.sim.podResourcesSocket);
    const res = await list();
    assert.deepEqual(
      res.podResources[0]?.containers[0]?.devices[0]?.deviceIds,
      ['g0'],
      'allocations survive the restart',
    );
  });
});

describe('PodResources rate limit', () => {
  let f: SimFixture;
  before(async () => {
    f = await startFixture();
  });
  after(() => f.cleanup());

  test("the kubelet's default token bucket (100 qps, burst 10) rejects a burst with RESOURCE_EXHAUSTED", async () => {
    const c = client(f.sim.podResourcesSocket);
    try {
      const results = await Promise.allSettled(Array.from({ length: 40 }, () => listOn(c)));
      const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.ok(results.length - rejected.length >= 10, 'the burst passes');
      assert.ok(rejected.length > 0, 'calls beyond the bucket are rejected');
      for (const r of rejected) {
        const err = r.reason as ServiceError;
        assert.equal(err.code, status.RESOURCE_EXHAUSTED);
        assert.equal(err.details, 'rejected by rate limit');
      }
    } finally {
      c.close();
    }
  });
});
