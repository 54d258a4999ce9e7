// The observer gateway: no device plugin of its own (`resources: []`, or no --config at all), on a
// node where another device plugin runs — Plugboard's plugin library started in this process with a
// resource the gateway's config does not list, registered with kubelet-sim over real Unix sockets.
// The gateway (the plugboard-gateway binary, through the test bed) shows that resource as the
// kubelet does: capacity and allocatable, every device with its NUMA node, which pod holds which,
// the unhealthy count the kubelet does not itemise, capacity 0 after the plugin goes; and it
// refuses a fault on it (422), storing nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parsePluginConfig, startPlugins, type PluginRuntime } from '@plugboard/plugin';
import {
  gatewayDocument,
  gatewayProcess,
  simNode,
  type GatewayProcess,
  type SimNode,
} from '@plugboard/testbed';
import type { NodeSnapshot } from '@plugboard/api';
import { waitFor } from './helpers.js';

const OTHER = 'other.example/gpu';
/** kubelet-sim's grace period for a gone plugin (upstream: 5 minutes). */
const GRACE_MS = 1500;

let dir: string;
let node: SimNode;
let other: PluginRuntime | null = null;
let gw: GatewayProcess | null = null;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pb-observer-'));
  node = await simNode(dir, 'obs', { sim: { gracePeriodMs: GRACE_MS } });
  other = await startPlugins(
    parsePluginConfig({
      resources: [{ name: OTHER, simulated: { count: 4, numaNodes: [0, 1], idPrefix: 'og' } }],
    }),
    { devicePluginDir: node.devicePluginDir, logger: pino({ level: 'silent' }) },
  );
});

after(async () => {
  await gw?.stop();
  await other?.stop();
  await node?.remove();
  rmSync(dir, { recursive: true, force: true });
});

const otherDevices = (s: NodeSnapshot) => Object.values(s.devices).filter((d) => d.resource === OTHER);

