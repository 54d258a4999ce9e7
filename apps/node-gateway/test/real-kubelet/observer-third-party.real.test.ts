// The observer gateway beside a device plugin Plugboard did not write, on both kinds of node, one
// suite body: k8s.io/kubernetes's own sample device plugin (test/images/sample-device-plugin, the
// e2e tests' image: `example.com/resource`, devices Dev-1 and Dev-2), built with the Kubernetes
// binaries and started by the test bed where the kubelet's fixed device-plugin path is the node's.
// (The issue names squat/generic-device-plugin; the Go module proxy refuses it, 403 "This module
// version is not available", and a repository's sources are not copied here: docs/LOCAL-CLUSTER.md.)
// The gateway runs nothing of its own (`resources: []`) and shows the resource as the kubelet does,
// compared with the real kubectl and PodResources: capacity and allocatable, all its devices, which
// pod holds which; it refuses a fault on it (422, nothing stored); and when the plugin is unplugged
// (stopped), allocatable 0 at once with the held device named unhealthy.
//
// observer.real.test.ts holds the same gateway against Plugboard's plugin library as the other
// plugin: the one other plugin whose devices' health and NUMA nodes a test can set.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NodeSnapshot } from '@plugboard/api';
import {
  gatewayDocument,
  gatewayProcess,
  openTestBed,
  pinnedPod,
  podResourcesClient,
  testClusterKinds,
  thirdParty,
  type ClusterNode,
  type GatewayProcess,
  type SampleDevicePlugin,
  type TestBed,
  type TestCluster,
  type TestNamespace,
} from '@plugboard/testbed';

interface NodeJson {
  status: { capacity: Record<string, string>; allocatable: Record<string, string> };
}

