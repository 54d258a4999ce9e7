// Extended resources backed by DRA (KEP-5004, GA in 1.37) with Plugboard's DRA driver, one suite
// body on both kinds of node, the real kubectl on both: a DeviceClass with an
// `extendedResourceName` (the driver's own manifest), a pod asking `limits: {<name>: 1}` with no
// claim. The scheduler creates the special ResourceClaim (annotation, owner, generated name,
// upstream's request names), allocates it on this node's device and records it in
// `pod.status.extendedResourceClaimStatus`; the kubelet prepares it through the driver (the
// container gets its CDI device, not a device plugin's), PodResources lists the device under
// `dynamicResources`, the Node does not advertise the name, and deleting the pod releases the claim.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import type { PodExtendedResourceClaimStatus } from '@plugboard/k8s-api';
import {
  openTestBed,
  pinnedPod,
  podResourcesClient,
  testClusterKinds,
  waitFor,
  type ClusterNode,
  type PodResourcesClient,
  type TestBed,
  type TestCluster,
  type TestNamespace,
} from '@plugboard/testbed';
import { parsePluginConfig, startPlugins, type DraDriver, type DraRuntime } from '../../src/index.js';
import { draOnBed } from './dra-on-bed.js';

const DRIVER = 'gpu.plugboard.example';
const ANNOTATION = 'resource.kubernetes.io/extended-resource-claim';
const FINALIZER = 'resource.kubernetes.io/delete-protection';

interface ClaimJson {
  metadata: {
    name: string;
    generateName?: string;
    uid: string;
    annotations?: Record<string, string>;
    ownerReferences?: Record<string, unknown>[];
    finalizers?: string[];
  };
  spec: unknown;
  status?: {
    allocation?: {
      devices: { results: { request: string; driver: string; pool: string; device: string }[] };
    };
    reservedFor?: { resource: string; name: string; uid: string }[];
  };
}
interface PodJson {
  metadata: { uid: string };
  status: {
    phase: string;
    extendedResourceClaimStatus?: PodExtendedResourceClaimStatus;
    resourceClaimStatuses?: unknown[];
    containerStatuses?: { name: string; allocatedResourcesStatus?: unknown[] }[];
  };
}
interface NodeJson {
  status: { capacity?: Record<string, string>; allocatable?: Record<string, string> };
}