test('no --config: the gateway starts as an observer from its flags and shows the other plugin', async () => {
  const flagsOnly = await gatewayProcess(node, gatewayDocument(node), {
    flagsOnly: [
      '--node-name',
      node.name,
      '--listen',
      '127.0.0.1:0',
      '--kubeconfig',
      node.kubeconfig,
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

test("resources: [] observes the other device plugin, refuses a fault on it, follows its devices' health and its leaving", async () => {
  gw = await gatewayProcess(
    node,
    gatewayDocument(node, { resources: [], gateway: { podResources: { pollIntervalMs: 100 } } }),
  );
  let s = await gw.waitForSnapshot(
    (x) => x.resources[OTHER]?.deviceKeys.length === 4 && x.resources[OTHER]?.apiServer?.capacity === 4,
    'four devices (PodResources) and capacity 4 (Node)',
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

  // Which pod holds which: the kubelet's allocation, as PodResources List reports it.
  await node.sim.admitPod({
    metadata: { name: 'train', namespace: 'ml' },
    spec: {
      restartPolicy: 'Always',
      containers: [{ name: 'main', resources: { limits: { [OTHER]: 2 }, requests: { [OTHER]: 2 } } }],
    },
  });
  const held = new Set(
    node.sim.state().pods.flatMap((p) => p.containers.flatMap((c) => c.devices[OTHER] ?? [])),
  );
  assert.equal(held.size, 2);
  s = await gw.waitForSnapshot((x) => x.resources[OTHER]?.kubelet.allocated === 2, 'two devices held');
  for (const d of otherDevices(s)) {
    assert.deepEqual(
      d.allocation,
      held.has(d.id) ? { namespace: 'ml', pod: 'train', container: 'main' } : null,
      d.id,
    );
  }
  assert.deepEqual(
    s.pods['ml/train']!.containers[0]!.devices[OTHER]!.sort(),
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
  // how many, not which.
  const free = ['og-0', 'og-1', 'og-2', 'og-3'].find((id) => !held.has(id))!;
  other!.resources.get(OTHER)!.injectFault(free, 'its own health check');
  s = await gw.waitForSnapshot(
    (x) => x.resources[OTHER]?.kubelet.allocatable === 3 && x.resources[OTHER]?.apiServer?.allocatable === 3,
    'allocatable 3',
  );
  assert.deepEqual(s.resources[OTHER]!.observed, {
    unhealthy: 1,
    unhealthyNamed: 0,
    note: '1 of 4 unhealthy — the kubelet does not say which unless a pod holds them',
  });
  assert.equal(s.devices[`${OTHER}/${free}`], undefined, 'the kubelet does not name it');

  // A held device going unhealthy is named (it is held, yet not among the healthy).
  const heldId = [...held][0]!;
  other!.resources.get(OTHER)!.injectFault(heldId, 'its own health check');
  s = await gw.waitForSnapshot(
    (x) => x.devices[`${OTHER}/${heldId}`]?.health === 'Unhealthy',
    'the held device unhealthy',
  );
  assert.equal(s.resources[OTHER]!.observed?.unhealthyNamed, 1);
  assert.equal(s.pods['ml/train']!.affectedByUnhealthyDevice, true);

  // The plugin goes: allocatable 0 at once, capacity 0 after the kubelet's grace period, and the
  // resource stays (the kubelet keeps it in the Node status at 0).
  await other!.stop();
  other = null;
  s = await gw.waitForSnapshot(
    (x) => x.resources[OTHER]?.apiServer?.capacity === 0 && x.resources[OTHER]?.kubelet.capacity === 0,
    'capacity 0 after the grace period',
    GRACE_MS + 15_000,
  );
  const gone = s.resources[OTHER]!;
  assert.deepEqual(
    [gone.servedBy, gone.kubelet.allocatable, gone.registration.phase],
    ['device-plugin', 0, 'stopped'],
  );
  assert.match(gone.registration.error!, /grace period ended/);

  // What the kubelet showed changing: ring events (the last one lands in the change after) and
  // Events on the Node.
  s = await gw.waitForSnapshot(
    (x) => x.events.some((e) => e.resource === OTHER && /capacity 0, allocatable 0/.test(e.message)),
    'the capacity-0 ring event',
  );
  const ring = s.events
    .filter((e) => e.kind === 'registration' && e.resource === OTHER)
    .map((e) => e.message);
  assert.ok(
    ring.some((m) => /capacity 4, allocatable 3: 1 of 4 unhealthy/.test(m)),
    ring.join('\n'),
  );
  assert.ok(
    ring.some((m) => /capacity 0, allocatable 0 .*was capacity 4/.test(m)),
    ring.join('\n'),
  );
  assert.ok(
    s.events.some((e) => e.kind === 'health' && e.resource === OTHER && e.deviceIds[0] === heldId),
    'the held device going unhealthy is a health event',
  );
  type EventList = {
    items: { reason: string; message: string; involvedObject: { kind: string; name: string } }[];
  };
  await waitFor('ObservedResourceChanged Events on the Node', async () => {
    const list = (await (
      await fetch(`${node.sim.url}/api/v1/namespaces/default/events`)
    ).json()) as EventList;
    return list.items.some(
      (e) =>
        e.involvedObject.name === node.name &&
        e.reason === 'ObservedResourceChanged' &&
        /other\.example\/gpu .*capacity 0/.test(e.message),
    );
  });

  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  assert.match(
    metrics,
    /plugboard_resource_served_by\{[^}]*resource="other\.example\/gpu",served_by="device-plugin"[^}]*\} 1/,
  );
  assert.match(metrics, /plugboard_resource_capacity_devices\{[^}]*resource="other\.example\/gpu"[^}]*\} 0/);
  assert.doesNotMatch(metrics, /plugboard_device_plugin_registered\{[^}]*other\.example/);
});
