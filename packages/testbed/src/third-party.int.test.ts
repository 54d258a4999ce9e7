// Third-party plugins on kubelet-sim, built from upstream sources by @plugboard/local-cluster.
// k8s.io/kubernetes's sample device plugin registers, kubelet-sim's Node shows its resource, a pod
// gets one of its devices (PodResources names it), and stopping it takes allocatable, then capacity
// (after the grace period) to 0. dra-example-driver's kubelet plugin registers through kubelet-sim's
// plugin watcher, publishes its ResourceSlices through kubelet-sim's API server (client-go writes
// them as protobuf), kubelet-sim's scheduler allocates a claim of the chart's DeviceClass, the
// driver prepares it, the pod runs, and PodResources reports the device and its CDI names.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertDraExampleClaimReported } from './third-party-checks.js';
import { podResourcesClient, type PodResourcesClient } from './pod-resources.js';
import { simNode, type SimNode } from './sim-node.js';
import {
  draExampleDeviceClass,
  thirdParty,
  type DraExampleDriver,
  type SampleDevicePlugin,
} from './third-party.js';
import { waitFor } from './wait.js';

interface NodeJson {
  status: { capacity?: Record<string, string>; allocatable?: Record<string, string> };
}

describe('sample-device-plugin on kubelet-sim', () => {
  let root: string;
  let node: SimNode;
  let plugin: SampleDevicePlugin;
  let podResources: PodResourcesClient;

  const nodeStatus = async (): Promise<NodeJson['status']> => {
    const res = await fetch(`${node.sim.url}/api/v1/nodes/${node.name}`);
    assert.equal(res.status, 200);
    return ((await res.json()) as NodeJson).status;
  };

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'pb-third-party-'));
    // A short endpoint grace period, so that capacity's drop after the plugin stops is seen here.
    node = await simNode(root, 'tp-sdp', { sim: { gracePeriodMs: 1_000 } });
    plugin = await thirdParty.sampleDevicePlugin(node);
    podResources = podResourcesClient(node.podResourcesSocket);
  });

  after(async () => {
    podResources?.close();
    await plugin?.stop();
    await node?.remove();
    rmSync(root, { recursive: true, force: true });
  });

  it('registers example.com/resource from the fixed device-plugin path, and the Node reports 2', async () => {
    await plugin.registered();
    const status = await waitFor('example.com/resource on the Node', async () => {
      const s = await nodeStatus();
      return s.allocatable?.[plugin.resource] === '2' && s;
    }).catch((err: Error) => {
      throw new Error(`${err.message}; the plugin's log:\n${plugin.logTail()}`, { cause: err });
    });
    assert.equal(status.capacity?.[plugin.resource], '2');
    assert.deepEqual(
      node.sim
        .state()
        .resources[plugin.resource]?.devices.map((d) => d.id)
        .sort(),
      [...plugin.devices],
    );
  });

  it('a pod asking for one runs, and PodResources names the device it holds', async () => {
    const pod = (await node.sim.admitPod({
      metadata: { name: 'sampler', namespace: 'default' },
      spec: {
        containers: [
          {
            name: 'main',
            resources: { limits: { [plugin.resource]: '1' }, requests: { [plugin.resource]: '1' } },
          },
        ],
      },
    })) as { status?: { phase?: string } };
    assert.equal(pod.status?.phase, 'Running');
    const got = await podResources.get('default', 'sampler');
    const devices = got.podResources?.containers[0]?.devices ?? [];
    assert.deepEqual(
      devices.map((d) => d.resourceName),
      [plugin.resource],
    );
    assert.equal(devices[0]!.deviceIds.length, 1);
    assert.ok(
      plugin.devices.includes(devices[0]!.deviceIds[0]!),
      `${devices[0]!.deviceIds[0]} is the plugin's`,
    );
  });

  it('stopping the plugin: allocatable drops to 0 at once, capacity after the grace period', async () => {
    await plugin.stop();
    await waitFor(
      'allocatable example.com/resource 0',
      async () => (await nodeStatus()).allocatable?.[plugin.resource] === '0',
    );
    await waitFor('capacity example.com/resource 0 after the grace period', async () => {
      const capacity = (await nodeStatus()).capacity?.[plugin.resource];
      return capacity === undefined || capacity === '0';
    });
  });
});

