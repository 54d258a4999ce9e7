// The observer gateway on a real node: no plugin of its own (`resources: []`), another device plugin
// (Plugboard's plugin library, started here with a resource the gateway does not list) registered
// with a real kubelet (v1.37.2 from upstream source). The gateway's view of that resource is compared
// with what the real kubectl and PodResources report; a fault on it is refused; when the plugin goes,
// the real kubelet drops allocatable to 0 at once and keeps the capacity for its 5-minute grace
// period, and the gateway shows exactly that (the capacity-0 step is covered on kubelet-sim, whose
// grace period a test can shorten: test/observer.int.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { NodeSnapshot } from '@plugboard/api';
import { parsePluginConfig, startPlugins, type PluginRuntime } from '@plugboard/plugin';
import {
  podResourcesClient,
  realCluster,
  waitFor,
  type RealCluster,
  type RealNode,
} from '@plugboard/testbed';
import { parseGatewayConfig, startGateway, type Gateway } from '../../src/index.js';

const OTHER = 'other.example/gpu';
const silent = pino({ level: 'silent' });

interface NodeJson {
  status: { capacity: Record<string, string>; allocatable: Record<string, string> };
}

describe('the observer gateway on a real node', () => {
  let cluster: RealCluster;
  let node: RealNode;
  let ns: { name: string; remove(): Promise<void> };
  let other: PluginRuntime | null = null;
  let gw: Gateway;

  const snapshot = async (): Promise<NodeSnapshot> =>
    (await (await fetch(`${gw.url}/api/v1/node`)).json()) as NodeSnapshot;

  before(async () => {
    cluster = realCluster();
    ns = await cluster.namespace('obs');
    node = await cluster.addNode('obs');
    await cluster.kubectl(['label', 'node', node.name, `plugboard.example/test-run=${ns.name}`]);
    other = await startPlugins(
      parsePluginConfig({
        resources: [{ name: OTHER, simulated: { count: 4, numaNodes: [0], idPrefix: 'og' } }],
      }),
      { devicePluginDir: node.devicePluginDir, logger: silent },
    );
    gw = await startGateway(
      parseGatewayConfig({
        resources: [],
        gateway: {
          nodeName: node.name,
          listen: '127.0.0.1:0',
          devicePluginDir: node.devicePluginDir,
          podResources: { socket: node.podResourcesSocket, pollIntervalMs: 200, maxBackoffMs: 1000 },
          kube: { mode: 'kubeconfig', kubeconfig: cluster.kubeconfig },
          faults: { enabled: true },
        },
      }),
      { logger: silent },
    );
  });

  after(async () => {
    await gw?.stop();
    await other?.stop();
    await ns?.remove();
    await node?.remove();
  });

  it("shows the other plugin's resource as kubectl and PodResources do, refuses a fault on it, and follows its leaving", async () => {
    let s = await waitFor(
      'the other plugin observed',
      async () => {
        const x = await snapshot();
        const r = x.resources[OTHER];
        return r?.deviceKeys.length === 4 && r.apiServer?.capacity === 4 ? x : null;
      },
      60_000,
    );
    const nodeJson = await cluster.kubectlJson<NodeJson>(['get', 'node', node.name]);
    const r = s.resources[OTHER]!;
    assert.equal(r.servedBy, 'device-plugin');
    assert.deepEqual(
      [r.apiServer?.capacity, r.apiServer?.allocatable],
      [Number(nodeJson.status.capacity[OTHER]), Number(nodeJson.status.allocatable[OTHER])],
    );
    const pr = podResourcesClient(node.podResourcesSocket);
    try {
      const alloc = await pr.allocatable();
      const ids: string[] = alloc.devices.filter((d) => d.resourceName === OTHER).flatMap((d) => d.deviceIds);
      assert.deepEqual(
        r.deviceKeys,
        ids.sort().map((id) => `${OTHER}/${id}`),
      );
    } finally {
      pr.close();
    }

    // A real pod holding one: the real scheduler and kubelet place it, PodResources says which.
    await cluster.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'holder', namespace: ns.name },
        spec: {
          containers: [
            { name: 'main', image: 'registry.k8s.io/pause:3.10', resources: { limits: { [OTHER]: 1 } } },
          ],
          nodeSelector: { 'plugboard.example/test-run': ns.name },
        },
      }),
    });
    await cluster.kubectl(['wait', '-n', ns.name, '--for=condition=Ready', 'pod/holder', '--timeout=120s']);
    s = await waitFor('the holder in the model', async () => {
      const x = await snapshot();
      return x.resources[OTHER]?.kubelet.allocated === 1 ? x : null;
    });
    const held = Object.values(s.devices).filter((d) => d.resource === OTHER && d.allocation);
    assert.deepEqual(
      held.map((d) => [d.allocation, d.numaNodes]),
      [[{ namespace: ns.name, pod: 'holder', container: 'main' }, [0]]],
    );

    const res = await fetch(`${gw.url}/api/v1/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ resource: OTHER, deviceId: 'og-0', reason: 'drill' }),
    });
    assert.equal(res.status, 422);
    assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.match(((await res.json()) as { detail: string }).detail, /nobody but that plugin/);

    // The plugin goes: the real kubelet marks its devices unhealthy at once and keeps the capacity
    // (its grace period is 5 minutes).
    await other!.stop();
    other = null;
    s = await waitFor(
      'allocatable 0 in PodResources and the Node',
      async () => {
        const x = await snapshot();
        const o = x.resources[OTHER];
        return o?.kubelet.allocatable === 0 && o.apiServer?.allocatable === 0 ? x : null;
      },
      60_000,
    );
    const gone = s.resources[OTHER]!;
    assert.deepEqual([gone.apiServer?.capacity, gone.kubelet.capacity], [4, 4]);
    assert.match(gone.observed!.note!, /^4 of 4 unhealthy .*5-minute grace period/);
    // Only the held device is named (unhealthy: held, not among the healthy); the free ones are not.
    assert.deepEqual(
      Object.values(s.devices)
        .filter((d) => d.resource === OTHER)
        .map((d) => [d.id, d.health]),
      [[held[0]!.id, 'Unhealthy']],
    );
  });
});
