// Third-party plugins on a real kubelet and control plane (v1.37.2 from upstream source), each run
// inside the node's mount namespace. k8s.io/kubernetes's sample device plugin, at the device-plugin
// API's fixed directory: the kubelet registers it, the Node shows its resource, a pod gets a device
// (the fake runtime records its mount, PodResources names it), and stopping it drops allocatable to 0.
// dra-example-driver's kubelet plugin (built from the Go module proxy): the real
// plugin watcher registers it, the real API server stores its ResourceSlices, the real scheduler
// allocates a claim of the chart's DeviceClass, the real kubelet has the driver prepare it and starts
// the pod with its CDI devices (upstream's fake runtime records them), and PodResources reports them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { decodeProtobufObject } from '@plugboard/kubelet-sim';
import { after, before, describe, it } from 'node:test';
import { removeDraObjects } from './dra-cleanup.js';
import { assertDraExampleClaimReported, draExampleCdiNames } from './third-party-checks.js';
import { pinnedPod } from './pod.js';
import { podResourcesClient, type PodResourcesClient } from './pod-resources.js';
import { realCluster, type RealCluster, type RealNode } from './real-cluster.js';
import {
  draExampleDeviceClass,
  thirdParty,
  type DraExampleDriver,
  type SampleDevicePlugin,
} from './third-party.js';
import { waitFor } from './wait.js';

interface ClaimJson {
  metadata: { name: string; uid: string };
  status?: { allocation?: { devices: { results: { driver: string; pool: string; device: string }[] } } };
}

/** GET `path` from the real API server with the cluster admin's certificate, accepting `accept`. */
async function apiGet(cluster: RealCluster, path: string, accept: string): Promise<Buffer> {
  const config = await cluster.kubectlJson<{
    clusters: { cluster: { server: string; 'certificate-authority': string } }[];
    users: { user: { 'client-certificate': string; 'client-key': string } }[];
  }>(['config', 'view', '--raw']);
  const { server, 'certificate-authority': ca } = config.clusters[0]!.cluster;
  const user = config.users[0]!.user;
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, server),
      {
        ca: readFileSync(ca),
        cert: readFileSync(user['client-certificate']),
        key: readFileSync(user['client-key']),
        headers: { accept },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(Buffer.concat(chunks))
            : reject(new Error(`GET ${path}: ${res.statusCode} ${Buffer.concat(chunks).toString()}`)),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

interface NodeJson {
  status: { capacity?: Record<string, string>; allocatable?: Record<string, string> };
}

describe('sample-device-plugin on a real kubelet', () => {
  let cluster: RealCluster;
  let node: RealNode;
  let ns: { name: string; remove(): Promise<void> };
  let plugin: SampleDevicePlugin;
  let podResources: PodResourcesClient;

  const nodeStatus = async (): Promise<NodeJson['status']> =>
    (await cluster.kubectlJson<NodeJson>(['get', 'node', node.name])).status;

  before(async () => {
    cluster = realCluster();
    node = await cluster.addNode('tp-sdp');
    ns = await cluster.namespace('tp-sdp');
    plugin = await thirdParty.sampleDevicePlugin(node);
    podResources = podResourcesClient(node.podResourcesSocket);
  });

  after(async () => {
    podResources?.close();
    await plugin?.stop();
    await ns?.remove();
    await node?.remove();
  });

  it('registers with the kubelet from /var/lib/kubelet/device-plugins in the node’s namespace; the Node shows 2', async () => {
    assert.ok(node.exec.length > 0, 'it runs inside the node’s own mount namespace');
    await plugin.registered(90_000);
    const status = await waitFor(
      'example.com/resource 2 in the Node’s allocatable',
      async () => {
        const s = await nodeStatus();
        return s.allocatable?.[plugin.resource] === '2' && s;
      },
      90_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; the plugin's log:\n${plugin.logTail()}`, { cause: err });
    });
    assert.equal(status.capacity?.[plugin.resource], '2');
  });

  it('a pod asking for one runs with the device’s mount; PodResources names the device it holds', async () => {
    await cluster.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify(pinnedPod('sampler', ns.name, node.name, { limits: { [plugin.resource]: '1' } })),
    });
    await cluster.kubectl(['wait', '-n', ns.name, '--for=condition=Ready', 'pod/sampler', '--timeout=120s']);
    const got = await podResources.get(ns.name, 'sampler');
    const devices = got.podResources?.containers[0]?.devices ?? [];
    assert.deepEqual(
      devices.map((d) => d.resourceName),
      [plugin.resource],
    );
    const id = devices[0]!.deviceIds[0]!;
    assert.ok(plugin.devices.includes(id), `${id} is one of the plugin's devices`);
    const record = node.containers().find((c) => c.request.sandboxConfig.metadata.name === 'sampler');
    assert.ok(record, 'the fake runtime was asked to create the container');
    // The plugin's Allocate answers with a mount of the file it made for the device, /tmp/<id>.
    const mounts = (record.request.config.mounts ?? []).map((m) => [m.hostPath, m.containerPath]);
    assert.ok(
      mounts.some(([host, container]) => host === `/tmp/${id}` && container === `/tmp/${id}`),
      `the container mounts /tmp/${id}: ${JSON.stringify(mounts)}`,
    );
  });

  it('stopping the plugin: allocatable drops to 0; the kubelet keeps capacity for its 5-minute grace period', async () => {
    await plugin.stop();
    const status = await waitFor(
      'allocatable example.com/resource 0',
      async () => {
        const s = await nodeStatus();
        return s.allocatable?.[plugin.resource] === '0' && s;
      },
      90_000,
    );
    // The kubelet counts a stopped plugin's devices in capacity until endpointStopGracePeriod (5 min,
    // a constant in pkg/kubelet/cm/devicemanager) has passed; this suite does not wait for that.
    assert.equal(status.capacity?.[plugin.resource], '2');
  });
});

