// ResourceSlice publication against the fake API server (real HTTP through @kubernetes/client-node):
// the stored objects checked field by field against resource.k8s.io/v1, generations and in-place
// updates on device changes, stale slices deleted, backoff on API errors and conflicts, repair of
// slices deleted by someone else, sharing as consumable capacity, PCI devices, and taints whose
// timeAdded the API server stamps (upstream's rules: the stored time kept, no rewrite loop).
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import {
  DraDriver,
  kubeApiFromKubeConfig,
  PathsSource,
  SimulatedSource,
  SysfsPciSource,
  type DeviceSource,
  type DraDriverOptions,
  type DraKubeApi,
  type ResourceSlice,
  type SourceDevice,
} from '../../src/index.js';
import type { DeviceTaint, SliceDevice } from '../../src/dra/api-types.js';
import { ResourceSlicePublisher, type PublishedEvent } from '../../src/dra/resource-slices.js';
import { allocatedClaim, FakeApiServer } from './fake-api-server.js';

const DRIVER = 'gpu.plugboard.example';
const NODE = 'node-a';
const FIXTURE_SYS = new URL('../fixtures/sys', import.meta.url).pathname;

/** A device source whose device list the test sets. */
class ListSource implements DeviceSource {
  readonly kind = 'test-list';
  #devices: SourceDevice[];
  #listeners = new Set<() => void>();
  constructor(count: number) {
    this.#devices = ListSource.devices(count);
  }
  static devices(count: number): SourceDevice[] {
    return Array.from({ length: count }, (_, i) => ({
      id: `gpu-${i}`,
      health: 'Healthy' as const,
      reason: null,
      numaNodes: [i % 2],
      deviceNodes: [],
    }));
  }
  set(devices: SourceDevice[]): void {
    this.#devices = devices;
    for (const l of this.#listeners) l();
  }
  start(): Promise<void> {
    return Promise.resolve();
  }
  list(): readonly SourceDevice[] {
    return this.#devices;
  }
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }
}

