// Third-party plugins on kubelet-sim, built from upstream sources (packages/local-cluster's
// third-party.ts): squat/generic-device-plugin registers, kubelet-sim's Node shows its resource, a pod
// gets one of its devices (PodResources names it), and stopping it takes allocatable, then capacity
// (after the grace period) to 0; dra-example-driver's kubelet plugin registers through kubelet-sim's
// plugin watcher.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { podResourcesClient, type PodResourcesClient } from './pod-resources.js';
import { simNode, type SimNode } from './sim-node.js';
import {
  genericDeviceId,
  thirdParty,
  type DraExampleDriver,
  type GenericDevicePlugin,
} from './third-party.js';
import { waitFor } from './wait.js';

interface NodeJson {
  status: { capacity?: Record<string, string>; allocatable?: Record<string, string> };
}

describe('generic-device-plugin on kubelet-sim', () => {
  const RESOURCE = 'squat.ai/serial';
  let root: string;
  let node: SimNode;
  let plugin: GenericDevicePlugin;
  let podResources: PodResourcesClient;
  let paths: string[];

  const nodeStatus = async (): Promise<NodeJson['status']> => {
    const res = await fetch(`${node.sim.url}/api/v1/nodes/${node.name}`);
    assert.equal(res.status, 200);
    return ((await res.json()) as NodeJson).status;
  };

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'pb-third-party-'));
    // A short endpoint grace period, so that capacity's drop after the plugin stops is seen here.
    node = await simNode(root, 'tp-gdp', { sim: { gracePeriodMs: 1_000 } });
    // Three "serial ports": generic-device-plugin matches path globs; any file will do.
    mkdirSync(join(node.dir, 'dev'));
    paths = [0, 1, 2].map((i) => join(node.dir, 'dev', `ttyPB${i}`));
    for (const p of paths) writeFileSync(p, '');
    plugin = await thirdParty.genericDevicePlugin(node, {
      devices: [{ name: 'serial', groups: [{ paths: [{ path: join(node.dir, 'dev', 'ttyPB*') }] }] }],
    });
    podResources = podResourcesClient(node.podResourcesSocket);
  });

  after(async () => {
    podResources?.close();
    await plugin?.stop();
    await node?.remove();
    rmSync(root, { recursive: true, force: true });
  });

  it('registers squat.ai/serial, and the Node reports 3 in capacity and allocatable', async () => {
    assert.deepEqual(plugin.resources, [RESOURCE]);
    const status = await waitFor('squat.ai/serial on the Node', async () => {
      const s = await nodeStatus();
      return s.allocatable?.[RESOURCE] === '3' && s;
    }).catch((err: Error) => {
      throw new Error(`${err.message}; the plugin's log:\n${plugin.logTail()}`, { cause: err });
    });
    assert.equal(status.capacity?.[RESOURCE], '3');
    assert.deepEqual(
      node.sim
        .state()
        .resources[RESOURCE]?.devices.map((d) => d.id)
        .sort(),
      paths.map((p) => genericDeviceId(p)).sort(),
    );
  });

  it('a pod asking for one runs, and PodResources names the device it holds', async () => {
    const pod = (await node.sim.admitPod({
      metadata: { name: 'modem', namespace: 'default' },
      spec: {
        containers: [
          { name: 'main', resources: { limits: { [RESOURCE]: '1' }, requests: { [RESOURCE]: '1' } } },
        ],
      },
    })) as { status?: { phase?: string } };
    assert.equal(pod.status?.phase, 'Running');
    const got = await podResources.get('default', 'modem');
    const devices = got.podResources?.containers[0]?.devices ?? [];
    assert.equal(devices.length, 1);
    assert.equal(devices[0]!.resourceName, RESOURCE);
    assert.equal(devices[0]!.deviceIds.length, 1);
    assert.ok(
      paths.map((p) => genericDeviceId(p)).includes(devices[0]!.deviceIds[0]!),
      `${devices[0]!.deviceIds[0]} is one of the plugin's devices`,
    );
  });

  it('stopping the plugin: allocatable drops to 0 at once, capacity after the grace period', async () => {
    await plugin.stop();
    await waitFor(
      'allocatable squat.ai/serial 0',
      async () => (await nodeStatus()).allocatable?.[RESOURCE] === '0',
    );
    await waitFor('capacity squat.ai/serial 0 after the grace period', async () => {
      const capacity = (await nodeStatus()).capacity?.[RESOURCE];
      return capacity === undefined || capacity === '0';
    });
  });
});

describe('dra-example-driver on kubelet-sim', () => {
  // Only its registration, for now: client-go (v0.36, as the driver builds it) writes built-in kinds
  // as protobuf (Content-Type application/vnd.kubernetes.protobuf), and kubelet-sim's API slice
  // decodes protobuf only for SelfSubject*Reviews (apiserver/protobuf.ts), so it answers the driver's
  // ResourceSlice POST "400 request body is not valid JSON" and nothing is published. The real
  // cluster's suite (third-party.real.test.ts) covers slices, allocation and PodResources.
  let root: string;
  let node: SimNode;
  let driver: DraExampleDriver;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'pb-third-party-'));
    node = await simNode(root, 'tp-sim');
    driver = await thirdParty.draExampleDriver(node, { numDevices: 4 });
  });

  after(async () => {
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
});
