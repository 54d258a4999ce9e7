// Partitionable devices (KEP-4815) and consumable capacity (KEP-5075), both beta and on by default
// in 1.37, published by Plugboard's DraDriver and run on both kinds of node with one suite body:
// kubelet-sim (its API server, its allocator, its kubelet) and the real v1.37.2 control plane and
// kubelet, driven by the real kubectl. (i) A GPU published as a whole, two halves and four quarters
// over one counter set — counters in a slice of their own, the partitions in another — pods take
// quarters, and a whole stays Pending while they hold them and runs once they go. (ii) A GPU shared
// by claims (allowMultipleAllocations, 40Gi of memory): two 20Gi claims run on it with their own
// share IDs and consumed capacity, prepared each with its own share; a third stays Pending. (iii) The
// API server refuses a slice holding both counter sets and devices.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  openTestBed,
  pinnedPod,
  podResourcesClient,
  removeDraObjects,
  testClusterKinds,
  waitFor,
  type ClusterNode,
  type PodResourcesClient,
  type TestBed,
  type TestCluster,
  type TestNamespace,
} from '@plugboard/testbed';
import { Quantity } from '@plugboard/apimachinery';
import {
  DraDriver,
  deviceClassFor,
  evenPartitions,
  kubeApiFromKubeConfig,
  SimulatedSource,
} from '../../src/index.js';

const PARTITIONED = 'part.plugboard.example';
const SHARED = 'share.plugboard.example';

interface ClaimJson {
  metadata: { name: string; uid: string };
  status?: {
    allocation?: {
      devices: {
        results: {
          request: string;
          driver: string;
          pool: string;
          device: string;
          shareID?: string;
          consumedCapacity?: Record<string, string>;
        }[];
      };
    };
  };
}
interface PodJson {
  status: {
    phase: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    resourceClaimStatuses?: { name: string; resourceClaimName: string }[];
  };
}

