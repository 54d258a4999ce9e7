// The demo's DRA node (examples/demo.yaml, dra-node alone): its gateway runs the DRA driver beside a
// device plugin; the DeviceClass, template and claim are created through the kubelet-sim's API; the
// workloads' claims are allocated by the kubelet-sim's scheduler (one with a NUMA matchAttribute
// constraint, one left Pending) and prepared through the driver, which reports each prepared device
// in its claim's status.devices. A fault posted to the gateway
// reaches the pod's allocatedResourcesStatus; with a NoExecute taint it evicts the pod; clearing heals.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import type { NodeSnapshot } from '@plugboard/api';
import { startDemoCluster, waitForSnapshot, type DemoCluster, type SimDemoNode } from './cluster.js';
import { loadDemo, type LoadedDemo } from './demo-config.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const NODE = 'dra-node';
const DRIVER = 'gpu.plugboard.example';
const NUMA_NODE = 'resource.kubernetes.io/numaNode';
const deviceKey = (device: string) => `${DRIVER}/${NODE}/${device}`;

/** The demo with one node and its workloads (the DRA objects follow the workloads). */
function onlyNode(demo: LoadedDemo, name: string): LoadedDemo {
  return {
    ...demo,
    spec: {
      ...demo.spec,
      nodes: demo.spec.nodes.filter((n) => n.name === name),
      workloads: demo.spec.workloads.filter((w) => w.node === name),
    },
  };
}

interface KubeList<T> {
  items: T[];
}
interface ClaimObject {
  metadata: { name: string; namespace: string };
  status?: {
    allocation?: {
      devices: { results: { request: string; driver: string; pool: string; device: string }[] };
    };
    reservedFor?: { name: string }[];
  };
}
interface ExtendedStatus {
  resourceClaimName: string;
  requestMappings: { containerName: string; resourceName: string; requestName: string }[];
}
interface SliceObject {
  spec: { devices?: { name: string; attributes?: Record<string, { int?: number }> }[] };
}
interface PodObject {
  status: {
    phase: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: {
      allocatedResourcesStatus?: {
        name: string;
        resources: { resourceID: string; health: string; message?: string }[];
      }[];
    }[];
  };
}

async function kubeGet<T>(node: SimDemoNode, path: string): Promise<T> {
  const res = await fetch(`${node.sim.url}${path}`);
  assert.equal(res.status, 200, `GET ${path}`);
  return (await res.json()) as T;
}