describe('dra-example-driver on kubelet-sim', () => {
  let root: string;
  let node: SimNode;
  let driver: DraExampleDriver;
  let podResources: PodResourcesClient;

  const api = async <T>(path: string, init?: { method: string; body: unknown }): Promise<T> => {
    const res = await fetch(`${node.sim.url}${path}`, {
      ...(init
        ? {
            method: init.method,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(init.body),
          }
        : {}),
    });
    const text = await res.text();
    assert.ok(res.ok, `${init?.method ?? 'GET'} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as T;
  };

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'pb-third-party-'));
    node = await simNode(root, 'tp-sim');
    await api('/apis/resource.k8s.io/v1/deviceclasses', { method: 'POST', body: draExampleDeviceClass() });
    driver = await thirdParty.draExampleDriver(node, { numDevices: 4 });
    podResources = podResourcesClient(node.podResourcesSocket);
  });

  after(async () => {
    podResources?.close();
    await driver?.stop();
    await node?.remove();
    rmSync(root, { recursive: true, force: true });
  });

  it('registers through the plugin watcher: the kubelet confirms it and holds a connected plugin', async () => {
    await driver.registered();
    const plugin = await waitFor('kubelet-sim to hold a connected gpu.example.com plugin', () =>
      node.sim
        .state()
        .dra.drivers.find((d) => d.name === driver.driverName)
        ?.plugins.find((p) => p.connected),
    );
    assert.equal(plugin.service, 'v1.DRAPlugin');
  });

  it('publishes its four GPUs (protobuf ResourceSlices) in a pool named after the node', async () => {
    const slices = await waitFor('four gpu.example.com devices in this node’s ResourceSlices', async () => {
      const list = await api<{
        items: {
          spec: {
            driver: string;
            nodeName: string;
            pool: { name: string; resourceSliceCount: number };
            devices?: { name: string; attributes?: Record<string, unknown>; capacity?: unknown }[];
          };
        }[];
      }>('/apis/resource.k8s.io/v1/resourceslices');
      const mine = list.items.filter((s) => s.spec.driver === driver.driverName);
      const names = mine.flatMap((s) => s.spec.devices?.map((d) => d.name) ?? []);
      return names.length === 4 && mine;
    }).catch((err: Error) => {
      throw new Error(`${err.message}; the driver's log:\n${driver.logTail()}`, { cause: err });
    });
    assert.deepEqual(slices.flatMap((s) => s.spec.devices!.map((d) => d.name)).sort(), [
      'gpu-0',
      'gpu-1',
      'gpu-2',
      'gpu-3',
    ]);
    for (const s of slices) {
      assert.equal(s.spec.nodeName, node.name);
      assert.equal(s.spec.pool.name, node.name);
    }
    // gpu-0's index attribute is the int 0: a zero the protobuf body carries, kept as JSON.
    const gpu0 = slices.flatMap((s) => s.spec.devices!).find((d) => d.name === 'gpu-0')!;
    assert.deepEqual(gpu0.attributes?.['index'], { int: 0 });
  });

  it('a pod with a claim of class gpu.example.com is allocated by kubelet-sim’s scheduler, prepared by the driver and Running; PodResources shows it', async () => {
    await api('/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates', {
      method: 'POST',
      body: {
        apiVersion: 'resource.k8s.io/v1',
        kind: 'ResourceClaimTemplate',
        metadata: { name: 'one-gpu', namespace: 'default' },
        spec: {
          spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: driver.driverName } }] } },
        },
      },
    });
    const pod = (await node.sim.admitPod({
      metadata: { name: 'infer', namespace: 'default' },
      spec: {
        resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }],
        containers: [{ name: 'main', resources: { claims: [{ name: 'gpu' }] } }],
      },
    })) as { status?: { phase?: string; resourceClaimStatuses?: { resourceClaimName: string }[] } };
    assert.equal(pod.status?.phase, 'Running', driver.logTail());
    const claimName = pod.status?.resourceClaimStatuses?.[0]?.resourceClaimName;
    assert.ok(claimName, 'the pod has a generated claim');
    const claim = await api<{
      metadata: { uid: string };
      status?: { allocation?: { devices: { results: { driver: string; pool: string; device: string }[] } } };
    }>(`/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/${claimName}`);
    const results = claim.status?.allocation?.devices.results ?? [];
    assert.equal(results.length, 1);
    assert.equal(results[0]!.driver, driver.driverName);
    assert.equal(results[0]!.pool, node.name);
    await driver.waitForLog(/NodePrepareResources/, 'the kubelet to have it prepare the claim');
    await assertDraExampleClaimReported(
      podResources,
      { namespace: 'default', pod: 'infer', nodeName: node.name },
      { name: claimName, uid: claim.metadata.uid, device: results[0]!.device },
    );
  });
});