describe('dra-example-driver on a real kubelet', () => {
  let cluster: RealCluster;
  let node: RealNode;
  let ns: { name: string; remove(): Promise<void> };
  let driver: DraExampleDriver;
  let podResources: PodResourcesClient;

  before(async () => {
    cluster = realCluster();
    node = await cluster.addNode('tp-dra');
    ns = await cluster.namespace('tp-dra');
    await cluster.kubectl(['apply', '-f', '-'], { input: JSON.stringify(draExampleDeviceClass()) });
    // The cluster admin's kubeconfig stands in for the chart's ServiceAccount and its RBAC.
    driver = await thirdParty.draExampleDriver(node, { numDevices: 4, kubeconfig: cluster.kubeconfig });
    podResources = podResourcesClient(node.podResourcesSocket);
  });

  after(async () => {
    podResources?.close();
    await driver?.stop();
    await removeDraObjects(cluster, node?.name);
    await ns?.remove();
    await node?.remove();
  });

  it('registers through the real plugin watcher (the kubelet confirms it)', async () => {
    await driver.registered(90_000);
    assert.ok(node.exec.length > 0, 'it runs inside the node’s own mount namespace');
  });

  it('publishes its four GPUs in a pool named after the node, in the real API server', async () => {
    const devices = await waitFor(
      'four gpu.example.com devices in this node’s ResourceSlices',
      async () => {
        const list = await cluster.kubectlJson<{
          items: { spec: { driver: string; pool: { name: string }; devices?: { name: string }[] } }[];
        }>(['get', 'resourceslices', '--field-selector', `spec.nodeName=${node.name}`]);
        const mine = list.items.filter((s) => s.spec.driver === driver.driverName);
        const names = mine.flatMap((s) => s.spec.devices?.map((d) => d.name) ?? []).sort();
        return names.length === 4 && mine.every((s) => s.spec.pool.name === node.name) && names;
      },
      90_000,
    );
    assert.deepEqual(devices, ['gpu-0', 'gpu-1', 'gpu-2', 'gpu-3']);
  });

  it('a slice the real API server holds, fetched as protobuf, decodes (kubelet-sim) to the JSON it serves', async () => {
    const list = await cluster.kubectlJson<{ items: { metadata: { name: string } }[] }>([
      'get',
      'resourceslices',
      '--field-selector',
      `spec.nodeName=${node.name}`,
    ]);
    const path = `/apis/resource.k8s.io/v1/resourceslices/${list.items[0]!.metadata.name}`;
    const asJson = JSON.parse((await apiGet(cluster, path, 'application/json')).toString()) as unknown;
    const asProtobuf = await apiGet(cluster, path, 'application/vnd.kubernetes.protobuf');
    assert.deepEqual(decodeProtobufObject(asProtobuf), asJson);
  });

  it('a pod with a ResourceClaim of class gpu.example.com is allocated by the real scheduler, prepared and Running; PodResources shows it', async () => {
    const template = {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceClaimTemplate',
      metadata: { name: 'one-gpu', namespace: ns.name },
      spec: {
        spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu.example.com' } }] } },
      },
    };
    const pod = pinnedPod('infer', ns.name, node.name, { claims: { gpu: { template: 'one-gpu' } } });
    await cluster.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [template, pod] }),
    });
    await cluster.kubectl(['wait', '-n', ns.name, '--for=condition=Ready', 'pod/infer', '--timeout=120s']);
    const p = await cluster.kubectlJson<{
      status: { resourceClaimStatuses?: { resourceClaimName: string }[] };
    }>(['get', 'pod', '-n', ns.name, 'infer']);
    const claimName = p.status.resourceClaimStatuses?.[0]?.resourceClaimName;
    assert.ok(claimName, 'the pod has a generated claim');
    const claim = await cluster.kubectlJson<ClaimJson>(['get', 'resourceclaim', '-n', ns.name, claimName]);
    const results = claim.status?.allocation?.devices.results ?? [];
    assert.equal(results.length, 1);
    assert.equal(results[0]!.driver, 'gpu.example.com');
    assert.equal(results[0]!.pool, node.name);
    const cdi = draExampleCdiNames(claim.metadata.uid, results[0]!.device);
    const record = node.containers().find((c) => c.request.sandboxConfig.metadata.name === 'infer');
    assert.ok(record, 'the fake runtime was asked to create the container');
    assert.deepEqual(
      (record.request.config.CDIDevices ?? record.request.config.cdiDevices ?? []).map((d) => d.name).sort(),
      [...cdi].sort(),
    );
    await assertDraExampleClaimReported(
      podResources,
      { namespace: ns.name, pod: 'infer', nodeName: node.name },
      { name: claimName, uid: claim.metadata.uid, device: results[0]!.device },
    );
  });
});
