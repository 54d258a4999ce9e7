// Plugboard's DRA driver on both kinds of node, one suite body: kubelet-sim (its own API server,
// scheduler, controllers and kubelet) and the real kubelet and control plane (v1.37.2 from upstream
// source), with the real kubectl on both. On the real one: the
// real plugin watcher registers it, the real API server stores its ResourceSlices, the real
// scheduler allocates a claim with a CEL selector and matchAttribute, the real kubelet prepares it
// and starts the pod with the CDI devices (upstream's fake runtime records them), PodResources
// reports them, the health stream reaches the pod's status, and the real device-taint eviction
// controller evicts the pod of a NoExecute-tainted device.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
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
import { parsePluginConfig, type DraDriver, type DraRuntime } from '../../src/index.js';
import { draOnBed } from './dra-on-bed.js';

const DRIVER = 'gpu.plugboard.example';

interface ClaimJson {
  metadata: { name: string; uid: string };
  status?: {
    allocation?: {
      devices: { results: { request: string; driver: string; pool: string; device: string }[] };
    };
  };
}
interface PodJson {
  metadata: { deletionTimestamp?: string };
  status: {
    phase: string;
    conditions?: { type: string; status: string; reason?: string }[];
    resourceClaimStatuses?: { name: string; resourceClaimName: string }[];
    containerStatuses?: {
      allocatedResourcesStatus?: { name: string; resources?: { resourceID: string; health: string }[] }[];
    }[];
  };
}