for (const kind of testClusterKinds())
  describe(`partitions and shared devices of the DRA driver on the ${kind} kubelet`, () => {
    let cluster: TestCluster;
    let bed: TestBed;
    let node: ClusterNode;
    let ns: TestNamespace;
    let partitioned: DraDriver;
    let shared: DraDriver;
    let podResources: PodResourcesClient;
    let work: string;
    let partClass: string;
    let shareClass: string;

    const apply = (...items: unknown[]) =>
      cluster.kubectl(['apply', '-f', '-'], {
        input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }),
      });

    /** A pod with a claim from a template of its own (one request). */
    const podWithClaim = (name: string, exactly: Record<string, unknown>): unknown[] => [
      {
        apiVersion: 'resource.k8s.io/v1',
        kind: 'ResourceClaimTemplate',
        metadata: { name, namespace: ns.name },
        spec: { spec: { devices: { requests: [{ name: 'gpu', exactly }] } } },
      },
      pinnedPod(name, ns.name, node.name, { claims: { gpu: { template: name } } }),
    ];

    const partition = (name: string, kindOf: string): unknown[] =>
      podWithClaim(name, {
        deviceClassName: partClass,
        selectors: [{ cel: { expression: `device.attributes["${PARTITIONED}"].partition == "${kindOf}"` } }],
      });
    const share = (name: string, memory: string): unknown[] =>
      podWithClaim(name, { deviceClassName: shareClass, capacity: { requests: { memory } } });

    const ready = (...pods: string[]) =>
      cluster.kubectl([
        'wait',
        '-n',
        ns.name,
        '--for=condition=Ready',
        ...pods.map((p) => `pod/${p}`),
        '--timeout=120s',
      ]);

    /** Waits (a watch) for the scheduler to give up on the pod, and returns its PodScheduled condition. */
    const unschedulable = async (pod: string) => {
      await cluster.kubectl([
        'wait',
        '-n',
        ns.name,
        '--for=condition=PodScheduled=False',
        `pod/${pod}`,
        '--timeout=120s',
      ]);
      const p = await cluster.kubectlJson<PodJson>(['get', 'pod', '-n', ns.name, pod]);
      return {
        phase: p.status.phase,
        condition: p.status.conditions?.find((c) => c.type === 'PodScheduled'),
      };
    };

    const claimOf = async (pod: string): Promise<ClaimJson> => {
      const p = await cluster.kubectlJson<PodJson>(['get', 'pod', '-n', ns.name, pod]);
      const name = p.status.resourceClaimStatuses?.[0]?.resourceClaimName;
      assert.ok(name, `pod ${pod} has a generated claim`);
      return cluster.kubectlJson<ClaimJson>(['get', 'resourceclaim', '-n', ns.name, name]);
    };

    const sliceSpecs = async (driver: string) => {
      const list = await cluster.kubectlJson<{
        items: {
          spec: {
            driver: string;
            pool: { name: string; resourceSliceCount: number };
            devices?: { name: string; consumesCounters?: { counterSet: string }[] }[];
            sharedCounters?: { name: string; counters: Record<string, { value: string }> }[];
          };
        }[];
      }>(['get', 'resourceslices', '--field-selector', `spec.nodeName=${node.name}`]);
      return list.items.filter((s) => s.spec.driver === driver).map((s) => s.spec);
    };

    before(async () => {
      bed = await openTestBed(kind, 'parts');
      ({ work, cluster, node, ns } = bed);
      bed.defer(() => removeDraObjects(cluster, node.name));
      const kube = await kubeApiFromKubeConfig({ kubeconfig: cluster.adminKubeconfig(node) });
      const common = {
        nodeName: node.name,
        kube,
        pluginsDir: node.pluginsDir,
        pluginsRegistryDir: node.pluginsRegistryDir,
        cdiDir: join(work, 'cdi'),
      };
      partitioned = new DraDriver({
        ...common,
        driverName: PARTITIONED,
        source: new SimulatedSource({ count: 1, idPrefix: 'gpu' }),
        cdi: { class: 'gpu' },
        partitions: {
          counters: () => ({ memory: '40Gi' }),
          partitions: evenPartitions({ memory: '40Gi' }, [1, 2, 4]),
        },
      });
      shared = new DraDriver({
        ...common,
        driverName: SHARED,
        source: new SimulatedSource({ count: 1, idPrefix: 'gpu' }),
        cdi: { class: 'gpu' },
        allowMultipleAllocations: true,
        capacity: () => ({
          memory: {
            value: '40Gi',
            requestPolicy: { default: '10Gi', validRange: { min: '10Gi', step: '10Gi' } },
          },
        }),
      });
      bed.defer(() => partitioned.stop());
      bed.defer(() => shared.stop());
      await partitioned.start();
      await shared.start();
      partClass = `${ns.name}-part`;
      shareClass = `${ns.name}-share`;
      await bed.applyClusterScoped(
        deviceClassFor(PARTITIONED, { name: partClass }),
        deviceClassFor(SHARED, { name: shareClass }),
      );
      podResources = podResourcesClient(node.podResourcesSocket);
      bed.defer(() => podResources.close());
      await waitFor(
        'the kubelet to register both drivers',
        () =>
          partitioned.registration().phase === 'registered' && shared.registration().phase === 'registered',
      );
    });

    after(() => bed?.close());

    it('publishes the counter set in a slice of its own and the partitions in another, one pool', async () => {
      const specs = await waitFor('two slices of the partitioned driver', async () => {
        const s = await sliceSpecs(PARTITIONED);
        return s.length === 2 && s.some((x) => x.devices?.length) && s;
      });
      const counters = specs.find((s) => s.sharedCounters);
      const devices = specs.find((s) => s.devices);
      assert.equal(counters?.devices, undefined, 'the counter slice has no devices');
      assert.equal(devices?.sharedCounters, undefined, 'the device slice has no counters');
      assert.deepEqual(counters?.sharedCounters, [
        { name: 'gpu-0', counters: { memory: { value: '40Gi' } } },
      ]);
      assert.deepEqual(
        devices?.devices?.map((d) => d.name),
        [
          'gpu-0-whole',
          'gpu-0-half-0',
          'gpu-0-half-1',
          'gpu-0-quarter-0',
          'gpu-0-quarter-1',
          'gpu-0-quarter-2',
          'gpu-0-quarter-3',
        ],
      );
      assert.ok(devices?.devices?.every((d) => d.consumesCounters?.[0]?.counterSet === 'gpu-0'));
      assert.deepEqual(
        specs.map((s) => [s.pool.name, s.pool.resourceSliceCount]),
        [
          [node.name, 2],
          [node.name, 2],
        ],
      );
    });

    it('pods take two quarters; a whole stays Pending with the scheduler’s reason while they hold them', async () => {
      await apply(...partition('quarter-a', 'quarter'), ...partition('quarter-b', 'quarter'));
      await ready('quarter-a', 'quarter-b');
      const devices = await Promise.all(
        ['quarter-a', 'quarter-b'].map(
          async (p) => (await claimOf(p)).status?.allocation?.devices.results[0]?.device,
        ),
      );
      assert.ok(
        devices.every((d) => d?.startsWith('gpu-0-quarter-')),
        `quarters: ${devices.join(', ')}`,
      );
      assert.notEqual(devices[0], devices[1]);
      assert.equal(partitioned.preparedClaims().length, 2, 'each quarter prepared by the driver');

      await apply(...partition('whole', 'whole'));
      const { phase, condition } = await unschedulable('whole');
      assert.equal(phase, 'Pending');
      assert.equal(condition?.reason, 'Unschedulable');
      // The node count differs (kubelet-sim is a cluster of one node); the verdict on this node does not.
      assert.match(condition?.message ?? '', /\b1 cannot allocate all claims\b/);
      assert.equal((await claimOf('whole')).status?.allocation, undefined, 'the whole is not allocated');
    });

    it('when the quarters’ pods go, their counters are free again: the whole is allocated and runs', async () => {
      await cluster.kubectl([
        'delete',
        'pod',
        '-n',
        ns.name,
        'quarter-a',
        'quarter-b',
        '--wait=true',
        '--timeout=120s',
      ]);
      await ready('whole');
      const whole = (await claimOf('whole')).status?.allocation?.devices.results[0]?.device;
      assert.equal(whole, 'gpu-0-whole');
      assert.deepEqual(
        partitioned.preparedClaims().map((c) => c.uid),
        [(await claimOf('whole')).metadata.uid],
        'the quarters unprepared, the whole prepared',
      );
      await cluster.kubectl(['delete', 'pod', '-n', ns.name, 'whole', '--wait=true', '--timeout=120s']);
    });

    it('two 20Gi claims run on one shared 40Gi device with their own share IDs; a third stays Pending', async () => {
      await apply(...share('share-a', '20Gi'), ...share('share-b', '15Gi'));
      await ready('share-a', 'share-b');
      const results = await Promise.all(
        ['share-a', 'share-b'].map(async (p) => (await claimOf(p)).status?.allocation?.devices.results[0]),
      );
      assert.deepEqual(
        results.map((r) => r?.device),
        ['gpu-0', 'gpu-0'],
      );
      assert.ok(results[0]?.shareID && results[1]?.shareID, 'each allocation has a share ID');
      assert.notEqual(results[0]?.shareID, results[1]?.shareID);
      // 15Gi rounds up to the policy's next step (min 10Gi, step 10Gi): 20Gi.
      for (const r of results) {
        assert.equal(Quantity.parse(r?.consumedCapacity?.['memory'] ?? '0').cmp(Quantity.parse('20Gi')), 0);
      }
      // Each claim prepared with its own share, and reported with it by PodResources.
      const prepared = shared.preparedClaims().flatMap((c) => c.devices.map((d) => d.shareId));
      assert.deepEqual(prepared.sort(), results.map((r) => r?.shareID).sort());
      for (const [i, pod] of ['share-a', 'share-b'].entries()) {
        const got = await podResources.get(ns.name, pod);
        const resource = got.podResources?.containers[0]?.dynamicResources[0]?.claimResources[0];
        assert.equal(resource?.deviceName, 'gpu-0');
        assert.equal(resource?.shareId, results[i]?.shareID, `${pod}: PodResources share_id`);
      }

      await apply(...share('share-c', '20Gi'));
      const { phase, condition } = await unschedulable('share-c');
      assert.equal(phase, 'Pending');
      assert.equal(condition?.reason, 'Unschedulable');
      assert.match(condition?.message ?? '', /\b1 cannot allocate all claims\b/);
    });

    it('the API server refuses a slice holding both sharedCounters and devices', async () => {
      const name = `${ns.name}-mixed`;
      const err = await cluster
        .kubectl(['apply', '-f', '-'], {
          input: JSON.stringify({
            apiVersion: 'resource.k8s.io/v1',
            kind: 'ResourceSlice',
            metadata: { name },
            spec: {
              driver: PARTITIONED,
              nodeName: node.name,
              pool: { name: `${node.name}-mixed`, generation: 1, resourceSliceCount: 1 },
              sharedCounters: [{ name: 'gpu-9', counters: { memory: { value: '40Gi' } } }],
              devices: [{ name: 'gpu-9-whole' }],
            },
          }),
        })
        .then(
          () => undefined,
          (e: Error) => e.message,
        );
      // kubectl prints the API server's 422 the same way on both kinds, word for word.
      assert.equal(
        err,
        `kubectl apply -f -: The ResourceSlice "${name}" is invalid: spec: Invalid value: "": only one of \`sharedCounters\` or \`devices\` is allowed`,
      );
    });
  });
