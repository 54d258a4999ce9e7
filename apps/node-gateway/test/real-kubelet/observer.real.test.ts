// The observer gateway on both kinds of node, one suite body: kubelet-sim and a real kubelet (v1.37.2
// from upstream source). The gateway (the plugboard-gateway binary, through the test bed) runs no
// device plugin of its own (`resources: []`, or no --config at all); another device plugin —
// Plugboard's plugin library started in this process with a resource the gateway's config does not
// list — is registered with the kubelet over real Unix sockets. The gateway shows that resource as
// the kubelet does, compared with what the real kubectl and PodResources report: capacity and
// allocatable, every device with its NUMA node, which pod holds which, the unhealthy count the
// kubelet does not itemise; it refuses a fault on it (422), storing nothing; and when the plugin
// goes, allocatable 0 at once with the capacity kept for the kubelet's grace period (5 minutes on
// the real kubelet; on kubelet-sim, whose grace period a test can shorten, also capacity 0 after it:
// docs/KUBELET-SIM-FIDELITY.md).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { NodeSnapshot } from '@plugboard/api';
import { parsePluginConfig, startPlugins, type PluginRuntime } from '@plugboard/plugin';
import {
  gatewayDocument,
  gatewayProcess,
  openTestBed,
  pinnedPod,
  podResourcesClient,
  testClusterKinds,
  waitFor,
  type ClusterNode,
  type GatewayProcess,
  type TestBed,
  type TestCluster,
  type TestNamespace,
} from '@plugboard/testbed';

const OTHER = 'other.example/gpu';
/**
 * kubelet-sim's grace period for a gone plugin (upstream: 5 minutes): long enough for the gateway
 * to show the real kubelet's state within it (allocatable 0, capacity kept) before capacity 0.
 */
const SIM_GRACE_MS = 4000;

interface NodeJson {
  status: { capacity: Record<string, string>; allocatable: Record<string, string> };
}
interface EventList {
  items: { reason: string; message: string; involvedObject: { kind: string; name: string } }[];
}

const otherDevices = (s: NodeSnapshot) => Object.values(s.devices).filter((d) => d.resource === OTHER);