describe('DRA driver: ResourceSlices', () => {
  let api: FakeApiServer;
  let kube: DraKubeApi;
  let root: string;
  let nodeUid: string;
  const drivers: DraDriver[] = [];

  async function startDriver(options: Partial<DraDriverOptions> = {}): Promise<DraDriver> {
    const d = new DraDriver({
      driverName: DRIVER,
      nodeName: NODE,
      source: new SimulatedSource({ count: 4, numaNodes: [0, 1], idPrefix: 'gpu' }),
      kube,
      pluginsDir: join(root, 'plugins'),
      pluginsRegistryDir: join(root, 'registry'),
      cdiDir: join(root, 'cdi'),
      publishRetry: { initialMs: 20, maxMs: 200 },
      ...options,
    });
    drivers.push(d);
    await d.start();
    return d;
  }

  const published = (d: DraDriver): Promise<unknown> =>
    once(d, 'slices-published', { signal: AbortSignal.timeout(5000) });

  /** Resolves once the driver's first publication is done (now or after the next one). */
  async function firstPublication(d: DraDriver): Promise<void> {
    if (d.publication().lastPublishedAt === null) await published(d);
  }

  const SLICES = '/apis/resource.k8s.io/v1/resourceslices';

  /**
   * Resolves once `count` more lists of the slices have reached the API server. Syncs run one at a
   * time, so the sync before the last of them, and any write it made, is over by then.
   */
  function listed(count: number): Promise<void> {
    return new Promise((resolve) => {
      let seen = 0;
      const onRequest = (r: { method: string; path: string }) => {
        if (r.method !== 'GET' || r.path !== SLICES || ++seen < count) return;
        api.off('request', onRequest);
        resolve();
      };
      api.on('request', onRequest);
    });
  }

  const taintsOn = (device: string): DeviceTaint[] | undefined =>
    api
      .slicesOf(DRIVER)
      .flatMap((s) => s.spec.devices ?? [])
      .find((x) => x.name === device)?.taints;

  before(async () => {
    api = await FakeApiServer.start();
    nodeUid = api.addNode(NODE);
    kube = await kubeApiFromKubeConfig({ kubeconfig: api.kubeconfigPath });
  });

  after(async () => {
    await api.stop();
  });

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'pb-dra-slices-'));
    api.slices.clear();
  });

  afterEach(async () => {
    for (const d of drivers.splice(0)) await d.stop();
    api.now = () => new Date();
    await rm(root, { recursive: true, force: true });
  });

  it('publishes the node pool as resource.k8s.io/v1, field by field', async () => {
    const from = api.requests.length;
    const d = await startDriver({
      attributes: () => ({
        model: { string: 'PB-100' },
        'plugboard.example/generation': { version: '2.1.0' },
      }),
      capacity: () => ({ memory: '80Gi' }),
    });
    await firstPublication(d);
    const [slice] = api.slicesOf(DRIVER);
    assert.ok(slice);
    assert.equal(slice.apiVersion, 'resource.k8s.io/v1');
    assert.equal(slice.kind, 'ResourceSlice');
    assert.equal(slice.metadata.generateName, `00000-${DRIVER}-${NODE}-`);
    assert.match(
      slice.metadata.name ?? '',
      new RegExp(`^00000-${DRIVER.replaceAll('.', '\\.')}-${NODE}-[0-9a-f]{5}$`),
    );
    assert.deepEqual(slice.metadata.ownerReferences, [
      { apiVersion: 'v1', kind: 'Node', name: NODE, uid: nodeUid, controller: true },
    ]);
    assert.deepEqual(slice.spec.driver, DRIVER);
    assert.deepEqual(slice.spec.nodeName, NODE);
    assert.deepEqual(slice.spec.pool, { name: NODE, generation: 1, resourceSliceCount: 1 });
    assert.deepEqual(
      Object.keys(slice.spec).sort(),
      ['devices', 'driver', 'nodeName', 'pool'],
      'exactly one of nodeName/nodeSelector/allNodes',
    );
    assert.deepEqual(
      slice.spec.devices,
      [0, 1, 2, 3].map((i) => ({
        name: `gpu-${i}`,
        attributes: {
          id: { string: `gpu-${i}` },
          'resource.kubernetes.io/numaNode': { int: i < 2 ? 0 : 1 },
          model: { string: 'PB-100' },
          'plugboard.example/generation': { version: '2.1.0' },
        },
        capacity: { memory: { value: '80Gi' } },
      })),
    );
    // One Node read (for the owner UID), one list with the field selectors, one create.
    const requests = api.requests.slice(from);
    assert.deepEqual(
      requests.map(
        (r) => `${r.method} ${r.path}${r.query.size ? `?${decodeURIComponent(r.query.toString())}` : ''}`,
      ),
      [
        `GET /api/v1/nodes/${NODE}`,
        `GET /apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.driver=${DRIVER},spec.nodeName=${NODE}`,
        'POST /apis/resource.k8s.io/v1/resourceslices',
      ],
    );
    assert.deepEqual(d.publication().requests, { getNode: 1, list: 1, create: 1, update: 0, delete: 0 });
    assert.equal(d.publication().generation, 1);
    assert.deepEqual(d.publication().slices, [slice.metadata.name]);
  });

  it('keeps the slices in sync: one changed slice updated in place, growth bumps the generation, shrinking deletes', async () => {
    const source = new ListSource(4);
    const d = await startDriver({ source });
    await firstPublication(d);
    const first = api.slicesOf(DRIVER)[0]!;

    // A device goes away: the one slice is updated in place, same generation, same object.
    let done = published(d);
    source.set(ListSource.devices(4).slice(0, 3));
    await done;
    let [slice] = api.slicesOf(DRIVER);
    assert.equal(slice!.metadata.uid, first.metadata.uid);
    assert.deepEqual(slice!.spec.pool, { name: NODE, generation: 1, resourceSliceCount: 1 });
    assert.deepEqual(
      slice!.spec.devices?.map((x) => x.name),
      ['gpu-0', 'gpu-1', 'gpu-2'],
    );

    // 130 devices need two slices of at most 128: generation 2, first slice updated, one created.
    done = published(d);
    source.set(ListSource.devices(130));
    await done;
    let slices = api.slicesOf(DRIVER);
    assert.deepEqual(
      slices.map((s) => [s.metadata.name?.slice(0, 5), s.spec.pool, s.spec.devices?.length]),
      [
        ['00000', { name: NODE, generation: 2, resourceSliceCount: 2 }, 128],
        ['00001', { name: NODE, generation: 2, resourceSliceCount: 2 }, 2],
      ],
    );
    assert.equal(slices[0]!.metadata.uid, first.metadata.uid, 'updated in place');

    // Back to 10: the second slice is deleted, the first updated under a new generation.
    done = published(d);
    const before = api.requests.length;
    source.set(ListSource.devices(10));
    await done;
    slices = api.slicesOf(DRIVER);
    assert.deepEqual(
      slices.map((s) => [s.spec.pool, s.spec.devices?.length]),
      [
        // One slice deleted and one updated: at most one update, so the generation stays (as upstream).
        [{ name: NODE, generation: 2, resourceSliceCount: 1 }, 10],
      ],
    );
    // No list: the publisher knows what it wrote.
    assert.deepEqual(
      api.requests.slice(before).map((r) => r.method),
      ['DELETE', 'PUT'],
    );
    const deleteBody = api.requests.slice(before)[0]!.body as { preconditions?: object };
    assert.ok(
      deleteBody.preconditions &&
        'uid' in deleteBody.preconditions &&
        'resourceVersion' in deleteBody.preconditions,
    );

    // No devices at all: still one, empty, slice (the driver runs and has nothing).
    done = published(d);
    source.set([]);
    await done;
    [slice] = api.slicesOf(DRIVER);
    assert.deepEqual([api.slicesOf(DRIVER).length, slice!.spec.devices ?? []], [1, []]);
  });

  it('deletes stale slices of an earlier run: older generation, other pool, foreign names', async () => {
    const stale = (name: string, pool: string, generation: number): ResourceSlice => ({
      metadata: { name, uid: `uid-${name}`, resourceVersion: '1' },
      spec: {
        driver: DRIVER,
        nodeName: NODE,
        pool: { name: pool, generation, resourceSliceCount: 2 },
        devices: [],
      },
    });
    for (const s of [
      stale(`00000-${DRIVER}-${NODE}-old00`, NODE, 7),
      stale(`00001-${DRIVER}-${NODE}-old01`, NODE, 6),
      stale(`random-name-from-an-old-release`, NODE, 7),
      stale(`00000-${DRIVER}-${NODE}-pool2`, 'renamed-pool', 1),
    ]) {
      api.slices.set(s.metadata.name!, s);
    }
    // Another driver's slice on the same node is not ours to touch.
    api.slices.set('nic', {
      metadata: { name: 'nic', uid: 'uid-nic', resourceVersion: '1' },
      spec: {
        driver: 'nic.example.com',
        nodeName: NODE,
        pool: { name: NODE, generation: 1, resourceSliceCount: 1 },
      },
    });
    const d = await startDriver();
    await firstPublication(d);
    const ours = api.slicesOf(DRIVER);
    assert.deepEqual(
      ours.map((s) => [s.metadata.name, s.spec.pool.generation, s.spec.devices?.length]),
      [[`00000-${DRIVER}-${NODE}-old00`, 7, 4]],
      'the matching slice is updated in place (one update keeps the generation), every other one is deleted',
    );
    assert.ok(api.slices.has('nic'));
  });

  it('backs off exponentially on API errors, never throws, and publishes once the API answers', async () => {
    api.failNext(3, 503, (r) => r.path.startsWith('/apis/resource.k8s.io/v1/resourceslices'));
    const errors: { error: string; retryInMs: number }[] = [];
    const d = new DraDriver({
      driverName: DRIVER,
      nodeName: NODE,
      source: new SimulatedSource({ count: 2, idPrefix: 'gpu' }),
      kube,
      pluginsDir: join(root, 'plugins'),
      pluginsRegistryDir: join(root, 'registry'),
      cdiDir: join(root, 'cdi'),
      publishRetry: { initialMs: 20, maxMs: 200 },
    });
    drivers.push(d);
    d.on('slices-error', (e) => errors.push(e));
    const done = published(d);
    await d.start();
    await done;
    assert.deepEqual(
      errors.map((e) => e.retryInMs),
      [20, 40, 80],
    );
    assert.match(
      errors[0]!.error,
      /^list ResourceSlices \(spec\.driver=gpu\.plugboard\.example,spec\.nodeName=node-a\): HTTP 503: injected failure$/,
    );
    assert.equal(d.publication().error, null);
    assert.equal(api.slicesOf(DRIVER).length, 1);
  });

  it('lists again after a conflict (someone else wrote the slice) and updates the new version', async () => {
    const d = await startDriver({ taints: { effect: 'NoSchedule' } });
    await firstPublication(d);
    const theirs = api.slicesOf(DRIVER)[0]!;
    api.slices.set(theirs.metadata.name!, {
      ...theirs,
      metadata: { ...theirs.metadata, resourceVersion: 'theirs' },
    });
    const conflict = once(d, 'slices-error');
    const done = published(d);
    d.injectFault('gpu-0', 'test');
    const [event] = (await conflict) as [{ error: string }];
    assert.match(event.error, /^update ResourceSlice 00000-.*: HTTP 409: Operation cannot be fulfilled/);
    await done;
    const [slice] = api.slicesOf(DRIVER);
    assert.equal(slice!.metadata.uid, theirs.metadata.uid);
    assert.equal(slice!.spec.devices![0]!.taints?.[0]?.value, 'fault');
  });

  it('publishes again after someone else deletes its slice (a restarted kubelet wipes them), at the resync', async () => {
    const d = await startDriver({ resyncMs: 100 });
    await firstPublication(d);
    const again = published(d);
    api.slices.delete(api.slicesOf(DRIVER)[0]!.metadata.name!);
    await again;
    assert.equal(api.slicesOf(DRIVER).length, 1);
    assert.deepEqual(
      api.slicesOf(DRIVER)[0]!.spec.devices!.map((x) => x.name),
      ['gpu-0', 'gpu-1', 'gpu-2', 'gpu-3'],
    );
  });

  it('shares a device between claims as consumable capacity when replicas > 1', async () => {
    const d = await startDriver({ replicas: 4 });
    await firstPublication(d);
    const device = api.slicesOf(DRIVER)[0]!.spec.devices![0]!;
    assert.equal(device.allowMultipleAllocations, true);
    assert.deepEqual(device.capacity, {
      shares: { value: '4', requestPolicy: { default: '1', validRange: { min: '1', max: '4' } } },
    });
    // Two claims on the same device, each with its share ID, both prepared.
    const { TestDraKubelet } = await import('./test-dra-kubelet.js');
    const kubelet = new TestDraKubelet(join(root, 'registry'));
    kubelet.start();
    try {
      await kubelet.registered(DRIVER);
      const a = allocatedClaim({
        name: 'a',
        node: NODE,
        results: [{ driver: DRIVER, pool: NODE, device: 'gpu-0', shareID: 's-a' }],
      });
      const b = allocatedClaim({
        name: 'b',
        node: NODE,
        results: [{ driver: DRIVER, pool: NODE, device: 'gpu-0', shareID: 's-b' }],
      });
      api.putClaim(a);
      api.putClaim(b);
      const res = await kubelet.prepare(DRIVER, [
        { namespace: 'default', name: 'a', uid: a.metadata.uid },
        { namespace: 'default', name: 'b', uid: b.metadata.uid },
      ]);
      assert.deepEqual(
        [a, b].map((c) => {
          const dev = res.claims[c.metadata.uid]!.devices[0]!;
          return [res.claims[c.metadata.uid]!.error, dev.shareId, dev.cdiDeviceIds];
        }),
        [
          ['', 's-a', [`k8s.${DRIVER}/device=${a.metadata.uid}-gpu-0-s-a`]],
          ['', 's-b', [`k8s.${DRIVER}/device=${b.metadata.uid}-gpu-0-s-b`]],
        ],
      );
      assert.equal(d.preparedClaims().length, 2);
    } finally {
      kubelet.stop();
    }
  });

  it('publishes device-path devices by DNS-label name, without the excluded ones', async () => {
    const devDir = join(root, 'dev');
    await mkdir(devDir, { recursive: true });
    for (const name of ['ttyUSB0', 'ttyUSB1', 'ttyUSB2']) await writeFile(join(devDir, name), '');
    const d = await startDriver({
      source: new PathsSource({ patterns: [join(devDir, 'ttyUSB*')], numaNodes: [1] }),
      exclude: ['ttyUSB1'],
    });
    await firstPublication(d);
    const devices = api.slicesOf(DRIVER)[0]!.spec.devices!;
    assert.deepEqual(
      devices.map((x) => [
        (x.attributes!.id as { string: string }).string,
        x.attributes!['resource.kubernetes.io/numaNode'],
      ]),
      [
        ['ttyUSB0', { int: 1 }],
        ['ttyUSB2', { int: 1 }],
      ],
    );
    for (const device of devices) assert.match(device.name, /^ttyusb[02]-[0-9a-f]{6}$/);
    // A fault by the device's ID or by its ResourceSlice name is the same fault.
    d.injectFault(devices[1]!.name, 'unplugged?');
    assert.deepEqual([...d.faults().keys()], ['ttyUSB2']);
  });

  it('gives PCI devices DNS-label names and the standard pciBusID attribute', async () => {
    const d = await startDriver({
      source: new SysfsPciSource({ root: FIXTURE_SYS, vendor: '0x10de' }),
      pciBusIdFromId: true,
    });
    await firstPublication(d);
    const slices = api.slicesOf(DRIVER);
    const devices = slices[0]!.spec.devices!;
    assert.equal(devices.length, 3, JSON.stringify(slices));
    for (const device of devices) {
      const id = (device.attributes!.id as { string: string }).string;
      assert.match(id, /^0000:[0-9a-f]{2}:00\.0$/);
      assert.match(device.name, /^0000-[0-9a-f]{2}-00-0-[0-9a-f]{6}$/);
      assert.deepEqual(device.attributes!['resource.kubernetes.io/pciBusID'], { string: id });
    }
    // numa_node -1 (no NUMA information): no numaNode attribute rather than a made-up one.
    assert.deepEqual(
      devices.map((x) => x.attributes!['resource.kubernetes.io/numaNode']),
      [{ int: 0 }, { int: 1 }, undefined],
    );
  });

  it("taints (driver-wide and a fault's): the slice written once, not again on resync, the stored timeAdded kept when another device changes", async () => {
    const d = await startDriver({ taints: { effect: 'NoExecute' }, faultTaints: true, resyncMs: 50 });
    await firstPublication(d);
    let done = published(d);
    d.injectFault('gpu-0', 'ECC error', { taint: 'NoExecute' });
    await done;
    const stored = taintsOn('gpu-0');
    assert.deepEqual(
      stored?.map((t) => [t.key, t.value, t.effect]),
      [
        [`${DRIVER}/unhealthy`, 'fault', 'NoExecute'],
        [`${DRIVER}/fault`, 'simulated', 'NoExecute'],
      ],
    );
    for (const t of stored ?? [])
      assert.match(t.timeAdded ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.000)?Z$/);
    const updates = d.publication().requests.update;
    const from = api.requests.length;
    // Two more lists: the resync after the first of them found the slice in sync.
    await listed(2);
    assert.equal(api.count('PUT', SLICES, from), 0, 'no rewrite on resync');
    assert.equal(d.publication().requests.update, updates);

    // Another device changes a while later: one PUT, gpu-0's taints as stored.
    api.now = () => new Date(Date.now() + 3_600_000);
    const before = api.requests.length;
    done = published(d);
    d.injectFault('gpu-1', 'overheating');
    await done;
    assert.equal(api.count('PUT', SLICES, before), 1);
    assert.deepEqual(taintsOn('gpu-0'), stored);
    assert.equal(taintsOn('gpu-1')?.[0]?.value, 'fault');
  });

  it('a taint published without timeAdded keeps the time the API server stamped: no rewrite on resync, the same time on the next write', async () => {
    // The publisher as upstream's controller: the driver's devices with taints left without a time.
    const ecc: DeviceTaint = { key: 'example.com/ecc', value: 'uncorrectable', effect: 'NoExecute' };
    const maintenance: DeviceTaint = {
      key: 'example.com/maintenance',
      effect: 'NoSchedule',
      timeAdded: '2026-01-01T00:00:00Z',
    };
    let devices: SliceDevice[] = [
      { name: 'gpu-0', taints: [ecc] },
      { name: 'gpu-1', taints: [maintenance] },
      { name: 'gpu-2' },
    ];
    const events: PublishedEvent[] = [];
    let onPublished = (): void => undefined;
    const publishedOnce = () =>
      new Promise<void>((resolve) => {
        onPublished = resolve;
      });
    const publisher = new ResourceSlicePublisher({
      driverName: DRIVER,
      nodeName: NODE,
      poolName: NODE,
      kube,
      devices: () => devices,
      maxDevicesPerSlice: 64,
      logger: pino({ level: 'silent' }),
      resyncMs: 50,
      onPublished: (e) => {
        events.push(e);
        onPublished();
      },
    });
    api.now = () => new Date('2026-01-01T00:00:00Z');
    let done = publishedOnce();
    publisher.start();
    try {
      await done;
      assert.deepEqual(taintsOn('gpu-0'), [{ ...ecc, timeAdded: '2026-01-01T00:00:00Z' }], 'stamped');

      // The API server's clock moves on; resyncs find the slice in sync (upstream: DevicesDeepEqual).
      api.now = () => new Date('2026-01-01T01:00:00Z');
      let from = api.requests.length;
      await listed(2);
      assert.equal(api.count('PUT', SLICES, from), 0, 'no rewrite on resync');
      assert.equal(events.length, 1);

      // A time within a second of the stored one is that one (deviceTaintEqual): still in sync.
      devices = [
        devices[0]!,
        { name: 'gpu-1', taints: [{ ...maintenance, timeAdded: '2026-01-01T00:00:00.600Z' }] },
        devices[2]!,
      ];
      from = api.requests.length;
      publisher.update();
      await listed(1);
      assert.equal(api.count('PUT', SLICES, from), 0, 'rounding is no change');

      // Another device changes: one PUT carrying gpu-0's stored time (copyTaintTimeAdded), not a new
      // stamp; a new taint on gpu-2 gets the API server's current time.
      devices = [devices[0]!, devices[1]!, { name: 'gpu-2', taints: [ecc] }];
      from = api.requests.length;
      done = publishedOnce();
      publisher.update();
      await done;
      assert.equal(api.count('PUT', SLICES, from), 1);
      assert.deepEqual(taintsOn('gpu-0'), [{ ...ecc, timeAdded: '2026-01-01T00:00:00Z' }], 'the stored time');
      assert.deepEqual(taintsOn('gpu-1'), [maintenance]);
      assert.deepEqual(taintsOn('gpu-2'), [{ ...ecc, timeAdded: '2026-01-01T01:00:00Z' }], 'a new stamp');
      from = api.requests.length;
      await listed(2);
      assert.equal(api.count('PUT', SLICES, from), 0, 'in sync again');

      // The taint changes (its value): a new time, as upstream (only key, value and effect all equal keep it).
      api.now = () => new Date('2026-01-01T02:00:00Z');
      devices = [{ name: 'gpu-0', taints: [{ ...ecc, value: 'corrected' }] }, devices[1]!, devices[2]!];
      done = publishedOnce();
      publisher.update();
      await done;
      assert.equal(taintsOn('gpu-0')?.[0]?.timeAdded, '2026-01-01T02:00:00Z');
    } finally {
      await publisher.stop();
    }
  });
});