for (const kind of testClusterKinds())
  describe(`the observer gateway beside upstream's sample device plugin on the ${kind} kubelet`, () => {
    let bed: TestBed;
    let cluster: TestCluster;
    let node: ClusterNode;
    let ns: TestNamespace;
    let plugin: SampleDevicePlugin;
    let gw: GatewayProcess;
    let resource: string;
    let held: string;

    const ofPlugin = (s: NodeSnapshot) =>
      Object.values(s.devices)
        .filter((d) => d.resource === resource)
        .sort((a, b) => a.id.localeCompare(b.id));
    const nodeJson = async (): Promise<NodeJson> => cluster.kubectlJson<NodeJson>(['get', 'node', node.name]);

    before(async () => {
      bed = await openTestBed(kind, 'obstp');
      ({ cluster, node, ns } = bed);
      bed.defer(() => plugin?.stop());
      bed.defer(() => gw?.stop());
      plugin = await thirdParty.sampleDevicePlugin(node);
      resource = plugin.resource;
      await plugin.registered(90_000);
      gw = await gatewayProcess(
        node,
        gatewayDocument(node, {
          resources: [],
          kubeconfig: cluster.adminKubeconfig(node),
          gateway: { podResources: { pollIntervalMs: 100, maxBackoffMs: 1000 } },
        }),
      );
    });

    after(() => bed?.close());

    it('shows its resource with the Node’s capacity and allocatable and every device PodResources lists', async () => {
      const s = await gw.waitForSnapshot(
        (x) =>
          x.resources[resource]?.deviceKeys.length === plugin.devices.length &&
          x.resources[resource]?.apiServer?.allocatable === plugin.devices.length,
        `${resource}: ${plugin.devices.length} devices (PodResources) and allocatable ${plugin.devices.length} (Node)`,
        60_000,
      );
      const r = s.resources[resource]!;
      assert.equal(r.servedBy, 'device-plugin');
      const n = await nodeJson();
      assert.deepEqual(
        [r.apiServer?.capacity, r.apiServer?.allocatable],
        [Number(n.status.capacity[resource]), Number(n.status.allocatable[resource])],
      );
      assert.deepEqual(
        [r.kubelet.capacity, r.kubelet.allocatable, r.kubelet.allocated],
        [plugin.devices.length, plugin.devices.length, 0],
      );
      const pr = podResourcesClient(node.podResourcesSocket);
      try {
        const listed = (await pr.allocatable()).devices.filter((d) => d.resourceName === resource);
        const expected = listed
          .flatMap((d) =>
            d.deviceIds.map((id) => [id, (d.topology?.nodes ?? []).map((x) => Number(x.ID))] as const),
          )
          .sort(([a], [b]) => a.localeCompare(b));
        assert.deepEqual(
          expected.map(([id]) => id),
          [...plugin.devices],
        );
        assert.deepEqual(
          ofPlugin(s).map((d) => [d.id, d.numaNodes, d.health, d.servedBy]),
          expected.map(([id, numa]) => [id, numa, 'Healthy', 'device-plugin']),
        );
      } finally {
        pr.close();
      }
    });

    it('a pod holding one of its devices (kubectl, the scheduler, the kubelet): the gateway names the holder', async () => {
      await cluster.kubectl(['apply', '-f', '-'], {
        input: JSON.stringify(pinnedPod('sampler', ns.name, node.name, { limits: { [resource]: 1 } })),
      });
      await cluster.kubectl([
        'wait',
        '-n',
        ns.name,
        '--for=condition=Ready',
        'pod/sampler',
        '--timeout=120s',
      ]);
      const pr = podResourcesClient(node.podResourcesSocket);
      try {
        const got = await pr.get(ns.name, 'sampler');
        const ids = got
          .podResources!.containers[0]!.devices.filter((d) => d.resourceName === resource)
          .flatMap((d) => d.deviceIds);
        assert.equal(ids.length, 1);
        held = ids[0]!;
      } finally {
        pr.close();
      }
      const s = await gw.waitForSnapshot(
        (x) => x.resources[resource]?.kubelet.allocated === 1,
        'one device held',
        30_000,
      );
      assert.deepEqual(
        ofPlugin(s).map((d) => [d.id, d.allocation]),
        plugin.devices.map((id) => [
          id,
          id === held ? { namespace: ns.name, pod: 'sampler', container: 'main' } : null,
        ]),
      );
      assert.deepEqual(s.pods[`${ns.name}/sampler`]!.containers[0]!.devices[resource], [
        `${resource}/${held}`,
      ]);
      assert.equal(s.resources[resource]!.kubelet.free, plugin.devices.length - 1);
    });

    it('a fault on its device: 422 problem+json saying why, and nothing stored', async () => {
      const res = await fetch(`${gw.url}/api/v1/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ resource, deviceId: held, reason: 'drill' }),
      });
      assert.equal(res.status, 422);
      assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
      const problem = (await res.json()) as { detail: string };
      assert.ok(
        problem.detail.includes(`gives nobody but that plugin a way to mark its device "${held}" unhealthy`),
        problem.detail,
      );
      const listed = (await (await fetch(`${gw.url}/api/v1/faults`)).json()) as { items: unknown[] };
      assert.deepEqual(listed.items, []);
    });

    it('unplugged (the plugin stops): allocatable 0 in the Node and the gateway; the held device is named unhealthy', async () => {
      await plugin.stop();
      const s = await gw.waitForSnapshot(
        (x) =>
          x.resources[resource]?.kubelet.allocatable === 0 &&
          x.resources[resource]?.apiServer?.allocatable === 0,
        'allocatable 0 in PodResources and the Node',
        60_000,
      );
      const n = await nodeJson();
      assert.equal(n.status.allocatable[resource], '0');
      const r = s.resources[resource]!;
      assert.equal(r.servedBy, 'device-plugin');
      assert.equal(r.apiServer?.capacity, Number(n.status.capacity[resource]));
      assert.match(
        r.observed!.note!,
        new RegExp(`^${plugin.devices.length} of ${plugin.devices.length} unhealthy`),
      );
      assert.deepEqual(
        ofPlugin(s).map((d) => [d.id, d.health]),
        [[held, 'Unhealthy']],
        'only the held device is named: PodResources lists healthy devices and holders',
      );
      assert.equal(s.pods[`${ns.name}/sampler`]!.affectedByUnhealthyDevice, true);
    });
  });
