// Extended resources backed by DRA (DRAExtendedResource, GA in 1.37) end to end on kubelet-sim, with
// the raw DRA driver (test/dra-driver.ts) and a device plugin side by side: a DeviceClass maps
// `example.com/gpu` (and every class its implicit `deviceclass.resource.kubernetes.io/<class>`);
// the scheduler's special claim serves an init container and an app container through one request
// (upstream's reuse rule), the device plugin keeps serving the name it advertises, a pod that does
// not fit stays Pending until devices free up, and the API server refuses a bad
// `extendedResourceName`.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { KubeConfig, ResourceV1Api } from '@kubernetes/client-node';
import type { PodExtendedResourceClaimStatus } from '@plugboard/k8s-api';
import { startFixture, waitFor, type SimFixture } from './helpers.js';
import { TestDraDriver } from './dra-driver.js';
import { TestPlugin } from './test-plugin.js';

const DRIVER = 'gpu.example.com';
const NODE = 'sim-node';
const GPU = 'example.com/gpu';
const FPGA = 'example.com/fpga';

type Obj = Record<string, unknown>;
const get = (o: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((x, k) => (x as Obj | undefined)?.[k], o);

type ExtStatus = PodExtendedResourceClaimStatus;

describe('extended resources backed by DRA', () => {
  let f: SimFixture;
  let api: ResourceV1Api;
  let driver: TestDraDriver;
  let plugin: TestPlugin;

  const podState = (name: string) => f.sim.state().pods.find((p) => p.name === name);

  before(async () => {
    f = await startFixture({ syncFrequencyMs: 200, draWipingDelayMs: 60_000 }, { registry: true });
    const kc = new KubeConfig();
    kc.loadFromFile(f.sim.kubeconfigPath);
    api = kc.makeApiClient(ResourceV1Api);
    for (const [name, extendedResourceName] of [
      ['gpu', GPU],
      ['fpga', FPGA],
    ] as const)
      await api.createDeviceClass({
        body: {
          metadata: { name },
          spec: {
            selectors: [{ cel: { expression: `device.driver == "${DRIVER}"` } }],
            extendedResourceName,
          },
        },
      });
    driver = new TestDraDriver({
      driver: DRIVER,
      registryDir: f.registry,
      pluginsDir: join(f.stateDir, 'plugins'),
      kubeconfigPath: f.sim.kubeconfigPath,
      nodeName: NODE,
      devices: ['gpu-0', 'gpu-1', 'gpu-2'].map((name) => ({ name, attributes: {} })),
    });
    await driver.start();
    // A device plugin serves example.com/fpga on this node: the scheduler leaves it to the plugin.
    plugin = new TestPlugin({ dir: f.dir, resourceName: FPGA, devices: [{ id: 'fpga-0' }] });
    await plugin.start();
    await plugin.register();
    await waitFor(() => f.sim.state().resources[FPGA]?.allocatable === 1, 'the fpga plugin');
    await waitFor(async () => {
      const items = (await api.listResourceSlice({ fieldSelector: `spec.driver=${DRIVER}` })).items;
      return items.some((s) => (s.spec.devices?.length ?? 0) === 3);
    }, 'the driver’s slice');
  });
  after(async () => {
    driver.stop();
    await plugin.stop();
    await f.cleanup();
  });

  test('one request serves an init container and an app container; the device plugin serves its own name', async () => {
    const admitted = await f.sim.admitPod({
      metadata: { name: 'mixed', namespace: 'default' },
      spec: {
        initContainers: [{ name: 'setup', resources: { limits: { [GPU]: 1 } } }],
        containers: [
          { name: 'main', resources: { limits: { cpu: '1', [GPU]: 2 } } },
          { name: 'side', resources: { limits: { [FPGA]: 1 } } },
        ],
      },
    });
    const status = get(admitted, 'status.extendedResourceClaimStatus') as ExtStatus;
    // main's sorted requests are cpu, example.com/gpu: request index 1; setup reuses main's request.
    assert.deepEqual(status.requestMappings, [
      { containerName: 'main', resourceName: GPU, requestName: 'container-1-request-1' },
      { containerName: 'setup', resourceName: GPU, requestName: 'container-1-request-1' },
    ]);
    const claim = await api.readNamespacedResourceClaim({
      name: status.resourceClaimName,
      namespace: 'default',
    });
    assert.deepEqual(
      claim.spec.devices?.requests?.map((r) => [r.name, r.exactly?.deviceClassName, r.exactly?.count]),
      [['container-1-request-1', 'gpu', 2]],
    );
    const devices = (claim.status?.allocation?.devices?.results ?? []).map((r) => r.device);
    assert.equal(devices.length, 2);
    await waitFor(() => get(podState('mixed'), 'phase') === 'Running', 'the pod running');
    const containers = podState('mixed')!.containers;
    const cdi = devices.map((d) => driver.cdiId(d));
    assert.deepEqual(containers.find((c) => c.name === 'setup')?.cdiDevices, cdi);
    assert.deepEqual(containers.find((c) => c.name === 'main')?.cdiDevices, cdi);
    assert.deepEqual(containers.find((c) => c.name === 'side')?.cdiDevices, []);
    // The device manager allocated the plugin's resource only.
    assert.deepEqual(plugin.calls.allocate, [['fpga-0']]);
    assert.deepEqual(containers.find((c) => c.name === 'main')?.devices, {});
    assert.deepEqual(containers.find((c) => c.name === 'side')?.devices, { [FPGA]: ['fpga-0'] });
    assert.deepEqual(podState('mixed')?.extendedResourceClaimStatus, status);
    assert.equal(driver.prepareCalls.at(-1)?.claims[0]?.name, status.resourceClaimName);
    await f.sim.deletePod('default', 'mixed');
    await assert.rejects(
      api.readNamespacedResourceClaim({ name: status.resourceClaimName, namespace: 'default' }),
    );
    assert.equal(driver.unprepareCalls.at(-1)?.claims[0]?.name, status.resourceClaimName);
  });

  test('the implicit name; a pod that does not fit stays Pending until a claim releases its device', async () => {
    const first = await f.sim.admitPod({
      metadata: { name: 'first', namespace: 'default' },
      spec: {
        containers: [
          { name: 'main', resources: { limits: { 'deviceclass.resource.kubernetes.io/gpu': 2 } } },
        ],
      },
    });
    assert.equal(get(first, 'status.phase'), 'Running');
    const firstClaim = (get(first, 'status.extendedResourceClaimStatus') as ExtStatus).resourceClaimName;
    const second = await f.sim.admitPod({
      metadata: { name: 'second', namespace: 'default' },
      spec: { containers: [{ name: 'main', resources: { limits: { [GPU]: 2 } } }] },
    });
    assert.equal(get(second, 'status.phase'), 'Pending');
    assert.equal(get(second, 'status.extendedResourceClaimStatus'), undefined);
    assert.deepEqual(get(second, 'status.conditions'), [
      {
        type: 'PodScheduled',
        status: 'False',
        reason: 'Unschedulable',
        message:
          '0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
        lastProbeTime: null,
        lastTransitionTime: (get(second, 'status.conditions') as Obj[])[0]?.['lastTransitionTime'],
      },
    ]);
    await f.sim.deletePod('default', 'first');
    const scheduled = await waitFor(() => {
      const p = podState('second');
      return p?.phase === 'Running' && p.extendedResourceClaimStatus;
    }, 'the second pod scheduled once the first pod’s claim is gone');
    assert.notEqual(scheduled.resourceClaimName, firstClaim);
    await f.sim.deletePod('default', 'second');
  });

  test('a NoExecute DeviceTaintRule on the special claim’s device evicts the pod (PodClaims includes that claim)', async () => {
    const admitted = await f.sim.admitPod({
      metadata: { name: 'tainted', namespace: 'default' },
      spec: { containers: [{ name: 'main', resources: { limits: { [GPU]: 1 } } }] },
    });
    const status = get(admitted, 'status.extendedResourceClaimStatus') as ExtStatus;
    const claim = await api.readNamespacedResourceClaim({
      name: status.resourceClaimName,
      namespace: 'default',
    });
    const device = claim.status?.allocation?.devices?.results?.[0]?.device;
    assert.ok(device);
    const rule = await fetch(`${f.sim.url}/apis/resource.k8s.io/v1/devicetaintrules`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'resource.k8s.io/v1',
        kind: 'DeviceTaintRule',
        metadata: { name: 'evict-ext' },
        spec: {
          deviceSelector: { driver: DRIVER, pool: NODE, device },
          taint: { key: 'example.com/lost', effect: 'NoExecute' },
        },
      }),
    });
    assert.equal(rule.status, 201);
    try {
      await waitFor(() => podState('tainted') === undefined, 'the pod evicted');
      await waitFor(async () => {
        const claims = (await api.listNamespacedResourceClaim({ namespace: 'default' })).items;
        return !claims.some((c) => c.metadata?.name === status.resourceClaimName);
      }, 'the special claim deleted');
    } finally {
      await fetch(`${f.sim.url}/apis/resource.k8s.io/v1/devicetaintrules/evict-ext`, { method: 'DELETE' });
    }
  });

  test('the API server refuses an extendedResourceName that is not an extended resource name', async () => {
    const res = await fetch(`${f.sim.url}/apis/resource.k8s.io/v1/deviceclasses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'resource.k8s.io/v1',
        kind: 'DeviceClass',
        metadata: { name: 'bad' },
        spec: { extendedResourceName: 'kubernetes.io/gpu' },
      }),
    });
    assert.equal(res.status, 422);
    const body = (await res.json()) as { message: string };
    assert.equal(
      body.message,
      'DeviceClass.resource.k8s.io "bad" is invalid: spec.extendedResourceName: Invalid value: "kubernetes.io/gpu": must not have "kubernetes.io/" domain',
    );
  });
});