for (const kind of testClusterKinds())
  describe(`the DRA driver on the ${kind} kubelet`, () => {
    let bed: TestBed;
    let cluster: TestCluster;
    let node: ClusterNode;
    let ns: TestNamespace;
    let dra: DraRuntime;
    let driver: DraDriver;
    let podResources: PodResourcesClient;
    let deviceClass: string;

    const claimOf = async (pod: string): Promise<ClaimJson> => {
      const p = await cluster.kubectlJson<PodJson>(['get', 'pod', '-n', ns.name, pod]);
      const name = p.status.resourceClaimStatuses?.[0]?.resourceClaimName;
      assert.ok(name, `pod ${pod} has a generated claim`);
      return cluster.kubectlJson<ClaimJson>(['get', 'resourceclaim', '-n', ns.name, name]);
    };

    before(async () => {
      bed = await openTestBed(kind, 'dra');
      ({ cluster, node, ns } = bed);
      // examples/dra-node.yaml, as an operator would run it (an unhealthy device gets a NoSchedule taint).
      const example = parseYaml(
        readFileSync(new URL('../../../../examples/dra-node.yaml', import.meta.url), 'utf8'),
      ) as {
        dra: Record<string, unknown>[];
      };
      const config = parsePluginConfig(example, 'examples/dra-node.yaml');
      dra = await draOnBed(bed, config);
      driver = dra.drivers.get(DRIVER)!;
      deviceClass = `${ns.name}-gpu`;
      await bed.applyClusterScoped(driver.deviceClass({ name: deviceClass }));
      podResources = podResourcesClient(node.podResourcesSocket);
      bed.defer(() => podResources.close());
    });

    after(() => bed?.close());

    it('registers through the real plugin watcher and publishes its ResourceSlices to the real API server', async () => {
      await waitFor('the kubelet to register the driver', () => driver.registration().phase === 'registered');
      const devices = await waitFor('8 devices in this node’s ResourceSlices', async () => {
        const list = await cluster.kubectlJson<{
          items: { spec: { driver: string; devices?: { name: string }[] } }[];
        }>(['get', 'resourceslices', '--field-selector', `spec.nodeName=${node.name}`]);
        const names = list.items
          .filter((s) => s.spec.driver === DRIVER)
          .flatMap((s) => s.spec.devices?.map((d) => d.name) ?? []);
        return names.length === 8 && names;
      });
      assert.deepEqual(
        [...devices].sort(),
        driver
          .sliceDevices()
          .map((d) => d.name)
          .sort(),
      );
    });

    it('the real scheduler allocates a claim (CEL selector, matchAttribute), the kubelet prepares it and the pod runs with the CDI devices', async () => {
      const template = {
        apiVersion: 'resource.k8s.io/v1',
        kind: 'ResourceClaimTemplate',
        metadata: { name: 'pair', namespace: ns.name },
        spec: {
          spec: {
            devices: {
              requests: [
                {
                  name: 'gpus',
                  exactly: {
                    deviceClassName: deviceClass,
                    count: 2,
                    selectors: [{ cel: { expression: `device.attributes["${DRIVER}"].model == "PB-100"` } }],
                  },
                },
              ],
              constraints: [{ requests: ['gpus'], matchAttribute: 'resource.kubernetes.io/numaNode' }],
            },
          },
        },
      };
      const pod = pinnedPod('train', ns.name, node.name, { claims: { gpus: { template: 'pair' } } });
      await cluster.kubectl(['apply', '-f', '-'], {
        input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [template, pod] }),
      });
      await cluster.kubectl(['wait', '-n', ns.name, '--for=condition=Ready', 'pod/train', '--timeout=120s']);
      const claim = await claimOf('train');
      const results = claim.status?.allocation?.devices.results ?? [];
      assert.equal(results.length, 2);
      assert.ok(results.every((r) => r.driver === DRIVER && r.pool === node.name));
      const numa = results.map((r) => {
        const attr = driver.sliceDevices().find((d) => d.name === r.device)?.attributes?.[
          'resource.kubernetes.io/numaNode'
        ];
        return attr && 'int' in attr ? attr.int : undefined;
      });
      assert.notEqual(numa[0], undefined);
      assert.equal(numa[0], numa[1], 'matchAttribute: both devices on one NUMA node');
      assert.ok(
        driver.preparedClaims().some((c) => c.uid === claim.metadata.uid),
        'the kubelet called NodePrepareResources',
      );
      const record = node.containers().find((c) => c.request.sandboxConfig.metadata.name === 'train');
      assert.ok(record, 'the fake runtime was asked to create the container');
      const cdi = (record.request.config.CDIDevices ?? record.request.config.cdiDevices ?? [])
        .map((d) => d.name)
        .sort();
      assert.deepEqual(cdi, results.map((r) => `k8s.${DRIVER}/gpu=${claim.metadata.uid}-${r.device}`).sort());
      const got = await podResources.get(ns.name, 'train');
      const dynamic = got.podResources?.containers[0]?.dynamicResources ?? [];
      assert.equal(dynamic[0]?.claimName, claim.metadata.name);
      assert.deepEqual(
        dynamic[0]?.claimResources.map((r) => `${r.driverName}/${r.poolName}/${r.deviceName}`).sort(),
        results.map((r) => `${DRIVER}/${node.name}/${r.device}`).sort(),
      );
      // Each device's entry names its own CDI device. (The real kubelet 1.37.2 also repeats the CDI
      // devices of the driver's earlier devices in each later entry: GetDynamicResources in
      // pkg/kubelet/cm/container_manager_linux.go declares its cdiDevices slice outside the device
      // loop; kubelet-sim does the same, docs/KUBELET-SIM.md.)
      for (const r of dynamic[0]?.claimResources ?? []) {
        assert.ok(
          r.cdiDevices.some((d) => d.name === `k8s.${DRIVER}/gpu=${claim.metadata.uid}-${r.deviceName}`),
          `${r.deviceName}: ${JSON.stringify(r.cdiDevices)}`,
        );
      }
      assert.deepEqual(
        [...new Set(dynamic[0]?.claimResources.flatMap((r) => r.cdiDevices.map((d) => d.name)))].sort(),
        cdi,
      );
    });

    it('a health fault reaches the pod’s allocatedResourcesStatus through the real kubelet', async () => {
      const claim = await claimOf('train');
      const device = claim.status!.allocation!.devices.results[0]!.device;
      // The real kubelet names a DRA entry `claim:<pod claim name>` and each device by its CDI device ID.
      const resourceID = `k8s.${DRIVER}/gpu=${claim.metadata.uid}-${device}`;
      const health = async (): Promise<string | undefined> => {
        const p = await cluster.kubectlJson<PodJson>(['get', 'pod', '-n', ns.name, 'train']);
        const status = p.status.containerStatuses?.[0]?.allocatedResourcesStatus?.find(
          (s) => s.name === 'claim:gpus',
        );
        return status?.resources?.find((r) => r.resourceID === resourceID)?.health;
      };
      await waitFor(
        'the device reported Healthy first',
        async () => (await health()) === 'Healthy',
        90_000,
      ).catch(async (err: Error) => {
        const p = await cluster.kubectlJson<PodJson>(['get', 'pod', '-n', ns.name, 'train']);
        throw new Error(
          `${err.message}; the pod's allocatedResourcesStatus: ${JSON.stringify(p.status.containerStatuses?.[0]?.allocatedResourcesStatus)}`,
        );
      });
      driver.injectFault(device, 'simulated ECC errors');
      await waitFor(
        'the pod to report the device Unhealthy',
        async () => (await health()) === 'Unhealthy',
        90_000,
      );
      driver.clearFault(device);
      await waitFor(
        'the pod to report the device Healthy again',
        async () => (await health()) === 'Healthy',
        90_000,
      );
    });

    it('a NoExecute taint on the device makes the real eviction controller evict the pod', async () => {
      const claim = await claimOf('train');
      const device = claim.status!.allocation!.devices.results[0]!.device;
      driver.injectFault(device, 'simulated: device lost', { taint: 'NoExecute' });
      const evicted = await waitFor(
        'the pod to be evicted',
        async () => {
          try {
            const p = await cluster.kubectlJson<PodJson>(['get', 'pod', '-n', ns.name, 'train']);
            const target = p.status.conditions?.find((c) => c.type === 'DisruptionTarget');
            return (
              (p.metadata.deletionTimestamp !== undefined || p.status.phase === 'Failed') &&
              (target?.reason ?? 'gone')
            );
          } catch (err) {
            return /NotFound/.test(String(err)) && 'deleted';
          }
        },
        90_000,
      );
      assert.ok(evicted === 'DeletionByDeviceTaintManager' || evicted === 'deleted', String(evicted));
      driver.clearFault(device);
    });
  });