async function postFault(
  node: SimDemoNode,
  body: { deviceId: string; reason: string; taint?: 'NoExecute' },
): Promise<string> {
  const res = await fetch(`${node.gateway.url}/api/v1/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ resource: DRIVER, ...body }),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { id: string }).id;
}

async function clearFault(node: SimDemoNode, id: string): Promise<void> {
  const res = await fetch(`${node.gateway.url}/api/v1/faults/${id}`, { method: 'DELETE' });
  assert.equal(res.status, 204);
}

/**
 * The claim generated for a pod's `spec.resourceClaims[name]`, as the gateway shows it (by its owner:
 * a pod still Pending is not the node's yet, its claim is).
 */
function claimOf(s: NodeSnapshot, pod: string, name: string) {
  return Object.values(s.dra?.claims ?? {}).find(
    (c) => c.owner?.pod === pod && c.owner.podClaimName === name,
  );
}

describe('demo DRA node (examples/demo.yaml, dra-node)', () => {
  let stateDir: string;
  let cluster: DemoCluster<SimDemoNode>;
  let node: SimDemoNode;

  before(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'plugboard-demo-dra-test-'));
    cluster = await startDemoCluster({
      demo: onlyNode(loadDemo(join(repoRoot, 'examples/demo.yaml')), NODE),
      stateDir,
      logger: pino({ level: 'silent' }),
    });
    node = cluster.node(NODE);
  });
  after(async () => {
    await cluster?.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it("shows the driver's GPUs and the device plugin's NIC VFs on the same two NUMA nodes", () => {
    const s = node.gateway.model.snapshot();
    const driver = s.dra?.drivers[DRIVER];
    assert.ok(driver, `the gateway shows ${DRIVER}`);
    assert.equal(driver.inProcess, true);
    assert.equal(driver.registration?.phase, 'registered');
    assert.equal(driver.counts.published, 8);
    const gpus = Object.values(s.dra!.devices).filter((d) => d.driver === DRIVER);
    assert.deepEqual(
      Object.fromEntries(gpus.map((d) => [d.sourceId, d.numaNodes])),
      Object.fromEntries([0, 1, 2, 3, 4, 5, 6, 7].map((i) => [`gpu-${i}`, [i < 4 ? 0 : 1]])),
    );
    assert.deepEqual(gpus[0]!.capacity, { memory: '80Gi' });
    assert.deepEqual(gpus[0]!.attributes['model'], { string: 'PB-100' });
    const vfs = Object.values(s.devices).filter((d) => d.resource === 'plugboard.example/nic-vf');
    assert.equal(vfs.length, 8);
    assert.deepEqual([...new Set(vfs.flatMap((d) => d.numaNodes))].sort(), [0, 1]);
    assert.deepEqual(Object.keys(s.numa.nodes).sort(), ['0', '1']);
    assert.equal(s.resources['plugboard.example/nic-vf']!.kubelet.allocated, 2);
  });

  it("shows the claims: prepared for the admitted pods, pending with the scheduler's message for ml/train-wide", () => {
    const s = node.gateway.model.snapshot();
    const pair = claimOf(s, 'ml/train-pair', 'gpus');
    assert.ok(pair, 'ml/train-pair has its template claim');
    assert.deepEqual(s.pods['ml/train-pair']?.claims, [
      { name: 'gpus', claim: pair.key, fromTemplate: true },
    ]);
    assert.equal(pair.phase, 'prepared');
    assert.equal(pair.owner?.pod, 'ml/train-pair');
    assert.deepEqual(pair.reservedFor, ['ml/train-pair']);
    assert.equal(pair.devices.length, 2);
    const numa = pair.devices.map((d) => s.dra!.devices[d.deviceKey]!.numaNodes);
    assert.equal(new Set(numa.map((n) => n.join())).size, 1, `one NUMA node: ${JSON.stringify(numa)}`);
    const infer = s.dra!.claims['ml/inference-gpu'];
    assert.equal(infer?.phase, 'prepared');
    assert.equal(infer.owner, null);
    assert.deepEqual(
      infer.devices.map((d) => d.deviceKey),
      [deviceKey('gpu-2')],
    );
    const wide = claimOf(s, 'ml/train-wide', 'gpus');
    assert.ok(wide, 'the pending pod shows its claim');
    assert.equal(wide.phase, 'pending');
    assert.match(wide.pendingReason ?? '', /cannot allocate all claims/);
    assert.deepEqual(cluster.pending, [{ node: NODE, pod: 'ml/train-wide', message: wide.pendingReason }]);
  });

  it("the driver reports each prepared device in its claim's status.devices (deviceStatus: Ready), and the dashboard's model shows it", async () => {
    const s = await waitForSnapshot(
      node.gateway,
      (s) => claimOf(s, 'ml/train-pair', 'gpus')?.devices.every((d) => d.status) === true,
      "both devices of ml/train-pair's claim with the status their driver wrote",
      15_000,
    );
    const pair = claimOf(s, 'ml/train-pair', 'gpus')!;
    for (const d of pair.devices) {
      assert.deepEqual(
        d.status?.conditions.map((c) => [c.type, c.status, c.reason, c.message]),
        [['Ready', 'True', 'Prepared', `prepared by ${DRIVER} on ${NODE}`]],
      );
      assert.deepEqual(
        s.dra!.devices[d.deviceKey]!.allocations.map((a) => a.status),
        [d.status],
      );
    }
    // A pending claim has no devices, so no status.
    assert.deepEqual(claimOf(s, 'ml/train-wide', 'gpus')?.devices, []);
  });

  it('through the kubelet-sim: the pods Running with their claims allocated, two GPUs on one NUMA node', async () => {
    for (const pod of ['train-pair', 'infer-dra']) {
      const obj = await kubeGet<PodObject>(node, `/api/v1/namespaces/ml/pods/${pod}`);
      assert.equal(obj.status.phase, 'Running', pod);
    }
    const wide = await kubeGet<PodObject>(node, '/api/v1/namespaces/ml/pods/train-wide');
    assert.equal(wide.status.phase, 'Pending');
    assert.deepEqual(wide.status.conditions?.find((c) => c.type === 'PodScheduled')?.reason, 'Unschedulable');
    const claims = await kubeGet<KubeList<ClaimObject>>(
      node,
      '/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims',
    );
    const allocated = (name: RegExp) =>
      claims.items.find((c) => name.test(c.metadata.name))?.status?.allocation?.devices.results ?? [];
    const pair = allocated(/^train-pair-gpus-/);
    assert.equal(pair.length, 2);
    const slices = await kubeGet<KubeList<SliceObject>>(node, '/apis/resource.k8s.io/v1/resourceslices');
    const numaOf = new Map(
      slices.items.flatMap((s) => s.spec.devices ?? []).map((d) => [d.name, d.attributes?.[NUMA_NODE]?.int]),
    );
    const pairNuma = pair.map((r) => numaOf.get(r.device));
    assert.equal(pairNuma[0], pairNuma[1], `${JSON.stringify(pair)} on NUMA ${pairNuma.join(', ')}`);
    assert.notEqual(pairNuma[0], undefined);
    assert.deepEqual(
      allocated(/^inference-gpu$/).map((r) => r.device),
      ['gpu-2'],
    );
    assert.deepEqual(allocated(/^train-wide-gpus-/), []);
  });

  it('render/frame-dra asks limits {plugboard.example/gpu: 1} with no claim: the scheduler makes it a special claim, the driver serves gpu-3', async () => {
    const pod = await kubeGet<PodObject & { status: { extendedResourceClaimStatus?: ExtendedStatus } }>(
      node,
      '/api/v1/namespaces/render/pods/frame-dra',
    );
    assert.equal(pod.status.phase, 'Running');
    const ext = pod.status.extendedResourceClaimStatus;
    assert.match(ext?.resourceClaimName ?? '', /^frame-dra-extended-resources-[a-z0-9]{5}$/);
    assert.deepEqual(ext!.requestMappings, [
      {
        containerName: 'render',
        resourceName: 'plugboard.example/gpu',
        requestName: 'container-0-request-0',
      },
    ]);
    const claim = await kubeGet<ClaimObject & { metadata: { annotations?: Record<string, string> } }>(
      node,
      `/apis/resource.k8s.io/v1/namespaces/render/resourceclaims/${ext!.resourceClaimName}`,
    );
    assert.equal(claim.metadata.annotations?.['resource.kubernetes.io/extended-resource-claim'], 'true');
    assert.deepEqual(
      claim.status?.allocation?.devices.results.map((r) => r.device),
      ['gpu-3'],
    );
    const s = node.gateway.model.snapshot();
    assert.equal(s.dra!.claims[`render/${ext!.resourceClaimName}`]?.phase, 'prepared');
    assert.deepEqual(
      s.pods['render/frame-dra']!.containers[0]!.dynamicResources.map((r) => r.devices.map((d) => d.device)),
      [['gpu-3']],
    );
    assert.equal(s.resources['plugboard.example/gpu'], undefined, 'no device plugin serves the name here');
    // The migration view's half for this node: served through DRA, the pod with its special claim.
    const gpu = s.extendedResources?.['plugboard.example/gpu'];
    assert.equal(gpu?.servedBy, 'dra');
    assert.deepEqual([gpu.deviceClass, gpu.drivers], [DRIVER, [DRIVER]]);
    assert.deepEqual(
      gpu.pods.map((p) => [p.pod, p.via, p.claim, p.devices]),
      [['render/frame-dra', 'dra', `render/${ext!.resourceClaimName}`, [deviceKey('gpu-3')]]],
    );
    assert.equal(s.dra!.claims[`render/${ext!.resourceClaimName}`]?.extendedResources, true);
    assert.equal(s.extendedResources?.['plugboard.example/nic-vf']?.servedBy, 'device-plugin');
  });

  it("a fault on a DRA device reaches the pod's allocatedResourcesStatus; clearing heals it", async () => {
    const id = await postFault(node, { deviceId: 'gpu-2', reason: 'simulated: ECC errors' });
    const faulted = await waitForSnapshot(
      node.gateway,
      (s) =>
        s.dra?.devices[deviceKey('gpu-2')]?.fault === 'active' &&
        s.dra.claims['ml/inference-gpu']?.health === 'Unhealthy',
      'the fault in the health the kubelet reports for ml/infer-dra',
      15_000,
    );
    assert.equal(faulted.dra!.devices[deviceKey('gpu-2')]!.kubeletHealth, 'Unhealthy');
    // What `kubectl get pod -o jsonpath='{.status.containerStatuses[0].allocatedResourcesStatus}'` prints.
    const pod = await kubeGet<PodObject>(node, '/api/v1/namespaces/ml/pods/infer-dra');
    const status = pod.status.containerStatuses?.[0]?.allocatedResourcesStatus;
    assert.equal(status?.length, 1, JSON.stringify(status));
    assert.equal(status[0]!.name, 'claim:gpu');
    const [resource] = status[0]!.resources;
    assert.match(resource?.resourceID ?? '', /^k8s\.gpu\.plugboard\.example\/gpu=[0-9a-f-]+-gpu-2$/);
    assert.deepEqual(
      { health: resource?.health, message: resource?.message },
      { health: 'Unhealthy', message: 'simulated: ECC errors' },
    );
    await clearFault(node, id);
    await waitForSnapshot(
      node.gateway,
      (s) =>
        s.dra?.devices[deviceKey('gpu-2')]?.health === 'Healthy' &&
        s.dra.devices[deviceKey('gpu-2')]?.fault === null &&
        s.dra.claims['ml/inference-gpu']?.health === 'Healthy',
      'the heal in the pod status',
      15_000,
    );
  });

  it('a fault with a NoExecute taint evicts the pod using the device; clearing lifts the taint', async () => {
    const before = node.gateway.model.snapshot();
    const device = claimOf(before, 'ml/train-pair', 'gpus')!.devices[0]!.deviceKey;
    const sourceId = before.dra!.devices[device]!.sourceId!;
    const id = await postFault(node, {
      deviceId: sourceId,
      reason: 'simulated: fell off the bus',
      taint: 'NoExecute',
    });
    const evicted = await waitForSnapshot(
      node.gateway,
      (s) =>
        s.pods['ml/train-pair'] === undefined &&
        (s.dra?.devices[device]?.taints.some((t) => t.effect === 'NoExecute') ?? false),
      'the device taint to evict ml/train-pair',
      15_000,
    );
    assert.equal(evicted.dra!.devices[device]!.allocations.length, 0, 'the claim was released');
    assert.equal(evicted.resources['plugboard.example/nic-vf']!.kubelet.allocated, 0, 'its VFs freed too');
    const events = await kubeGet<KubeList<{ reason: string; involvedObject: { name: string } }>>(
      node,
      '/api/v1/namespaces/ml/events',
    );
    assert.ok(
      events.items.some(
        (e) => e.reason === 'DeviceTaintManagerEviction' && e.involvedObject.name === 'train-pair',
      ),
      'the eviction event',
    );
    assert.ok(node.gateway.model.snapshot().pods['ml/infer-dra'], 'the pod on another device stays');
    await clearFault(node, id);
    const healed = await waitForSnapshot(
      node.gateway,
      (s) => s.dra?.devices[device]?.health === 'Healthy' && s.dra.devices[device]?.taints.length === 0,
      'the taint lifted',
      15_000,
    );
    assert.equal(healed.dra!.drivers[DRIVER]!.counts.tainted, 0);
  });
});