for (const kind of testClusterKinds())
  describe(`extended resources backed by DRA on the ${kind} kubelet`, () => {
    let bed: TestBed;
    let cluster: TestCluster;
    let node: ClusterNode;
    let ns: TestNamespace;
    let dra: DraRuntime;
    let driver: DraDriver;
    let podResources: PodResourcesClient;
    let work: string;
    let deviceClass: string;
    // Unique per run: DeviceClasses are cluster-wide and the real cluster is shared by the suites.
    let resourceName: string;
    let claimName = '';
    let claimUid = '';

    /** A pod of one container asking `limits`, pinned to the test's node. */
    const applyPod = (name: string, limits: Record<string, number>) =>
      cluster.kubectl(['apply', '-f', '-'], {
        input: JSON.stringify(pinnedPod(name, ns.name, node.name, { limits })),
      });
    /** `kubectl wait --for=condition=<condition>` on a pod (a watch). */
    const podCondition = (name: string, condition: string) =>
      cluster.kubectl([
        'wait',
        '-n',
        ns.name,
        `--for=condition=${condition}`,
        `pod/${name}`,
        '--timeout=120s',
      ]);
    const claimNames = async (): Promise<string[]> =>
      (await cluster.kubectlJson<{ items: ClaimJson[] }>(['get', 'resourceclaims', '-n', ns.name])).items.map(
        (c) => c.metadata.name,
      );
    const claimDeleted = (name: string) =>
      waitFor('the special claim to be deleted', async () => !(await claimNames()).includes(name), 90_000);

    before(async () => {
      bed = await openTestBed(kind, 'extres');
      ({ work, cluster, node, ns } = bed);
      const config = parsePluginConfig(
        {
          dra: [
            {
              driver: DRIVER,
              simulated: { count: 2, numaNodes: [0], idPrefix: 'gpu' },
              cdi: { class: 'gpu' },
            },
          ],
        },
        'extended-resource.real.test.ts',
      );
      dra = await draOnBed(bed, config);
      driver = dra.drivers.get(DRIVER)!;
      deviceClass = `${ns.name}-gpu`;
      resourceName = `${ns.name}.example.com/gpu`;
      await bed.applyClusterScoped(
        driver.deviceClass({ name: deviceClass, extendedResourceName: resourceName }),
      );
      podResources = podResourcesClient(node.podResourcesSocket);
      bed.defer(() => podResources.close());
    });

    after(() => bed?.close());

    it('the API server stores the DeviceClass’s extendedResourceName', async () => {
      const stored = await cluster.kubectlJson<{ spec: { extendedResourceName?: string } }>([
        'get',
        'deviceclass',
        deviceClass,
      ]);
      assert.equal(stored.spec.extendedResourceName, resourceName);
      await waitFor('the driver’s 2 devices in this node’s ResourceSlices', async () => {
        const list = await cluster.kubectlJson<{
          items: { spec: { driver: string; devices?: { name: string }[] } }[];
        }>(['get', 'resourceslices', '--field-selector', `spec.nodeName=${node.name}`]);
        return (
          list.items.filter((s) => s.spec.driver === DRIVER).flatMap((s) => s.spec.devices ?? []).length === 2
        );
      });
    });

    it('a pod asking limits {<name>: 1} runs on a device of a special claim the scheduler created', async () => {
      await applyPod('train', { [resourceName]: 1 });
      await podCondition('train', 'Ready');
      const pod = await cluster.kubectlJson<PodJson>(['get', 'pod', '-n', ns.name, 'train']);
      const status = pod.status.extendedResourceClaimStatus;
      assert.ok(status, 'pod.status.extendedResourceClaimStatus');
      assert.deepEqual(status.requestMappings, [
        { containerName: 'main', resourceName, requestName: 'container-0-request-0' },
      ]);
      assert.equal(pod.status.resourceClaimStatuses, undefined);
      // The kubelet reports health only for claims a container names in resources.claims.
      assert.equal(pod.status.containerStatuses?.[0]?.allocatedResourcesStatus, undefined);

      const claim = await cluster.kubectlJson<ClaimJson>([
        'get',
        'resourceclaim',
        '-n',
        ns.name,
        status.resourceClaimName,
      ]);
      claimName = claim.metadata.name;
      claimUid = claim.metadata.uid;
      assert.equal(claim.metadata.generateName, 'train-extended-resources-');
      assert.match(claim.metadata.name, /^train-extended-resources-[a-z0-9]{5}$/);
      assert.deepEqual(claim.metadata.annotations, { [ANNOTATION]: 'true' });
      assert.deepEqual(claim.metadata.ownerReferences, [
        { apiVersion: 'v1', kind: 'Pod', name: 'train', uid: pod.metadata.uid, controller: true },
      ]);
      assert.deepEqual(claim.metadata.finalizers, [FINALIZER]);
      assert.deepEqual(claim.spec, {
        devices: {
          requests: [
            {
              name: 'container-0-request-0',
              exactly: { deviceClassName: deviceClass, allocationMode: 'ExactCount', count: 1 },
            },
          ],
        },
      });
      const results = claim.status?.allocation?.devices.results ?? [];
      assert.equal(results.length, 1);
      assert.equal(results[0]?.request, 'container-0-request-0');
      assert.equal(results[0]?.driver, DRIVER);
      assert.equal(results[0]?.pool, node.name);
      const device = results[0].device;
      assert.ok(['gpu-0', 'gpu-1'].includes(device), device);
      assert.deepEqual(claim.status?.reservedFor, [
        { resource: 'pods', name: 'train', uid: pod.metadata.uid },
      ]);

      assert.ok(
        driver.preparedClaims().some((c) => c.uid === claimUid),
        'the kubelet called NodePrepareResources for the special claim',
      );
      const cdi = `k8s.${DRIVER}/gpu=${claimUid}-${device}`;
      const record = node.containers().find((c) => c.request.sandboxConfig.metadata.name === 'train');
      assert.ok(record, 'the container was created');
      assert.deepEqual(
        (record.request.config.CDIDevices ?? record.request.config.cdiDevices ?? []).map((d) => d.name),
        [cdi],
      );

      const got = await podResources.get(ns.name, 'train');
      const container = got.podResources?.containers[0];
      assert.deepEqual(container?.devices, [], 'no device plugin serves the resource');
      assert.deepEqual(
        container?.dynamicResources.map((r) => ({
          claimName: r.claimName,
          claimNamespace: r.claimNamespace,
          claimResources: r.claimResources.map((c) => ({
            driverName: c.driverName,
            poolName: c.poolName,
            deviceName: c.deviceName,
            cdiDevices: c.cdiDevices.map((d) => d.name),
          })),
        })),
        [
          {
            claimName,
            claimNamespace: ns.name,
            claimResources: [
              { driverName: DRIVER, poolName: node.name, deviceName: device, cdiDevices: [cdi] },
            ],
          },
        ],
      );

      const n = await cluster.kubectlJson<NodeJson>(['get', 'node', node.name]);
      assert.equal(n.status.capacity?.[resourceName], undefined, 'the Node does not advertise the name');
      assert.equal(n.status.allocatable?.[resourceName], undefined);
    });

    it('the API server refuses a DeviceClass whose extendedResourceName is not an extended resource name (declarative validation’s message)', async () => {
      await assert.rejects(
        cluster.kubectl(['apply', '-f', '-'], {
          input: JSON.stringify(
            driver.deviceClass({ name: `${deviceClass}-bad`, extendedResourceName: 'example.com/gpu' }),
          ).replace('"example.com/gpu"', '"kubernetes.io/gpu"'),
        }),
        (err: Error) => {
          assert.match(
            err.message,
            /The DeviceClass "[^"]+-bad" is invalid: spec\.extendedResourceName: Invalid value: "kubernetes\.io\/gpu": must not have "kubernetes\.io\/" domain$/,
          );
          return true;
        },
      );
    });

    it('a pod asking for more than the node’s devices stays Pending, with no claim', async () => {
      await applyPod('big', { [resourceName]: 3 });
      await podCondition('big', 'PodScheduled=False');
      const pod = await cluster.kubectlJson<
        PodJson & { status: { conditions?: { type: string; reason?: string; message?: string }[] } }
      >(['get', 'pod', '-n', ns.name, 'big']);
      assert.equal(pod.status.phase, 'Pending');
      const scheduled = pod.status.conditions?.find((c) => c.type === 'PodScheduled');
      assert.equal(scheduled?.reason, 'Unschedulable');
      assert.match(scheduled?.message ?? '', /\b1 cannot allocate all claims\b/);
      assert.equal(pod.status.extendedResourceClaimStatus, undefined);
      assert.deepEqual(
        (await claimNames()).filter((n) => n.startsWith('big-')),
        [],
      );
      await cluster.kubectl(['delete', 'pod', '-n', ns.name, 'big', '--wait=true', '--timeout=120s']);
    });

    it('a name the node’s device plugin serves stays the device plugin’s, even with a DeviceClass mapping it', async () => {
      const fpga = `${ns.name}.example.com/fpga`;
      const fpgaClass = `${ns.name}-fpga`;
      const plugins = await startPlugins(
        parsePluginConfig(
          { resources: [{ name: fpga, simulated: { count: 1, idPrefix: 'fpga' } }] },
          'extended-resource.real.test.ts',
        ),
        { devicePluginDir: node.devicePluginDir, cdiDir: join(work, 'cdi-dp') },
      );
      try {
        const plugin = plugins.resources.get(fpga)!;
        if (plugin.registration().phase !== 'registered') await once(plugin, 'registered');
        // The scheduler reads the Node's allocatable: wait until it shows the plugin's device.
        await waitFor(
          'the Node’s allocatable to show the device plugin’s resource',
          async () =>
            (await cluster.kubectlJson<NodeJson>(['get', 'node', node.name])).status.allocatable?.[fpga] ===
            '1',
          60_000,
        );
        await cluster.kubectl(['apply', '-f', '-'], {
          input: JSON.stringify(driver.deviceClass({ name: fpgaClass, extendedResourceName: fpga })),
        });
        await applyPod('dp', { [fpga]: 1 });
        await podCondition('dp', 'Ready');
        const pod = await cluster.kubectlJson<PodJson>(['get', 'pod', '-n', ns.name, 'dp']);
        assert.equal(pod.status.extendedResourceClaimStatus, undefined);
        assert.deepEqual(
          (await claimNames()).filter((n) => n.startsWith('dp-')),
          [],
        );
        const got = await podResources.get(ns.name, 'dp');
        const container = got.podResources?.containers[0];
        assert.deepEqual(
          container?.devices.map((d) => [d.resourceName, d.deviceIds]),
          [[fpga, ['fpga-0']]],
        );
        assert.deepEqual(container?.dynamicResources, []);
        await cluster.kubectl(['delete', 'pod', '-n', ns.name, 'dp', '--wait=true', '--timeout=120s']);
      } finally {
        await plugins.stop();
        await cluster.kubectl(['delete', 'deviceclass', fpgaClass, '--ignore-not-found', '--wait=false']);
      }
    });

    it('deleting the pod unprepares and deletes the special claim', async () => {
      assert.ok(claimName, 'the previous test created the claim');
      await cluster.kubectl(['delete', 'pod', '-n', ns.name, 'train', '--wait=true', '--timeout=120s']);
      await claimDeleted(claimName);
      assert.ok(
        !driver.preparedClaims().some((c) => c.uid === claimUid),
        'the kubelet called NodeUnprepareResources',
      );
    });

    it('a NoExecute taint on the special claim’s device makes the eviction controller evict the pod', async () => {
      await applyPod('evictme', { [resourceName]: 1 });
      await podCondition('evictme', 'Ready');
      const pod = await cluster.kubectlJson<PodJson>(['get', 'pod', '-n', ns.name, 'evictme']);
      const name = pod.status.extendedResourceClaimStatus?.resourceClaimName;
      assert.ok(name);
      const claim = await cluster.kubectlJson<ClaimJson>(['get', 'resourceclaim', '-n', ns.name, name]);
      const device = claim.status?.allocation?.devices.results[0]?.device;
      assert.ok(device);
      driver.injectFault(device, 'simulated: device lost', { taint: 'NoExecute' });
      try {
        await waitFor(
          'the pod to be evicted',
          async () => {
            const list = await cluster.kubectlJson<{
              items: { metadata: { name: string; deletionTimestamp?: string } }[];
            }>(['get', 'pods', '-n', ns.name]);
            const p = list.items.find((i) => i.metadata.name === 'evictme');
            return p === undefined || p.metadata.deletionTimestamp !== undefined;
          },
          90_000,
        );
        await claimDeleted(name);
      } finally {
        driver.clearFault(device);
      }
    });
  });
