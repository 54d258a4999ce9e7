// kubelet-sim against the DRA driver of @plugboard/plugin (issue #18's framework), as it would run
// against a real node: registration through plugins_registry, its ResourceSlices through the API
// slice, a pod's template claim scheduled and prepared (the driver reads the claim from the API and
// writes a CDI spec), PodResources, device health in allocatedResourcesStatus, a fault that the
// driver turns into a NoExecute taint evicting the pod (the slice then settles: no rewrite on
// resync), and a kubelet restart.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { KubeConfig, ResourceV1Api } from '@kubernetes/client-node';
import { podresources } from '@plugboard/proto';
import { DraDriver, kubeApiFromKubeConfig, SimulatedSource } from '@plugboard/plugin';
import { startFixture, waitFor, type SimFixture } from './helpers.js';

const DRIVER = 'gpu.plugboard.example';
const NODE = 'sim-node';

const get = (o: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((x, k) => (x as Record<string, unknown> | undefined)?.[k], o);

describe('kubelet-sim with the @plugboard/plugin DRA driver', () => {
  let f: SimFixture;
  let api: ResourceV1Api;
  let driver: DraDriver;

  before(async () => {
    f = await startFixture({ syncFrequencyMs: 200 }, { registry: true });
    const kc = new KubeConfig();
    kc.loadFromFile(f.sim.kubeconfigPath);
    api = kc.makeApiClient(ResourceV1Api);
    await api.createDeviceClass({
      body: {
        metadata: { name: DRIVER },
        spec: { selectors: [{ cel: { expression: `device.driver == "${DRIVER}"` } }] },
      },
    });
    await api.createNamespacedResourceClaimTemplate({
      namespace: 'default',
      body: {
        metadata: { name: 'gpu', namespace: 'default' },
        spec: { spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: DRIVER } }] } } },
      },
    });
    driver = new DraDriver({
      driverName: DRIVER,
      nodeName: NODE,
      source: new SimulatedSource({ count: 4, numaNodes: [0, 1], idPrefix: 'gpu' }),
      kube: await kubeApiFromKubeConfig({ kubeconfig: f.sim.kubeconfigPath }),
      pluginsDir: join(f.stateDir, 'plugins'),
      pluginsRegistryDir: f.registry,
      cdiDir: join(f.stateDir, 'cdi'),
      cdi: { class: 'gpu' },
      taints: { effect: 'NoExecute' },
      restartPollIntervalMs: 50,
      resyncMs: 200,
    });
    await driver.start();
  });
  after(async () => {
    await driver.stop();
    await f.cleanup();
  });

  const sliceDevices = async () =>
    (await api.listResourceSlice({ fieldSelector: `spec.driver=${DRIVER}` })).items.flatMap(
      (s) => s.spec.devices ?? [],
    );

  test('registers (v1 DRAPlugin and v1 health chosen) and publishes its devices through the API slice', async () => {
    await waitFor(() => driver.registration().phase === 'registered', 'NotifyRegistrationStatus');
    const plugin = await waitFor(
      () =>
        f.sim
          .state()
          .dra.drivers.find((d) => d.name === DRIVER)
          ?.plugins.find((p) => p.connected),
      'a connected plugin',
    );
    assert.deepEqual([plugin.service, plugin.healthService], ['v1.DRAPlugin', 'v1.DRAResourceHealth']);
    const devices = await waitFor(async () => {
      const d = await sliceDevices();
      return d.length === 4 ? d : undefined;
    }, 'four devices in ResourceSlices');
    assert.equal(devices.length, 4);
  });

  test('a pod with a template claim is scheduled, prepared by the driver and reported by PodResources', async () => {
    const pod = await f.sim.admitPod({
      metadata: { name: 'infer', namespace: 'default' },
      spec: {
        resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'gpu' }],
        containers: [{ name: 'main', resources: { claims: [{ name: 'gpu' }] } }],
      },
    });
    assert.equal(get(pod, 'status.phase'), 'Running');
    const claimName = (get(pod, 'status.resourceClaimStatuses') as { resourceClaimName: string }[])[0]!
      .resourceClaimName;
    const claim = await api.readNamespacedResourceClaim({ name: claimName, namespace: 'default' });
    const uid = claim.metadata!.uid!;
    assert.ok(
      driver.preparedClaims().some((c) => c.uid === uid),
      'the driver checkpointed the claim it prepared',
    );
    const cdi = f.sim.state().pods.find((p) => p.name === 'infer')!.containers[0]!.cdiDevices;
    assert.equal(cdi.length, 1);
    assert.match(cdi[0]!, /^k8s\.gpu\.plugboard\.example\/gpu=/);
    const client = new podresources.PodResourcesListerClient(
      `unix://${f.sim.podResourcesSocket}`,
      credentials.createInsecure(),
    );
    const listed = await new Promise<podresources.ListPodResourcesResponse>((resolve, reject) =>
      client.list({}, (err, res) => (err ? reject(err) : resolve(res))),
    );
    client.close();
    const result = claim.status!.allocation!.devices!.results![0]!;
    assert.deepEqual(listed.podResources.find((p) => p.name === 'infer')?.containers[0]?.dynamicResources, [
      {
        claimName,
        claimNamespace: 'default',
        claimResources: [
          {
            cdiDevices: [{ name: cdi[0] }],
            driverName: DRIVER,
            poolName: result.pool,
            deviceName: result.device,
            shareId: undefined,
          },
        ],
      },
    ]);
    const status = await waitFor(async () => {
      const obj: unknown = await fetch(`${f.sim.url}/api/v1/namespaces/default/pods/infer`).then((r) =>
        r.json(),
      );
      const s = get(obj, 'status.containerStatuses.0.allocatedResourcesStatus') as
        { name: string; resources: { resourceID: string; health: string }[] }[] | undefined;
      return s?.[0]?.resources[0]?.health === 'Healthy' ? s : undefined;
    }, "the driver's health report in the pod status");
    assert.deepEqual(status, [{ name: 'claim:gpu', resources: [{ resourceID: cdi[0], health: 'Healthy' }] }]);
  });

  test('a kubelet restart: the driver registers again and republishes the slices the kubelet wiped', async () => {
    const infos = driver.registration().infoCalls;
    await f.sim.restart();
    await waitFor(() => driver.registration().infoCalls > infos, 'GetInfo from the restarted kubelet');
    await waitFor(async () => (await sliceDevices()).length === 4, 'the slices republished', 10_000);
    assert.equal(f.sim.state().pods.find((p) => p.name === 'infer')?.phase, 'Running');
    assert.equal(f.sim.state().dra.claims.length, 1, 'the prepared claim came back from the checkpoint');
  });

  test('a fault becomes a NoExecute taint: the pod is evicted, its claim unprepared and deleted', async () => {
    const claimName = f.sim.state().dra.claims[0]!.name;
    const device = f.sim.state().dra.claims[0]!.devices[0]!.device;
    const gone = new Promise<void>((resolve) => {
      const onPod = (obj: unknown, type: string) => {
        if (get(obj, 'metadata.name') === 'infer' && type === 'DELETED') {
          f.sim.off('pod', onPod);
          resolve();
        }
      };
      f.sim.on('pod', onPod);
    });
    await waitFor(
      () =>
        f.sim
          .state()
          .dra.drivers.find((d) => d.name === DRIVER)
          ?.plugins.some((p) => p.connected),
      'the driver connected again',
    );
    driver.injectFault(device, 'ECC error');
    await gone;
    await waitFor(() => driver.preparedClaims().length === 0, 'NodeUnprepareResources');
    await assert.rejects(
      api.readNamespacedResourceClaim({ name: claimName, namespace: 'default' }),
      (err: { code?: number }) => err.code === 404,
    );
  });

  test("the tainted slice settles: resyncs write nothing, the taint's stored timeAdded stays", async () => {
    const tainted = async () =>
      (await sliceDevices()).find((d) => (d.taints?.length ?? 0) > 0)?.taints?.[0]?.timeAdded;
    const timeAdded = await waitFor(tainted, 'the fault taint in the slice');
    const { list, update } = driver.publication().requests;
    // Two more lists: the sync after the first of them is over, and found the slice in sync.
    await waitFor(() => driver.publication().requests.list >= list + 2, 'two resyncs');
    assert.equal(driver.publication().requests.update, update, 'no PUT on resync');
    assert.deepEqual(await tainted(), timeAdded);
  });
});
