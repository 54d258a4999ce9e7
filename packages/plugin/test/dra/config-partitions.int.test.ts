// examples/dra-partitions.yaml as an operator runs it: parsed by the config, started by
// startDraDrivers against the test DRA kubelet and the fake API server, both drivers registered
// and the ResourceSlices they publish checked: the partitioned driver's counter sets in a slice of
// their own and its partitions (a whole, halves, quarters) consuming them, and the shared driver's
// device with allowMultipleAllocations and the memory capacity's requestPolicy.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  kubeApiFromKubeConfig,
  parsePluginConfig,
  startDraDrivers,
  type DraRuntime,
} from '../../src/index.js';
import { FakeApiServer } from './fake-api-server.js';
import { TestDraKubelet } from './test-dra-kubelet.js';

const EXAMPLE = new URL('../../../../examples/dra-partitions.yaml', import.meta.url).pathname;
const NODE = 'node-a';
const PARTS = 'part.plugboard.example';
const SHARE = 'share.plugboard.example';

describe('DRA drivers from examples/dra-partitions.yaml', () => {
  let api: FakeApiServer;
  let dir: string;
  let kubelet: TestDraKubelet;
  let dra: DraRuntime;

  before(async () => {
    api = await FakeApiServer.start();
    api.addNode(NODE);
    dir = await mkdtemp(join(tmpdir(), 'pb-dra-parts-'));
    const registry = join(dir, 'plugins_registry');
    await mkdir(registry, { recursive: true });
    kubelet = new TestDraKubelet(registry);
    kubelet.start();
    const config = parsePluginConfig(await readFile(EXAMPLE, 'utf8'), EXAMPLE);
    const registered = Promise.all([kubelet.registered(PARTS), kubelet.registered(SHARE)]);
    dra = await startDraDrivers(config, {
      nodeName: NODE,
      kube: await kubeApiFromKubeConfig({ kubeconfig: api.kubeconfigPath }),
      pluginsDir: join(dir, 'plugins'),
      pluginsRegistryDir: registry,
      cdiDir: join(dir, 'cdi'),
    });
    await registered;
  });

  after(async () => {
    await dra?.stop();
    kubelet?.stop();
    await api?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('publishes the counter sets in a slice of their own and partitions consuming them', async () => {
    const slices = await api.waitFor(() => {
      const s = api.slicesOf(PARTS);
      return s.length === 2 && s.every((x) => x.spec.pool.resourceSliceCount === 2) ? s : null;
    }, 30_000);
    const counters = slices.find((s) => s.spec.sharedCounters);
    const devices = slices.find((s) => s.spec.devices);
    assert.equal(counters?.spec.devices, undefined, 'the counter slice has no devices');
    assert.equal(devices?.spec.sharedCounters, undefined, 'the device slice has no counters');
    assert.deepEqual(counters?.spec.sharedCounters, [
      { name: 'gpu-0', counters: { memory: { value: '40Gi' } } },
      { name: 'gpu-1', counters: { memory: { value: '40Gi' } } },
    ]);
    const published = devices?.spec.devices ?? [];
    assert.deepEqual(
      published.filter((d) => d.name.startsWith('gpu-0-')).map((d) => d.name),
      ['whole', 'half-0', 'half-1', 'quarter-0', 'quarter-1', 'quarter-2', 'quarter-3'].map(
        (p) => `gpu-0-${p}`,
      ),
    );
    assert.equal(published.length, 14);
    const half = published.find((d) => d.name === 'gpu-1-half-1');
    assert.deepEqual(half?.consumesCounters, [
      { counterSet: 'gpu-1', counters: { memory: { value: '20Gi' } } },
    ]);
    assert.deepEqual(half?.attributes?.partition, { string: 'half' });
    const quarter = published.find((d) => d.name === 'gpu-0-quarter-2');
    assert.deepEqual(quarter?.consumesCounters?.[0]?.counters, { memory: { value: '10Gi' } });
  });

  it('publishes the shared device with allowMultipleAllocations and the requestPolicy', async () => {
    const [slice] = await api.waitFor(() => {
      const s = api.slicesOf(SHARE);
      return s.length === 1 && s[0]!.spec.devices?.length === 1 ? s : null;
    }, 30_000);
    const [device] = slice!.spec.devices!;
    assert.equal(device?.name, 'gpu-0');
    assert.equal(device?.allowMultipleAllocations, true);
    assert.deepEqual(device?.capacity, {
      memory: {
        value: '40Gi',
        requestPolicy: { default: '10Gi', validRange: { min: '10Gi', step: '10Gi' } },
      },
    });
    assert.equal(device?.consumesCounters, undefined);
  });
});
