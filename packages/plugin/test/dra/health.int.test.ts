// Device health to the kubelet (NodeWatchResources, v1 and v1alpha1) and faults as device taints in
// the ResourceSlice: a fault from the overlay and a health change of the device source each reach
// the health stream at once with their message; with taints on, the device's slice entry gets a
// NoSchedule or NoExecute taint while it is unhealthy and loses it when it heals.
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { drahealthv1, drahealthv1alpha1 } from '@plugboard/proto';
import {
  DraDriver,
  kubeApiFromKubeConfig,
  SimulatedSource,
  type DraDriverEvents,
  type DraDriverOptions,
  type DraKubeApi,
} from '../../src/index.js';
import { FakeApiServer } from './fake-api-server.js';
import { healthOf, TestDraKubelet } from './test-dra-kubelet.js';

const DRIVER = 'gpu.plugboard.example';
const NODE = 'node-a';
const { HEALTHY, UNHEALTHY } = drahealthv1.HealthStatus;

describe('DRA driver: health and taints', () => {
  let api: FakeApiServer;
  let kube: DraKubeApi;
  let root: string;
  let kubelet: TestDraKubelet;
  let source: SimulatedSource;
  let driver: DraDriver;

  async function start(options: Partial<DraDriverOptions> = {}): Promise<void> {
    source = new SimulatedSource({ count: 4, numaNodes: [0, 1], idPrefix: 'gpu' });
    driver = new DraDriver({
      driverName: DRIVER,
      nodeName: NODE,
      source,
      kube,
      pluginsDir: join(root, 'plugins'),
      pluginsRegistryDir: join(root, 'registry'),
      cdiDir: join(root, 'cdi'),
      ...options,
    });
    const published = once(driver, 'slices-published');
    await driver.start();
    await published;
    kubelet = new TestDraKubelet(join(root, 'registry'));
    kubelet.start();
    await kubelet.registered(DRIVER);
  }

  const taintsOf = (name: string): unknown =>
    api
      .slicesOf(DRIVER)
      .flatMap((s) => s.spec.devices ?? [])
      .find((d) => d.name === name)?.taints;

  before(async () => {
    api = await FakeApiServer.start();
    api.addNode(NODE);
    kube = await kubeApiFromKubeConfig({ kubeconfig: api.kubeconfigPath });
  });

  after(async () => {
    await api.stop();
  });

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'pb-dra-health-'));
    api.slices.clear();
  });

  afterEach(async () => {
    kubelet.stop();
    await driver.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('streams the complete device list on open, with the pool and device names of the ResourceSlice', async () => {
    await start({ healthCheckTimeoutSeconds: 45 });
    const before = Math.floor(Date.now() / 1000);
    const devices = await kubelet.health(DRIVER, (d) => d.length === 4);
    assert.deepEqual(
      devices.map((d) => ({ ...d, lastUpdatedTime: 0 })),
      [0, 1, 2, 3].map((i) => ({
        device: { poolName: NODE, deviceName: `gpu-${i}` },
        health: HEALTHY,
        lastUpdatedTime: 0,
        healthCheckTimeoutSeconds: 45,
        message: '',
      })),
    );
    for (const d of devices) assert.ok(Math.abs(d.lastUpdatedTime - before) <= 2, 'a Unix time in seconds');
    assert.equal(driver.healthStreams, 1);
    // What the kubelet was last sent: the same list, kept until the next send.
    assert.deepEqual(
      driver.healthReported()?.map((d) => [d.id, d.health]),
      [0, 1, 2, 3].map((i) => [`gpu-${i}`, 'Healthy']),
    );
    const closed = once(driver, 'health-streams') as Promise<DraDriverEvents['health-streams']>;
    kubelet.stop();
    assert.equal((await closed)[0].streams, 0);
    assert.equal(driver.healthReported(), null, 'no stream open: the kubelet holds nothing');
  });

  it('sends a fault from the overlay at once with its message, and the heal', async () => {
    await start();
    await kubelet.health(DRIVER, (d) => d.length === 4);
    driver.injectFault('gpu-2', 'simulated: ECC errors');
    let devices = await kubelet.health(DRIVER, (d) => healthOf(d, 'gpu-2')?.health === UNHEALTHY);
    assert.equal(devices.length, 4, 'always the complete list');
    assert.equal(healthOf(devices, 'gpu-2')?.message, 'simulated: ECC errors');
    assert.deepEqual(
      devices.filter((d) => d.health === HEALTHY).map((d) => d.device?.deviceName),
      ['gpu-0', 'gpu-1', 'gpu-3'],
    );
    assert.deepEqual(
      driver.faults(),
      new Map([['gpu-2', { reason: 'simulated: ECC errors', present: true, taint: null }]]),
    );
    driver.clearFault('gpu-2');
    devices = await kubelet.health(DRIVER, (d) => healthOf(d, 'gpu-2')?.health === HEALTHY);
    assert.equal(healthOf(devices, 'gpu-2')?.message, '');
    // No taints unless configured.
    assert.equal(taintsOf('gpu-2'), undefined);
  });

  it('sends a health change of the device source, and serves the v1alpha1 service with the same messages', async () => {
    await start();
    const client = new drahealthv1alpha1.DRAResourceHealthClient(
      `unix://${driver.socketPath}`,
      credentials.createInsecure(),
    );
    const stream = client.nodeWatchResources({});
    stream.on('error', () => undefined);
    try {
      const [first] = (await once(stream, 'data')) as [drahealthv1alpha1.NodeWatchResourcesResponse];
      assert.equal(first.devices.length, 4);
      const next = once(stream, 'data');
      source.markUnhealthy('gpu-0', 'XID 79: fallen off the bus');
      const [msg] = (await next) as [drahealthv1alpha1.NodeWatchResourcesResponse];
      const gpu0 = msg.devices.find((d) => d.device?.deviceName === 'gpu-0');
      assert.deepEqual(
        [gpu0?.health, gpu0?.message],
        [drahealthv1alpha1.HealthStatus.UNHEALTHY, 'XID 79: fallen off the bus'],
      );
      const v1 = await kubelet.health(DRIVER, (d) => healthOf(d, 'gpu-0')?.health === UNHEALTHY);
      assert.equal(healthOf(v1, 'gpu-0')?.message, 'XID 79: fallen off the bus');
    } finally {
      stream.cancel();
      client.close();
    }
  });

  it('turns a fault into a NoSchedule taint in the ResourceSlice and removes it on heal (same generation)', async () => {
    await start({ taints: { effect: 'NoSchedule' } });
    const generation = api.slicesOf(DRIVER)[0]!.spec.pool.generation;
    let published = once(driver, 'slices-published');
    const before = new Date();
    driver.injectFault('gpu-1', 'simulated: ECC errors');
    await published;
    const taints = taintsOf('gpu-1') as { key: string; value: string; effect: string; timeAdded: string }[];
    assert.deepEqual(
      taints.map((t) => ({ ...t, timeAdded: undefined })),
      [{ key: `${DRIVER}/unhealthy`, value: 'fault', effect: 'NoSchedule', timeAdded: undefined }],
    );
    // timeAdded: the fault's time, RFC 3339 in whole seconds as the API server stores it
    // (client-node writes a Date with a .000 fraction).
    assert.match(taints[0]!.timeAdded, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.000)?Z$/);
    assert.ok(Math.abs(Date.parse(taints[0]!.timeAdded) - before.getTime()) < 2000);
    assert.equal(taintsOf('gpu-0'), undefined);
    assert.equal(api.slicesOf(DRIVER)[0]!.spec.pool.generation, generation, 'updated in place');

    published = once(driver, 'slices-published');
    driver.clearFault('gpu-1');
    await published;
    assert.equal(taintsOf('gpu-1'), undefined);
    assert.equal(api.slicesOf(DRIVER)[0]!.spec.pool.generation, generation);
  });

  it("puts a fault's own taint on the device (key <driver>/fault) beside the driver-wide one, and takes it off on heal", async () => {
    await start({ taints: { effect: 'NoSchedule' }, faultTaints: true });
    const generation = api.slicesOf(DRIVER)[0]!.spec.pool.generation;
    let published = once(driver, 'slices-published');
    driver.injectFault('gpu-2', 'simulated: lost', { taint: 'NoExecute' });
    await published;
    const keys = (): unknown =>
      ((taintsOf('gpu-2') as { key: string; value: string; effect: string }[] | undefined) ?? []).map(
        ({ key, value, effect }) => `${key}=${value}:${effect}`,
      );
    assert.deepEqual(keys(), [`${DRIVER}/unhealthy=fault:NoSchedule`, `${DRIVER}/fault=simulated:NoExecute`]);
    assert.equal(driver.faults().get('gpu-2')?.taint, 'NoExecute');
    assert.equal(driver.faultTaintKey, `${DRIVER}/fault`);

    // The same fault again without a taint: health unchanged, only the fault's taint goes.
    published = once(driver, 'slices-published');
    driver.injectFault('gpu-2', 'simulated: lost');
    await published;
    assert.deepEqual(keys(), [`${DRIVER}/unhealthy=fault:NoSchedule`]);

    published = once(driver, 'slices-published');
    driver.injectFault('gpu-2', 'simulated: lost', { taint: 'NoSchedule' });
    await published;
    assert.deepEqual(keys(), [
      `${DRIVER}/unhealthy=fault:NoSchedule`,
      `${DRIVER}/fault=simulated:NoSchedule`,
    ]);
    published = once(driver, 'slices-published');
    driver.clearFault('gpu-2');
    await published;
    assert.equal(taintsOf('gpu-2'), undefined);
    assert.equal(api.slicesOf(DRIVER)[0]!.spec.pool.generation, generation, 'updated in place');
  });

  it('a fault taint without the faultTaints option is refused and changes nothing', async () => {
    await start();
    assert.throws(
      () => driver.injectFault('gpu-1', 'x', { taint: 'NoSchedule' }),
      /not started with faultTaints/,
    );
    assert.equal(driver.faults().size, 0);
    assert.equal(taintsOf('gpu-1'), undefined);
  });

  it('taints a device its source reports unhealthy with NoExecute (evict) and a key of its own', async () => {
    await start({ taints: { effect: 'NoExecute', key: 'plugboard.example/device-unhealthy' } });
    const published = once(driver, 'slices-published');
    source.markUnhealthy('gpu-3', 'thermal shutdown');
    await published;
    assert.deepEqual(
      (taintsOf('gpu-3') as { key: string; value: string; effect: string }[]).map(
        ({ key, value, effect }) => ({
          key,
          value,
          effect,
        }),
      ),
      [{ key: 'plugboard.example/device-unhealthy', value: 'unhealthy', effect: 'NoExecute' }],
    );
    const devices = await kubelet.health(DRIVER, (d) => healthOf(d, 'gpu-3')?.health === UNHEALTHY);
    assert.equal(healthOf(devices, 'gpu-3')?.message, 'thermal shutdown');
  });

  it('re-sends the list as a heartbeat within a third of health_check_timeout_seconds', async () => {
    await start({ healthCheckTimeoutSeconds: 3 });
    await kubelet.health(DRIVER, (d) => d.length === 4);
    const count = kubelet.plugin(DRIVER).healthUpdates.length;
    const started = Date.now();
    // The kubelet counts a device Unknown once its last report is older than the timeout.
    await kubelet.health(DRIVER, () => kubelet.plugin(DRIVER).healthUpdates.length > count, 3000);
    assert.ok(Date.now() - started < 3000);
    assert.ok(
      kubelet
        .plugin(DRIVER)
        .healthUpdates.at(-1)!
        .every((d) => d.health === HEALTHY),
    );
  });
});