for (const kind of testClusterKinds())
  describe(`the observer gateway on the ${kind} kubelet`, () => {
    let bed: TestBed;
    let cluster: TestCluster;
    let node: ClusterNode;
    let ns: TestNamespace;
    let other: PluginRuntime | null = null;
    let gw: GatewayProcess | null = null;

    before(async () => {
      bed = await openTestBed(kind, 'obs', { sim: { gracePeriodMs: SIM_GRACE_MS } });
      ({ cluster, node, ns } = bed);
      bed.defer(() => other?.stop());
      bed.defer(() => gw?.stop());
      other = await startPlugins(
        parsePluginConfig({
          resources: [{ name: OTHER, simulated: { count: 4, numaNodes: [0, 1], idPrefix: 'og' } }],
        }),
        { devicePluginDir: node.devicePluginDir, logger: pino({ level: 'silent' }) },
      );
    });

    after(() => bed?.close());

    it('no --config: the gateway starts as an observer from its flags and shows the other plugin', async () => {
      const flagsOnly = await gatewayProcess(node, gatewayDocument(node), {
        flagsOnly: [
          '--node-name',
          node.name,
          '--listen',
          '127.0.0.1:0',
          '--kubeconfig',
          cluster.adminKubeconfig(node),
          '--pod-resources-socket',
          node.podResourcesSocket,
          '--device-plugin-dir',
          node.devicePluginDir,
        ],
      });
      try {
        const s = await flagsOnly.waitForSnapshot(
          (x) => x.resources[OTHER]?.deviceKeys.length === 4,
          'the other plugin observed through PodResources',
          60_000,
        );
        assert.equal(s.resources[OTHER]!.servedBy, 'device-plugin');
        assert.deepEqual(
          Object.values(s.resources).filter((r) => r.servedBy === 'plugin'),
          [],
          'nothing of its own',
        );
        const ready = await fetch(`${flagsOnly.url}/readyz`);
        // Read to the end: a response left unread holds its connection, which the gateway's stop awaits.
        assert.equal(
          ready.status,
          200,
          `an observer is ready: it has no plugin to wait for (${await ready.text()})`,
        );
      } finally {
        await flagsOnly.stop();
      }
    });

    it("resources: [] shows the other plugin's resource as kubectl and PodResources do, refuses a fault on it, follows its devices' health and its leaving", async () => {
      gw = await gatewayProcess(
        node,
        gatewayDocument(node, {
          resources: [],
          kubeconfig: cluster.adminKubeconfig(node),
          gateway: { podResources: { pollIntervalMs: 100, maxBackoffMs: 1000 } },
        }),
      );
      let s = await gw.waitForSnapshot(
        (x) => x.resources[OTHER]?.deviceKeys.length === 4 && x.resources[OTHER]?.apiServer?.capacity === 4,
        'four devices (PodResources) and capacity 4 (Node)',
        60_000,
      );
      const r = s.resources[OTHER]!;
      assert.equal(r.servedBy, 'device-plugin');
      assert.deepEqual(r.kubelet, {
        capacity: 4,
        allocatable: 4,
        allocated: 0,
        free: 4,
        healthy: 4,
        unhealthy: 0,
      });
      assert.deepEqual(r.observed, { unhealthy: 0, unhealthyNamed: 0, note: null });
      assert.deepEqual(
        otherDevices(s).map((d) => [d.id, d.numaNodes, d.health, d.servedBy]),
        [
          ['og-0', [0], 'Healthy', 'device-plugin'],
          ['og-1', [0], 'Healthy', 'device-plugin'],
          ['og-2', [1], 'Healthy', 'device-plugin'],
          ['og-3', [1], 'Healthy', 'device-plugin'],
        ],
      );
      // The same numbers as the Node (kubectl) and the devices PodResources lists as allocatable.
      const nodeJson = await cluster.kubectlJson<NodeJson>(['get', 'node', node.name]);
      assert.deepEqual(
        [r.apiServer?.capacity, r.apiServer?.allocatable],
        [Number(nodeJson.status.capacity[OTHER]), Number(nodeJson.status.allocatable[OTHER])],
      );
      const pr = podResourcesClient(node.podResourcesSocket);
      try {
        const ids = (await pr.allocatable()).devices
          .filter((d) => d.resourceName === OTHER)
          .flatMap((d) => d.deviceIds);
        assert.deepEqual(
          r.deviceKeys,
          ids.sort().map((id) => `${OTHER}/${id}`),
        );
      } finally {
        pr.close();
      }

      // Which pod holds which: a pod through the real kubectl, placed by the scheduler and admitted by
      // the kubelet; the kubelet's allocation as PodResources List reports it.
      await cluster.kubectl(['apply', '-f', '-'], {
        input: JSON.stringify(pinnedPod('train', ns.name, node.name, { limits: { [OTHER]: 2 } })),
      });
      await cluster.kubectl(['wait', '-n', ns.name, '--for=condition=Ready', 'pod/train', '--timeout=120s']);
      const podResources = podResourcesClient(node.podResourcesSocket);
      let held: Set<string>;
      try {
        const got = await podResources.get(ns.name, 'train');
        held = new Set(
          got
            .podResources!.containers[0]!.devices.filter((d) => d.resourceName === OTHER)
            .flatMap((d) => d.deviceIds),
        );
      } finally {
        podResources.close();
      }
      assert.equal(held.size, 2);
      s = await gw.waitForSnapshot((x) => x.resources[OTHER]?.kubelet.allocated === 2, 'two devices held');
      for (const d of otherDevices(s)) {
        assert.deepEqual(
          d.allocation,
          held.has(d.id) ? { namespace: ns.name, pod: 'train', container: 'main' } : null,
          d.id,
        );
      }
      assert.deepEqual(
        s.pods[`${ns.name}/train`]!.containers[0]!.devices[OTHER]!.sort(),
        [...held].map((id) => `${OTHER}/${id}`).sort(),
      );

      // A fault on it: 422 problem+json saying why, and nothing stored.
      const res = await fetch(`${gw.url}/api/v1/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ resource: OTHER, deviceId: 'og-0', reason: 'drill' }),
      });
      assert.equal(res.status, 422);
      assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
      const problem = (await res.json()) as { detail: string };
      assert.match(
        problem.detail,
        /another device plugin.*gives nobody but that plugin a way to mark its device "og-0" unhealthy/,
      );
      const listed = (await (await fetch(`${gw.url}/api/v1/faults`)).json()) as { items: unknown[] };
      assert.deepEqual(listed.items, []);

      // The other plugin marks a free device unhealthy: the kubelet drops it from allocatable and says
      // how many, not which (PodResources lists healthy devices only).
      const free = ['og-0', 'og-1', 'og-2', 'og-3'].find((id) => !held.has(id))!;
      other!.resources.get(OTHER)!.injectFault(free, 'its own health check');
      s = await gw.waitForSnapshot(
        (x) =>
          x.resources[OTHER]?.kubelet.allocatable === 3 && x.resources[OTHER]?.apiServer?.allocatable === 3,
        'allocatable 3',
        30_000,
      );
      assert.deepEqual(s.resources[OTHER]!.observed, {
        unhealthy: 1,
        unhealthyNamed: 0,
        note: '1 of 4 unhealthy — the kubelet does not say which unless a pod holds them',
      });
      assert.equal(s.devices[`${OTHER}/${free}`], undefined, 'the kubelet does not name it');

      // A held device going unhealthy is named (it is held, yet not among the healthy).
      const heldId = [...held].sort()[0]!;
      other!.resources.get(OTHER)!.injectFault(heldId, 'its own health check');
      s = await gw.waitForSnapshot(
        (x) => x.devices[`${OTHER}/${heldId}`]?.health === 'Unhealthy',
        'the held device unhealthy',
      );
      assert.equal(s.resources[OTHER]!.observed?.unhealthyNamed, 1);
      assert.equal(s.pods[`${ns.name}/train`]!.affectedByUnhealthyDevice, true);

      // The plugin goes: the kubelet marks its devices unhealthy at once (allocatable 0) and keeps the
      // capacity for its grace period; the resource stays. Only the held devices are named.
      await other!.stop();
      other = null;
      s = await gw.waitForSnapshot(
        (x) =>
          x.resources[OTHER]?.kubelet.allocatable === 0 && x.resources[OTHER]?.apiServer?.allocatable === 0,
        'allocatable 0 in PodResources and the Node',
        30_000,
      );
      const leaving = s.resources[OTHER]!;
      assert.deepEqual([leaving.apiServer?.capacity, leaving.kubelet.capacity], [4, 4]);
      assert.match(leaving.observed!.note!, /^4 of 4 unhealthy .*5-minute grace period/);
      assert.deepEqual(
        otherDevices(s)
          .map((d) => [d.id, d.health])
          .sort(),
        [...held].sort().map((id) => [id, 'Unhealthy']),
      );

      if (kind === 'sim') {
        // The grace period ends: capacity 0, and the resource stays (the kubelet keeps it in the Node
        // status at 0). The real kubelet's grace period is 5 minutes (pkg/kubelet/cm/devicemanager:
        // endpointStopGracePeriod), which kubelet-sim's shortened one stands in for here.
        s = await gw.waitForSnapshot(
          (x) => x.resources[OTHER]?.apiServer?.capacity === 0 && x.resources[OTHER]?.kubelet.capacity === 0,
          'capacity 0 after the grace period',
          SIM_GRACE_MS + 15_000,
        );
        const gone = s.resources[OTHER]!;
        assert.deepEqual(
          [gone.servedBy, gone.kubelet.allocatable, gone.registration.phase],
          ['device-plugin', 0, 'stopped'],
        );
        assert.match(gone.registration.error!, /grace period ended/);
      }

      // What the kubelet showed changing: ring events (the last one lands in the change after) and
      // Events on the Node.
      // The plugin leaving (allocatable 0, capacity kept: both kinds) and, on kubelet-sim, the grace
      // period's end (capacity 0).
      const leftChange = /other\.example\/gpu .*capacity 4, allocatable 0: 4 of 4 unhealthy/;
      const lastChange = kind === 'sim' ? /capacity 0, allocatable 0 .*was capacity 4/ : leftChange;
      s = await gw.waitForSnapshot(
        (x) => x.events.some((e) => e.resource === OTHER && lastChange.test(e.message)),
        'the last change as a ring event',
      );
      const ring = s.events
        .filter((e) => e.kind === 'registration' && e.resource === OTHER)
        .map((e) => e.message);
      assert.ok(
        ring.some((m) => /capacity 4, allocatable 3: 1 of 4 unhealthy/.test(m)),
        ring.join('\n'),
      );
      assert.ok(
        ring.some((m) => leftChange.test(m)),
        ring.join('\n'),
      );
      assert.ok(
        ring.some((m) => lastChange.test(m)),
        ring.join('\n'),
      );
      assert.ok(
        s.events.some((e) => e.kind === 'health' && e.resource === OTHER && e.deviceIds[0] === heldId),
        'the held device going unhealthy is a health event',
      );
      const events = async (): Promise<EventList> =>
        cluster.kubectlJson<EventList>([
          'get',
          'events',
          '-A',
          '--field-selector',
          `involvedObject.kind=Node,involvedObject.name=${node.name}`,
        ]);
      const posted = await waitFor(
        'ObservedResourceChanged Events on the Node',
        async () => {
          const list = await events();
          const changed = list.items.filter((e) => e.reason === 'ObservedResourceChanged');
          return changed.some((e) => /other\.example\/gpu .*capacity 4, allocatable 3/.test(e.message)) &&
            changed.some((e) => leftChange.test(e.message)) &&
            changed.some((e) => lastChange.test(e.message))
            ? changed
            : null;
        },
        30_000,
      );
      assert.ok(posted.length >= (kind === 'sim' ? 3 : 2), JSON.stringify(posted));

      const metrics = await (await fetch(`${gw.url}/metrics`)).text();
      assert.match(
        metrics,
        /plugboard_resource_served_by\{[^}]*resource="other\.example\/gpu",served_by="device-plugin"[^}]*\} 1/,
      );
      assert.match(
        metrics,
        new RegExp(
          `plugboard_resource_capacity_devices\\{[^}]*resource="other\\.example/gpu"[^}]*\\} ${kind === 'sim' ? 0 : 4}`,
        ),
      );
      assert.doesNotMatch(metrics, /plugboard_device_plugin_registered\{[^}]*other\.example/);
    });
  });
