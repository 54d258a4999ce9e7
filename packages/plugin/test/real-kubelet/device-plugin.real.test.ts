// Plugboard's device plugins on both kinds of node, one suite body: kubelet-sim, and the real kubelet
// (v1.37.2, built from upstream source; the real scheduler, API server and kubectl; upstream's fake
// container runtime, which records what the kubelet asked it to create). The same library the
// gateway runs, in this process, registers with a kubelet of its own; what the kubelet did with it
// is read back the way an operator would, with the real kubectl on both kinds.
import assert from 'node:assert/strict';
import { unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { once } from 'node:events';
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
import { parsePluginConfig, startPlugins, type PluginRuntime, type ResourcePlugin } from '../../src/index.js';

const GPU = 'plugboard.example/gpu';
const SERIAL = 'plugboard.example/serial';

interface NodeJson {
  status: { capacity: Record<string, string>; allocatable: Record<string, string> };
}
interface PodJson {
  status: {
    phase: string;
    containerStatuses?: {
      name: string;
      allocatedResourcesStatus?: { name: string; resources?: { resourceID: string; health: string }[] }[];
    }[];
  };
}

/** A container's device IDs of one resource (PodResources splits them into one entry per NUMA node). */
function idsOf(
  container: { devices: { resourceName: string; deviceIds: string[] }[] } | undefined,
  resource: string,
): string[] {
  return (container?.devices ?? [])
    .filter((d) => d.resourceName === resource)
    .flatMap((d) => d.deviceIds)
    .sort();
}

for (const kind of testClusterKinds())
  describe(`device plugins on the ${kind} kubelet`, () => {
    let bed: TestBed;
    let cluster: TestCluster;
    let node: ClusterNode;
    let ns: TestNamespace;
    let runtime: PluginRuntime;
    let podResources: PodResourcesClient;
    let work: string;
    const plugin = (name: string): ResourcePlugin => runtime.resources.get(name)!;

    const nodeJson = (): Promise<NodeJson> => cluster.kubectlJson<NodeJson>(['get', 'node', node.name]);
    const counts = async (
      resource: string,
    ): Promise<{ capacity: string | undefined; allocatable: string | undefined }> => {
      const n = await nodeJson();
      return { capacity: n.status.capacity[resource], allocatable: n.status.allocatable[resource] };
    };
    const pod = (name: string, limits: Record<string, number>): string =>
      JSON.stringify(pinnedPod(name, ns.name, node.name, { limits, restartPolicy: 'Always' }));
    const podJson = (name: string): Promise<PodJson> =>
      cluster.kubectlJson<PodJson>(['get', 'pod', '-n', ns.name, name]);

    before(async () => {
      bed = await openTestBed(kind, 'dp');
      ({ work, cluster, node, ns } = bed);
      for (const tty of ['ttyUSB0', 'ttyUSB1']) writeFileSync(join(work, tty), '');
      const config = parsePluginConfig(
        {
          resources: [
            {
              name: GPU,
              simulated: { count: 8, numaNodes: [0, 1], deviceNodePattern: '/dev/null' },
              allocate: {
                env: { PLUGBOARD_VISIBLE_DEVICES: '{{ids}}' },
                deviceNodes: false,
                devices: [{ hostPath: '/dev/null', containerPath: '/dev/plugboard-gpu', permissions: 'rw' }],
                cdi: { vendor: 'plugboard.example', class: 'gpu' },
              },
            },
            { name: SERIAL, paths: { patterns: [join(work, 'ttyUSB*')], pollIntervalMs: 200 } },
          ],
        },
        'real-kubelet-test',
      );
      runtime = await startPlugins(config, {
        devicePluginDir: node.devicePluginDir,
        cdiDir: join(work, 'cdi'),
      });
      bed.defer(() => runtime.stop());
      for (const p of runtime.resources.values()) {
        if (p.registration().phase !== 'registered') await once(p, 'registered');
      }
      podResources = podResourcesClient(node.podResourcesSocket);
      bed.defer(() => podResources.close());
    });

    after(() => bed?.close());

    it('registers with the real kubelet: the Node’s capacity and allocatable, as the real kubectl shows them', async () => {
      const c = await waitFor('the GPUs in the Node status', async () => {
        const v = await counts(GPU);
        return v.capacity === '8' && v.allocatable === '8' && v;
      });
      assert.deepEqual(c, { capacity: '8', allocatable: '8' });
      const serial = await waitFor('the serial devices in the Node status', async () => {
        const v = await counts(SERIAL);
        return v.capacity === '2' && v;
      });
      assert.equal(serial.allocatable, '2');
      const described = (await cluster.kubectl(['describe', 'node', node.name])).stdout;
      assert.match(described, new RegExp(`${GPU.replace('.', '\\.')}:\\s+8`));
    });

    it('a pod asking for 2 GPUs is scheduled, admitted by the device manager and Running with what Allocate returned', async () => {
      await cluster.kubectl(['apply', '-f', '-'], { input: pod('train', { [GPU]: 2 }) });
      await cluster.kubectl(['wait', '-n', ns.name, '--for=condition=Ready', 'pod/train', '--timeout=90s']);
      const fromPodResources = await waitFor('PodResources to list the pod', async () => {
        const ids = idsOf((await podResources.get(ns.name, 'train')).podResources?.containers[0], GPU);
        return ids.length === 2 ? ids : null;
      });
      const record = node.containers().find((c) => c.request.sandboxConfig.metadata.name === 'train');
      assert.ok(record, 'the fake runtime was asked to create the container');
      const env = Object.fromEntries((record.request.config.envs ?? []).map((e) => [e.key, e.value]));
      assert.deepEqual(env.PLUGBOARD_VISIBLE_DEVICES?.split(',').sort(), [...fromPodResources].sort());
      assert.ok(
        record.request.config.devices?.some(
          (d) => d.containerPath === '/dev/plugboard-gpu' && d.hostPath === '/dev/null',
        ),
        JSON.stringify(record.request.config.devices),
      );
      const cdi = (record.request.config.CDIDevices ?? record.request.config.cdiDevices ?? [])
        .map((d) => d.name)
        .sort();
      assert.deepEqual(cdi, fromPodResources.map((id) => `plugboard.example/gpu=${id}`).sort());
      // The runtime keeps a log per container, as a real one does (an empty one here): without a log
      // path the kubelet's log manager would glob "*" where it runs when the container goes.
      const logs = await cluster.kubectl(['logs', '-n', ns.name, 'train']);
      if (kind === 'real') assert.equal(logs.stdout, '');
      // kubelet-sim's simulated container writes one log line of what it was started with
      // (kuberuntime/container-log.ts); upstream's fake runtime writes none
      // (docs/KUBELET-SIM-FIDELITY.md).
      else assert.match(logs.stdout, /^plugboard kubelet-sim: container main of pod .*\/train started/);
    });

    it('PodResources List, GetAllocatableResources and Get from the real kubelet agree with the plugin', async () => {
      const allocatable = await podResources.allocatable();
      const gpus = allocatable.devices.filter((d) => d.resourceName === GPU);
      const advertised = plugin(GPU).devices();
      assert.deepEqual(gpus.flatMap((d) => d.deviceIds).sort(), advertised.map((d) => d.id).sort());
      for (const d of gpus) {
        const numa = advertised.find((a) => a.id === d.deviceIds[0])?.numaNodes ?? [];
        assert.deepEqual(d.topology?.nodes.map((n) => n.ID) ?? [], numa, d.deviceIds[0]);
      }
      const list = await podResources.list();
      const listed = list.podResources.find((p) => p.namespace === ns.name && p.name === 'train');
      const got = await podResources.get(ns.name, 'train');
      // The same devices from List and Get (in no set order: the kubelet builds both from maps).
      assert.deepEqual(idsOf(listed?.containers[0], GPU), idsOf(got.podResources?.containers[0], GPU));
      const held = idsOf(listed?.containers[0], GPU);
      assert.equal(held.length, 2);
      for (const id of held)
        assert.ok(
          advertised.some((a) => a.id === id),
          id,
        );
      await assert.rejects(
        podResources.get(ns.name, 'no-such-pod'),
        /pod no-such-pod in namespace .* not found/,
      );
    });

    it('a fault lowers the real Node’s allocatable by one and the holder’s allocatedResourcesStatus says Unhealthy; clearing heals', async () => {
      const got = await podResources.get(ns.name, 'train');
      const victim = idsOf(got.podResources!.containers[0], GPU)[0]!;
      plugin(GPU).injectFault(victim, 'simulated ECC error');
      await waitFor('allocatable 7', async () => (await counts(GPU)).allocatable === '7');
      assert.equal((await counts(GPU)).capacity, '8');
      const health = async (): Promise<string | undefined> => {
        const p = await podJson('train');
        const status = p.status.containerStatuses?.[0]?.allocatedResourcesStatus?.find((s) => s.name === GPU);
        return status?.resources?.find((r) => r.resourceID === victim)?.health;
      };
      await waitFor('the pod to report the device Unhealthy', async () => (await health()) === 'Unhealthy');
      plugin(GPU).clearFault(victim);
      await waitFor('allocatable back to 8', async () => (await counts(GPU)).allocatable === '8');
      await waitFor('the pod to report the device Healthy', async () => (await health()) === 'Healthy');
    });

    it('a paths-source device unplugged and replugged with a fault on it stays Unhealthy', async () => {
      await waitFor(
        'both serial devices allocatable',
        async () => (await counts(SERIAL)).allocatable === '2',
      );
      unlinkSync(join(work, 'ttyUSB1'));
      await waitFor(
        'the unplugged device gone from capacity',
        async () => (await counts(SERIAL)).capacity === '1',
      );
      plugin(SERIAL).injectFault('ttyUSB1', 'simulated: flaky cable', { absentOk: true });
      writeFileSync(join(work, 'ttyUSB1'), '');
      const back = await waitFor('the device back in capacity', async () => {
        const v = await counts(SERIAL);
        return v.capacity === '2' && v;
      });
      assert.equal(back.allocatable, '1', 'the replugged device is still faulted');
      const allocatable = await podResources.allocatable();
      assert.deepEqual(
        allocatable.devices.filter((d) => d.resourceName === SERIAL).flatMap((d) => d.deviceIds),
        ['ttyUSB0'],
      );
      plugin(SERIAL).clearFault('ttyUSB1');
      await waitFor('healed: allocatable 2', async () => (await counts(SERIAL)).allocatable === '2');
    });

    it('a kubelet restart: the plugin registers again, the pod keeps its devices (the kubelet’s checkpoint)', async () => {
      const before = idsOf((await podResources.get(ns.name, 'train')).podResources!.containers[0], GPU);
      const registered = once(plugin(GPU), 'registered');
      await node.restartKubelet();
      await registered;
      assert.equal(plugin(GPU).registration().phase, 'registered');
      assert.ok(plugin(GPU).registration().kubeletRestartsSeen >= 1);
      await waitFor('capacity and allocatable 8 again', async () => {
        const v = await counts(GPU);
        return v.capacity === '8' && v.allocatable === '8';
      });
      const after = await waitFor('PodResources after the restart', async () => {
        const ids = idsOf((await podResources.get(ns.name, 'train')).podResources?.containers[0], GPU);
        return ids.length ? ids : null;
      });
      assert.deepEqual(after, before);
    });
  });
