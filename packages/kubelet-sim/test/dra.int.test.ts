// Dynamic Resource Allocation end to end against a DRA driver written on the raw kubelet APIs
// (test/dra-driver.ts): registration through plugins_registry, ResourceSlices through the API
// slice, a pod's claims created from templates, allocated by the scheduler, prepared by the kubelet
// before the sandbox, reported by PodResources and in allocatedResourcesStatus, unprepared and
// released on deletion; unsatisfiable claims; prepare failures; NoExecute taints from the slice (their
// timeAdded stamped by the API server) and from DeviceTaintRules; driver and kubelet restarts with prepared claims (the checkpoint).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig, KubernetesObjectApi, ResourceV1Api } from '@kubernetes/client-node';
import { credentials } from '@grpc/grpc-js';
import { podresources } from '@plugboard/proto';
import { registrationServer } from './registration-server.js';
import { startFixture, waitFor, type SimFixture } from './helpers.js';
import { TestDraDriver } from './dra-driver.js';

const DRIVER = 'gpu.example.com';
const NODE = 'sim-node';

type Obj = Record<string, unknown> & { metadata: Record<string, unknown> };
const get = (o: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((x, k) => (x as Record<string, unknown> | undefined)?.[k], o);

function draPod(
  name: string,
  claims: { name: string; resourceClaimName?: string; resourceClaimTemplateName?: string }[],
  containerClaims: { name: string; request?: string }[] = claims.map((c) => ({ name: c.name })),
  extra: Record<string, unknown> = {},
) {
  return {
    metadata: { name, namespace: 'default' },
    spec: {
      restartPolicy: 'Always' as const,
      resourceClaims: claims,
      containers: [{ name: 'main', resources: { claims: containerClaims } }],
      ...extra,
    },
  };
}

function podResourcesClient(socket: string) {
  const client = new podresources.PodResourcesListerClient(`unix://${socket}`, credentials.createInsecure());
  return {
    list: () =>
      new Promise<podresources.ListPodResourcesResponse>((resolve, reject) =>
        client.list({}, (err, res) => (err ? reject(err) : resolve(res))),
      ),
    get: (podName: string, podNamespace = 'default') =>
      new Promise<podresources.GetPodResourcesResponse>((resolve, reject) =>
        client.get({ podName, podNamespace }, (err, res) => (err ? reject(err) : resolve(res))),
      ),
    close: () => client.close(),
  };
}

describe('DRA with a raw driver', () => {
  let f: SimFixture;
  let api: ResourceV1Api;
  let objects: KubernetesObjectApi;
  let driver: TestDraDriver;
  let pr: ReturnType<typeof podResourcesClient>;

  const claimObj = (name: string) => f.sim.state().dra.claims.find((c) => c.name === name);
  const apiClaim = (name: string) => api.readNamespacedResourceClaim({ name, namespace: 'default' });
  const podObj = async (name: string) =>
    (await fetch(`${f.sim.url}/api/v1/namespaces/default/pods/${name}`).then((r) => r.json())) as Obj;
  const events = async (pod: string) =>
    (
      (await fetch(
        `${f.sim.url}/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${pod}`,
      ).then((r) => r.json())) as { items: Obj[] }
    ).items.map((e) => ({
      type: e['type'],
      reason: e['reason'],
      message: e['message'],
      source: get(e, 'source.component'),
    }));
  const podState = (name: string) => f.sim.state().pods.find((p) => p.name === name);

  before(async () => {
    f = await startFixture({ syncFrequencyMs: 200, draWipingDelayMs: 60_000 }, { registry: true });
    const kc = new KubeConfig();
    kc.loadFromFile(f.sim.kubeconfigPath);
    api = kc.makeApiClient(ResourceV1Api);
    objects = KubernetesObjectApi.makeApiClient(kc);
    await api.createDeviceClass({
      body: {
        metadata: { name: DRIVER },
        spec: { selectors: [{ cel: { expression: `device.driver == "${DRIVER}"` } }] },
      },
    });
    await api.createNamespacedResourceClaimTemplate({
      namespace: 'default',
      body: {
        metadata: { name: 'one-gpu', namespace: 'default' },
        spec: {
          metadata: { labels: { team: 'ml' } },
          spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: DRIVER } }] } },
        },
      },
    });
    driver = new TestDraDriver({
      driver: DRIVER,
      registryDir: f.registry,
      pluginsDir: join(f.stateDir, 'plugins'),
      kubeconfigPath: f.sim.kubeconfigPath,
      nodeName: NODE,
      devices: ['gpu-0', 'gpu-1', 'gpu-2', 'gpu-3'].map((name, i) => ({
        name,
        attributes: { 'resource.kubernetes.io/numaNode': { int: i < 2 ? 0 : 1 } },
      })),
      health: 'v1',
    });
    await driver.start();
    pr = podResourcesClient(f.sim.podResourcesSocket);
  });
  after(async () => {
    pr.close();
    driver.stop();
    await f.cleanup();
  });

  test('the driver registers through plugins_registry, is told so, and its slice is in the API', async () => {
    const status = await waitFor(() => driver.statuses[0], 'NotifyRegistrationStatus');
    assert.deepEqual(status, { pluginRegistered: true, error: '' });
    const view = await waitFor(
      () => f.sim.state().dra.drivers.find((d) => d.name === DRIVER && d.plugins[0]?.connected),
      'a connected plugin',
    );
    assert.deepEqual(
      view.plugins.map((p) => ({ endpoint: p.endpoint, service: p.service, healthService: p.healthService })),
      [{ endpoint: driver.draSocket, service: 'v1.DRAPlugin', healthService: 'v1.DRAResourceHealth' }],
    );
    const slices = await waitFor(async () => {
      const items = (await api.listResourceSlice({ fieldSelector: `spec.driver=${DRIVER}` })).items;
      return items.length > 0 ? items : undefined;
    }, 'the published slice');
    assert.deepEqual(
      slices[0]?.spec.devices?.map((d) => d.name),
      ['gpu-0', 'gpu-1', 'gpu-2', 'gpu-3'],
    );
  });

  test('a pod with a template claim: claim generated, allocated, reserved, prepared, CDI devices in the container', async () => {
    const admitted = await f.sim.admitPod(
      draPod('train', [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }]),
    );
    assert.equal(get(admitted, 'status.phase'), 'Running');
    const statuses = get(admitted, 'status.resourceClaimStatuses') as {
      name: string;
      resourceClaimName: string;
    }[];
    assert.equal(statuses.length, 1);
    assert.equal(statuses[0]!.name, 'gpu');
    const claimName = statuses[0]!.resourceClaimName;
    assert.match(claimName, /^train-gpu-[bcdfghjklmnpqrstvwxz2456789]{5}$/);

    const claim = await apiClaim(claimName);
    const podUid = get(admitted, 'metadata.uid') as string;
    assert.deepEqual(
      claim.metadata?.ownerReferences?.map((o) => [o.kind, o.name, o.uid, o.controller]),
      [['Pod', 'train', podUid, true]],
    );
    assert.equal(claim.metadata?.annotations?.['resource.kubernetes.io/pod-claim-name'], 'gpu');
    assert.equal(claim.metadata?.labels?.['team'], 'ml');
    assert.deepEqual(claim.metadata?.finalizers, ['resource.kubernetes.io/delete-protection']);
    const results = claim.status?.allocation?.devices?.results ?? [];
    assert.equal(results.length, 1);
    assert.deepEqual([results[0]!.request, results[0]!.driver, results[0]!.pool], ['gpu', DRIVER, NODE]);
    const device = results[0]!.device;
    assert.deepEqual(
      claim.status?.reservedFor?.map((r) => ({ ...r })),
      [{ resource: 'pods', name: 'train', uid: podUid }],
    );

    // NodePrepareResources got the claim's identity only.
    const call = driver.prepareCalls.at(-1)!;
    assert.equal(call.service, 'v1');
    assert.deepEqual(call.claims, [{ namespace: 'default', uid: claim.metadata?.uid, name: claimName }]);

    const container = podState('train')!.containers[0]!;
    assert.deepEqual(container.cdiDevices, [driver.cdiId(device)]);
    const log = await fetch(`${f.sim.url}/api/v1/namespaces/default/pods/train/log`).then((r) => r.text());
    assert.match(log, new RegExp(`claim: ResourceClaim default/${claimName} = ${DRIVER}/${NODE}/${device}`));
    assert.match(log, new RegExp(`cdi device: ${driver.cdiId(device).replace(/[./]/g, '\\$&')}`));

    // The checkpoint has the prepared claim, in the kubelet's format.
    const cp = JSON.parse(readFileSync(join(f.stateDir, 'dra_manager_state'), 'utf8')) as { Data: string };
    const entries = (JSON.parse(cp.Data) as { Entries: { ClaimName: string; PodUIDs: object }[] }).Entries;
    assert.deepEqual(
      entries.map((e) => [e.ClaimName, Object.keys(e.PodUIDs)]),
      [[claimName, [podUid]]],
    );

    // Events: the scheduler binds, the kubelet starts the container.
    const reasons = (await events('train')).map((e) => e.reason);
    assert.deepEqual(reasons.slice(0, 2), ['Scheduled', 'Pulled']);
  });

  test('PodResources reports dynamic_resources as the kubelet fills them (List and Get)', async () => {
    const status = (await podObj('train'))['status'] as {
      resourceClaimStatuses: { resourceClaimName: string }[];
    };
    const claimName = status.resourceClaimStatuses[0]!.resourceClaimName;
    const device = (await apiClaim(claimName)).status!.allocation!.devices!.results![0]!.device;
    const expected = [
      {
        claimName,
        claimNamespace: 'default',
        claimResources: [
          {
            cdiDevices: [{ name: driver.cdiId(device) }],
            driverName: DRIVER,
            poolName: NODE,
            deviceName: device,
            shareId: undefined,
          },
        ],
      },
    ];
    const listed = (await pr.list()).podResources.find((p) => p.name === 'train');
    assert.deepEqual(listed?.containers[0]?.dynamicResources, expected);
    assert.deepEqual(listed?.containers[0]?.devices, []);
    const one = await pr.get('train');
    assert.deepEqual(one.podResources?.containers[0]?.dynamicResources, expected);
  });

  test('deleting the pod unprepares, deallocates and deletes the generated claim', async () => {
    const status = (await podObj('train'))['status'] as {
      resourceClaimStatuses: { resourceClaimName: string }[];
    };
    const claimName = status.resourceClaimStatuses[0]!.resourceClaimName;
    const uid = (await apiClaim(claimName)).metadata!.uid!;
    const before = driver.unprepareCalls.length;
    await f.sim.deletePod('default', 'train');
    assert.deepEqual(
      driver.unprepareCalls.slice(before).map((c) => c.claims),
      [[{ namespace: 'default', uid, name: claimName }]],
    );
    await assert.rejects(apiClaim(claimName), (err: { code?: number }) => err.code === 404);
    assert.equal(claimObj(claimName), undefined);
    const cp = JSON.parse(readFileSync(join(f.stateDir, 'dra_manager_state'), 'utf8')) as { Data: string };
    assert.deepEqual((JSON.parse(cp.Data) as { Entries: unknown[] }).Entries, []);
  });

  test('a claim shared by two pods: prepared once, unprepared after the last pod, then deallocated but kept', async () => {
    await api.createNamespacedResourceClaim({
      namespace: 'default',
      body: {
        metadata: { name: 'shared', namespace: 'default' },
        spec: { devices: { requests: [{ name: 'pair', exactly: { deviceClassName: DRIVER, count: 2 } }] } },
      },
    });
    const calls = driver.prepareCalls.length;
    await f.sim.admitPod(draPod('share-a', [{ name: 'pair', resourceClaimName: 'shared' }]));
    await f.sim.admitPod(draPod('share-b', [{ name: 'pair', resourceClaimName: 'shared' }]));
    assert.equal(podState('share-a')?.phase, 'Running');
    assert.equal(podState('share-b')?.phase, 'Running');
    assert.equal(driver.prepareCalls.length, calls + 1, 'NodePrepareResources once for the shared claim');
    const claim = await apiClaim('shared');
    assert.deepEqual(
      claim.status?.reservedFor?.map((r) => r.name),
      ['share-a', 'share-b'],
    );
    const [d0, d1] = claim.status.allocation!.devices!.results!.map((r) => r.device);
    // Two devices of one driver: the kubelet appends to one CDI list per driver, so the second
    // ClaimResource carries the first device's CDI device too.
    const listed = (await pr.list()).podResources.find((p) => p.name === 'share-b');
    assert.deepEqual(listed?.containers[0]?.dynamicResources, [
      {
        claimName: 'shared',
        claimNamespace: 'default',
        claimResources: [
          {
            cdiDevices: [{ name: driver.cdiId(d0!) }],
            driverName: DRIVER,
            poolName: NODE,
            deviceName: d0,
            shareId: undefined,
          },
          {
            cdiDevices: [{ name: driver.cdiId(d0!) }, { name: driver.cdiId(d1!) }],
            driverName: DRIVER,
            poolName: NODE,
            deviceName: d1,
            shareId: undefined,
          },
        ],
      },
    ]);
    assert.deepEqual(podState('share-b')?.containers[0]?.cdiDevices, [driver.cdiId(d0!), driver.cdiId(d1!)]);

    const unprepares = driver.unprepareCalls.length;
    await f.sim.deletePod('default', 'share-a');
    assert.equal(driver.unprepareCalls.length, unprepares, 'another pod still uses the claim');
    assert.deepEqual(
      (await apiClaim('shared')).status?.reservedFor?.map((r) => r.name),
      ['share-b'],
    );
    await f.sim.deletePod('default', 'share-b');
    assert.equal(driver.unprepareCalls.length, unprepares + 1);
    const released = await apiClaim('shared');
    assert.equal(released.status?.allocation, undefined);
    assert.equal(released.status?.reservedFor, undefined);
    assert.equal(released.metadata?.finalizers, undefined);
    await api.deleteNamespacedResourceClaim({ name: 'shared', namespace: 'default' });
  });

  test("unsatisfiable claims leave the pod Pending with the scheduler's message; more devices let it run", async () => {
    await api.createNamespacedResourceClaimTemplate({
      namespace: 'default',
      body: {
        metadata: { name: 'six-gpus', namespace: 'default' },
        spec: {
          spec: { devices: { requests: [{ name: 'gpus', exactly: { deviceClassName: DRIVER, count: 6 } }] } },
        },
      },
    });
    const pending = await f.sim.admitPod(
      draPod('big', [{ name: 'gpus', resourceClaimTemplateName: 'six-gpus' }]),
    );
    assert.equal(get(pending, 'status.phase'), 'Pending');
    assert.equal(get(pending, 'spec.nodeName'), undefined, 'not bound');
    const conditions = get(pending, 'status.conditions') as Obj[];
    assert.deepEqual(
      conditions.map((c) => [c['type'], c['status'], c['reason']]),
      [['PodScheduled', 'False', 'Unschedulable']],
    );
    assert.equal(
      conditions[0]!['message'],
      '0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
    );
    assert.deepEqual(
      (await events('big')).map((e) => [e.type, e.reason, e.source]),
      [['Warning', 'FailedScheduling', 'default-scheduler']],
    );
    const claimName = (get(pending, 'status.resourceClaimStatuses') as { resourceClaimName: string }[])[0]!
      .resourceClaimName;
    assert.equal((await apiClaim(claimName)).status?.allocation, undefined);
    assert.equal(
      (await pr.list()).podResources.some((p) => p.name === 'big'),
      false,
      "an unbound pod is not the kubelet's",
    );

    // The driver publishes two more devices: the scheduler tries again and the pod runs.
    const running = new Promise<void>((resolve) => {
      const onPod = (pod: unknown) => {
        if (get(pod, 'metadata.name') === 'big' && get(pod, 'status.phase') === 'Running') {
          f.sim.off('pod', onPod);
          resolve();
        }
      };
      f.sim.on('pod', onPod);
    });
    driver.devices = [...driver.devices, { name: 'gpu-4' }, { name: 'gpu-5' }];
    await driver.publish();
    await running;
    const allocated = await apiClaim(claimName);
    assert.equal(allocated.status?.allocation?.devices?.results?.length, 6);
    assert.equal(get(await podObj('big'), 'spec.nodeName'), NODE);
    assert.deepEqual((await events('big')).map((e) => e.reason).slice(0, 3), [
      'FailedScheduling',
      'Scheduled',
      'Pulled',
    ]);
    await f.sim.deletePod('default', 'big');
    driver.devices = driver.devices.slice(0, 4);
    await driver.publish();
  });

  test('a failing NodePrepareResources keeps the pod ContainerCreating and is retried at the next sync', async () => {
    await api.createNamespacedResourceClaim({
      namespace: 'default',
      body: {
        metadata: { name: 'flaky', namespace: 'default' },
        spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: DRIVER } }] } },
      },
    });
    driver.prepareErrors.set('flaky', 'device is busy');
    const pod = await f.sim.admitPod(draPod('flaky-pod', [{ name: 'gpu', resourceClaimName: 'flaky' }]));
    assert.equal(get(pod, 'status.phase'), 'Pending');
    assert.deepEqual(get(pod, 'status.containerStatuses.0.state'), {
      waiting: { reason: 'ContainerCreating' },
    });
    const ready = (get(pod, 'status.conditions') as Obj[]).find(
      (c) => c['type'] === 'PodReadyToStartContainers',
    );
    assert.equal(ready?.['status'], 'False');
    assert.equal(ready?.['reason'], 'PodSandboxNotReady');
    const failed = (await events('flaky-pod')).find((e) => e.reason === 'FailedPrepareDynamicResources');
    assert.deepEqual(failed, {
      type: 'Warning',
      reason: 'FailedPrepareDynamicResources',
      message:
        'Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources failed for ResourceClaim flaky: device is busy',
      source: 'kubelet',
    });
    driver.prepareErrors.delete('flaky');
    await waitFor(() => podState('flaky-pod')?.phase === 'Running', 'the retried sync');
    await f.sim.deletePod('default', 'flaky-pod');
    await api.deleteNamespacedResourceClaim({ name: 'flaky', namespace: 'default' });
  });

  test('device health from NodeWatchResources in allocatedResourcesStatus; an unhealthy device fails the container', async () => {
    const pod = await f.sim.admitPod(
      draPod(
        'watched',
        [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }],
        [{ name: 'gpu', request: 'gpu' }],
      ),
    );
    const claimName = (get(pod, 'status.resourceClaimStatuses') as { resourceClaimName: string }[])[0]!
      .resourceClaimName;
    const device = (await apiClaim(claimName)).status!.allocation!.devices!.results![0]!.device;
    const statusOf = async () =>
      get(await podObj('watched'), 'status.containerStatuses.0.allocatedResourcesStatus');
    await waitFor(
      async () => JSON.stringify(await statusOf()).includes('"Healthy"'),
      'the first health report',
    );
    assert.deepEqual(await statusOf(), [
      { name: 'claim:gpu/gpu', resources: [{ resourceID: driver.cdiId(device), health: 'Healthy' }] },
    ]);
    driver.setHealth(device, 'UNHEALTHY', 'ECC error count exceeded threshold');
    await waitFor(async () => JSON.stringify(await statusOf()).includes('Unhealthy'), 'the unhealthy report');
    assert.deepEqual(await statusOf(), [
      {
        name: 'claim:gpu/gpu',
        resources: [
          {
            resourceID: driver.cdiId(device),
            health: 'Unhealthy',
            message: 'ECC error count exceeded threshold',
          },
        ],
      },
    ]);
    const c = await waitFor(
      () => (podState('watched')?.containers[0]?.restartCount ?? 0) > 0 && podState('watched')?.containers[0],
      'the container failing',
    );
    assert.ok(c.restartCount >= 1);
    driver.setHealth(device, 'HEALTHY');
    await waitFor(async () => !JSON.stringify(await statusOf()).includes('Unhealthy'), 'the healthy report');
    await f.sim.deletePod('default', 'watched');
  });

  test('a NoExecute device taint evicts the pod using the device; NoSchedule keeps new claims off', async () => {
    const pod = await f.sim.admitPod(
      draPod('tainted', [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }]),
    );
    const claimName = (get(pod, 'status.resourceClaimStatuses') as { resourceClaimName: string }[])[0]!
      .resourceClaimName;
    const device = (await apiClaim(claimName)).status!.allocation!.devices!.results![0]!.device;
    const seen: [string, string[]][] = [];
    const gone = new Promise<void>((resolve) => {
      const onPod = (obj: unknown, type: string) => {
        if (get(obj, 'metadata.name') !== 'tainted') return;
        seen.push([
          type,
          ((get(obj, 'status.conditions') as Obj[] | undefined) ?? []).map((c) => String(c['type'])),
        ]);
        if (type === 'DELETED') {
          f.sim.off('pod', onPod);
          resolve();
        }
      };
      f.sim.on('pod', onPod);
    });
    const unprepares = driver.unprepareCalls.length;
    driver.devices = driver.devices.map((d) =>
      d.name === device
        ? { ...d, taints: [{ key: 'example.com/ecc', value: 'uncorrectable', effect: 'NoExecute' }] }
        : d,
    );
    const sent = Math.floor(Date.now() / 1000) * 1000;
    await driver.publish();
    // The driver sent no timeAdded: the API server stamped the current second (SetDefaults_DeviceTaint).
    const slices = (await fetch(`${f.sim.url}/apis/resource.k8s.io/v1/resourceslices`).then((r) =>
      r.json(),
    )) as { items: { spec: { devices: { name: string; taints?: Obj[] }[] } }[] };
    const taints = slices.items.flatMap((sl) => sl.spec.devices).find((d) => d.name === device)?.taints;
    assert.deepEqual(
      taints?.map((t) => [t['key'], t['effect']]),
      [['example.com/ecc', 'NoExecute']],
    );
    const timeAdded = String(taints?.[0]?.['timeAdded']);
    assert.match(timeAdded, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'timeAdded stamped in whole seconds');
    assert.ok(
      Date.parse(timeAdded) >= sent && Date.parse(timeAdded) <= Date.now(),
      `${timeAdded}: stamped while the slice was written`,
    );
    await gone;
    const modified = seen.find(([type, conds]) => type === 'MODIFIED' && conds.includes('DisruptionTarget'));
    assert.ok(
      modified,
      `a MODIFIED event with DisruptionTarget before the deletion: ${JSON.stringify(seen)}`,
    );
    const disruption = await fetch(
      `${f.sim.url}/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=tainted,reason=DeviceTaintManagerEviction`,
    ).then((r) => r.json() as Promise<{ items: Obj[] }>);
    assert.deepEqual(
      disruption.items.map((e) => [e['type'], e['message'], get(e, 'source.component')]),
      [['Normal', 'Marking for deletion', 'device-taint-eviction-controller']],
    );
    assert.equal(driver.unprepareCalls.length, unprepares + 1);
    await assert.rejects(apiClaim(claimName), (err: { code?: number }) => err.code === 404);

    // NoSchedule on every device but one: the next claim gets that one, the one after waits.
    const free = driver.devices.find((d) => d.name !== device)!.name;
    driver.devices = driver.devices.map((d) =>
      d.name === free
        ? { name: d.name, ...(d.attributes ? { attributes: d.attributes } : {}) }
        : { ...d, taints: [{ key: 'example.com/maintenance', effect: 'NoSchedule' }] },
    );
    await driver.publish();
    const a = await f.sim.admitPod(draPod('ns-a', [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }]));
    const aClaim = (get(a, 'status.resourceClaimStatuses') as { resourceClaimName: string }[])[0]!
      .resourceClaimName;
    assert.equal((await apiClaim(aClaim)).status?.allocation?.devices?.results?.[0]?.device, free);
    const b = await f.sim.admitPod(draPod('ns-b', [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }]));
    assert.equal(get(b, 'status.phase'), 'Pending');
    assert.match(String(get(b, 'status.conditions.0.message')), /cannot allocate all claims/);
    driver.devices = driver.devices.map((d) => ({
      name: d.name,
      ...(d.attributes ? { attributes: d.attributes } : {}),
    }));
    await driver.publish();
    await waitFor(() => podState('ns-b')?.phase === 'Running', 'ns-b scheduled once the taints are gone');
    await f.sim.deletePod('default', 'ns-a');
    await f.sim.deletePod('default', 'ns-b');
  });

  test('a DeviceTaintRule: NoExecute on a device evicts its pod, deleting the rule frees the device; NoSchedule keeps claims off without evicting', async () => {
    await api.createNamespacedResourceClaimTemplate({
      namespace: 'default',
      body: {
        metadata: { name: 'four-gpus', namespace: 'default' },
        spec: {
          spec: { devices: { requests: [{ name: 'gpus', exactly: { deviceClassName: DRIVER, count: 4 } }] } },
        },
      },
    });
    const fourGpus = (name: string) =>
      draPod(name, [{ name: 'gpus', resourceClaimTemplateName: 'four-gpus' }]);
    const claimOf = (pod: unknown) =>
      (get(pod, 'status.resourceClaimStatuses') as { resourceClaimName: string }[])[0]!.resourceClaimName;
    const devicesOf = async (claim: string) =>
      ((await apiClaim(claim)).status?.allocation?.devices?.results ?? []).map((r) => r.device).sort();
    // Every device of the node: the device a rule selects is always one the pods need.
    const all = driver.devices.map((d) => d.name).sort();
    const DEVICE = all[1]!;
    const taintRule = (name: string, effect: string) => ({
      apiVersion: 'resource.k8s.io/v1',
      kind: 'DeviceTaintRule',
      metadata: { name },
      spec: {
        deviceSelector: { driver: DRIVER, pool: NODE, device: DEVICE },
        taint: { key: 'example.com/ecc', value: 'uncorrectable', effect },
      },
    });
    const podReaches = (
      name: string,
      until: (pod: unknown, type: string) => boolean,
      seen: [string, unknown[]][] = [],
    ) =>
      new Promise<void>((resolve) => {
        const onPod = (pod: unknown, type: string) => {
          if (get(pod, 'metadata.name') !== name) return;
          seen.push([
            type,
            ((get(pod, 'status.conditions') as Obj[] | undefined) ?? []).map((c) => c['type']),
          ]);
          if (until(pod, type)) {
            f.sim.off('pod', onPod);
            resolve();
          }
        };
        f.sim.on('pod', onPod);
      });
    const running = (pod: unknown) => get(pod, 'status.phase') === 'Running';
    const evictionEvents = async (pod: string) =>
      (
        await fetch(
          `${f.sim.url}/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${pod},reason=DeviceTaintManagerEviction`,
        ).then((r) => r.json() as Promise<{ items: Obj[] }>)
      ).items.map((e) => [e['type'], e['message'], get(e, 'source.component')]);
    const failedScheduling = async (pod: string) =>
      (
        await fetch(
          `${f.sim.url}/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${pod},reason=FailedScheduling`,
        ).then((r) => r.json() as Promise<{ items: Obj[] }>)
      ).items.reduce((n, e) => n + Number(e['count'] ?? 1), 0);

    // NoExecute, selected by driver, pool and device: the pod holding the device is evicted.
    const ruled = await f.sim.admitPod(fourGpus('ruled'));
    const ruledClaim = claimOf(ruled);
    assert.deepEqual(await devicesOf(ruledClaim), all);
    const seen: [string, unknown[]][] = [];
    const gone = podReaches('ruled', (_pod, type) => type === 'DELETED', seen);
    const unprepares = driver.unprepareCalls.length;
    await objects.create(taintRule('gpu-ecc', 'NoExecute'));
    await gone;
    assert.ok(
      seen.some(([type, conds]) => type === 'MODIFIED' && conds.includes('DisruptionTarget')),
      `a MODIFIED event with DisruptionTarget before the deletion: ${JSON.stringify(seen)}`,
    );
    assert.deepEqual(await evictionEvents('ruled'), [
      ['Normal', 'Marking for deletion', 'device-taint-eviction-controller'],
    ]);
    assert.equal(driver.unprepareCalls.length, unprepares + 1);
    await assert.rejects(apiClaim(ruledClaim), (err: { code?: number }) => err.code === 404);

    // While the rule is there, no new claim gets the device; once it is deleted, the pending pod runs on it.
    const waiting = await f.sim.admitPod(fourGpus('after-rule'));
    assert.equal(get(waiting, 'status.phase'), 'Pending');
    assert.match(String(get(waiting, 'status.conditions.0.message')), /1 cannot allocate all claims/);
    const scheduled = podReaches('after-rule', running);
    await objects.delete(taintRule('gpu-ecc', 'NoExecute'));
    await scheduled;
    assert.deepEqual(await devicesOf(claimOf(waiting)), all, 'the device is allocatable again');

    // NoSchedule: the running pod stays (no eviction) while a new claim cannot have the device.
    await objects.create(taintRule('gpu-maintenance', 'NoSchedule'));
    const keptOff = await f.sim.admitPod(fourGpus('kept-off'));
    assert.equal(get(keptOff, 'status.phase'), 'Pending');
    assert.equal(podState('after-rule')?.phase, 'Running');
    assert.deepEqual(await evictionEvents('after-rule'), [], 'NoSchedule does not evict');
    assert.ok(
      !((get(await podObj('after-rule'), 'status.conditions') as Obj[]) ?? []).some(
        (c) => c['type'] === 'DisruptionTarget',
      ),
    );
    // The devices free again, the scheduler tries once more: still not the tainted one.
    const attempts = await failedScheduling('kept-off');
    await f.sim.deletePod('default', 'after-rule');
    await waitFor(async () => (await failedScheduling('kept-off')) > attempts, 'the scheduling retry');
    assert.equal(podState('kept-off')?.phase, 'Pending');
    assert.equal((await apiClaim(claimOf(keptOff))).status?.allocation, undefined);
    const keptOffRuns = podReaches('kept-off', running);
    await objects.delete(taintRule('gpu-maintenance', 'NoSchedule'));
    await keptOffRuns;
    await f.sim.deletePod('default', 'kept-off');
  });

  test('a driver restart: pods admitted while it is gone wait, and run once it registers again', async () => {
    await f.sim.admitPod(draPod('before', [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }]));
    driver.stop();
    await waitFor(
      () => !f.sim.state().dra.drivers.find((d) => d.name === DRIVER)?.plugins.length,
      'deregistration',
    );
    const wiping = f.sim.state().dra.drivers.find((d) => d.name === DRIVER);
    assert.ok(wiping?.wipeAt, 'the slices are wiped unless the driver comes back in time');
    const waiting = await f.sim.admitPod(
      draPod('while-down', [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }]),
    );
    assert.equal(get(waiting, 'status.phase'), 'Pending');
    const failed = (await events('while-down')).find((e) => e.reason === 'FailedPrepareDynamicResources');
    assert.equal(
      failed?.message,
      `Failed to prepare dynamic resources: prepare dynamic resources: DRA driver ${DRIVER} is not registered`,
    );
    const unprepares = driver.unprepareCalls.length;
    await driver.start();
    await waitFor(() => podState('while-down')?.phase === 'Running', 'the pod once the driver is back');
    assert.equal(f.sim.state().dra.drivers.find((d) => d.name === DRIVER)?.wipeAt, null);
    await f.sim.deletePod('default', 'before');
    assert.equal(
      driver.unprepareCalls.length,
      unprepares + 1,
      'the restarted driver unprepares the old claim',
    );
    await f.sim.deletePod('default', 'while-down');
  });

  test('a kubelet restart: prepared claims come back from the checkpoint, the driver registers again', async () => {
    const pod = await f.sim.admitPod(
      draPod('survivor', [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }]),
    );
    const uid = get(pod, 'metadata.uid') as string;
    const claimName = (get(pod, 'status.resourceClaimStatuses') as { resourceClaimName: string }[])[0]!
      .resourceClaimName;
    const registrations = driver.statuses.length;
    await f.sim.restart();
    const restored = f.sim.state().dra.claims.find((c) => c.name === claimName);
    assert.deepEqual(restored && { prepared: restored.prepared, pods: restored.podUids }, {
      prepared: false,
      pods: [uid],
    });
    await waitFor(() => driver.statuses.length > registrations, 'registration after the restart');
    assert.equal(driver.statuses.at(-1)?.pluginRegistered, true);
    await waitFor(async () => {
      const items = (await api.listResourceSlice({ fieldSelector: `spec.driver=${DRIVER}` })).items;
      return items.length === 1;
    }, 'the slice republished after the restart wiped it');
    assert.equal(podState('survivor')?.phase, 'Running');
    const listed = (await pr.list()).podResources.find((p) => p.name === 'survivor');
    assert.equal(listed?.containers[0]?.dynamicResources[0]?.claimName, claimName);
    const unprepares = driver.unprepareCalls.length;
    await waitFor(
      () => f.sim.state().dra.drivers.find((d) => d.name === DRIVER)?.plugins[0]?.connected,
      'connected',
    );
    await f.sim.deletePod('default', 'survivor');
    assert.equal(driver.unprepareCalls.length, unprepares + 1);
    await assert.rejects(apiClaim(claimName), (err: { code?: number }) => err.code === 404);
  });
});

describe('DRA: versions, refusals and what the API server refuses', () => {
  let f: SimFixture;
  let api: ResourceV1Api;
  let driver: TestDraDriver;
  const OLD = 'old.example.com';

  before(async () => {
    f = await startFixture({ syncFrequencyMs: 100 }, { registry: true });
    const kc = new KubeConfig();
    kc.loadFromFile(f.sim.kubeconfigPath);
    api = kc.makeApiClient(ResourceV1Api);
    await api.createDeviceClass({
      body: {
        metadata: { name: OLD },
        spec: { selectors: [{ cel: { expression: `device.driver == "${OLD}"` } }] },
      },
    });
    // A driver from before v1: DRAPlugin v1beta1 and DRAResourceHealth v1alpha1 only.
    driver = new TestDraDriver({
      driver: OLD,
      registryDir: f.registry,
      pluginsDir: join(f.stateDir, 'plugins'),
      kubeconfigPath: f.sim.kubeconfigPath,
      nodeName: NODE,
      devices: [{ name: 'acc-0' }, { name: 'acc-1' }],
      supportedVersions: ['v1beta1.DRAPlugin', 'v1alpha1.DRAResourceHealth'],
      serve: ['v1beta1'],
      health: 'v1alpha1',
    });
    await driver.start();
    await waitFor(() => driver.statuses[0]?.pluginRegistered, 'registration');
  });
  after(async () => {
    driver.stop();
    await f.cleanup();
  });

  test('a v1beta1 driver is called on v1beta1, its v1alpha1 health stream is read', async () => {
    const plugin = f.sim.state().dra.drivers.find((d) => d.name === OLD)?.plugins[0];
    assert.deepEqual(
      [plugin?.service, plugin?.healthService],
      ['v1beta1.DRAPlugin', 'v1alpha1.DRAResourceHealth'],
    );
    await waitFor(async () => {
      const items = (await api.listResourceSlice({ fieldSelector: `spec.driver=${OLD}` })).items;
      return items.length === 1;
    }, 'the slice');
    await api.createNamespacedResourceClaim({
      namespace: 'default',
      body: {
        metadata: { name: 'acc', namespace: 'default' },
        spec: { devices: { requests: [{ name: 'acc', exactly: { deviceClassName: OLD } }] } },
      },
    });
    await f.sim.admitPod(draPod('old-api', [{ name: 'acc', resourceClaimName: 'acc' }]));
    assert.equal(driver.prepareCalls.at(-1)?.service, 'v1beta1');
    const device = (await api.readNamespacedResourceClaim({ name: 'acc', namespace: 'default' })).status!
      .allocation!.devices!.results![0]!.device;
    driver.setHealth(device, 'UNHEALTHY', 'fan failure');
    const health = await waitFor(() => {
      const claim = f.sim.state().dra.claims.find((c) => c.name === 'acc');
      return claim?.devices[0]?.health === 'Unhealthy' ? claim.devices[0] : undefined;
    }, 'the v1alpha1 health report');
    assert.equal(health.message, 'fan failure');
    await f.sim.deletePod('default', 'old-api');
    assert.equal(driver.unprepareCalls.at(-1)?.service, 'v1beta1');
  });

  test('a driver serving no DRAPlugin version the kubelet knows is refused, with the reason', async () => {
    const server = await registrationServer(join(f.registry, 'future-reg.sock'), {
      type: 'DRAPlugin',
      name: 'future.example.com',
      endpoint: '/run/future/dra.sock',
      supportedVersions: ['v2.DRAPlugin'],
    });
    try {
      const status = await waitFor(() => server.statuses[0], 'the registration status');
      assert.deepEqual(status, {
        pluginRegistered: false,
        error:
          'RegisterPlugin error -- plugin validation failed with err: invalid supported gRPC versions of DRA driver plugin future.example.com at endpoint /run/future/dra.sock: none of services supported by the plugin (["v2.DRAPlugin"]) are supported by the kubelet (["v1.DRAPlugin" "v1beta1.DRAPlugin"])',
      });
      assert.equal(
        f.sim.state().dra.drivers.some((d) => d.name === 'future.example.com'),
        false,
      );
    } finally {
      server.stop();
    }
  });

  test('a pod that names its node bypasses the scheduler: an unallocated claim is refused by the kubelet, an allocated one reserved by the controller', async () => {
    await api.createNamespacedResourceClaim({
      namespace: 'default',
      body: {
        metadata: { name: 'unreserved', namespace: 'default' },
        spec: { devices: { requests: [{ name: 'acc', exactly: { deviceClassName: OLD } }] } },
      },
    });
    const pod = await f.sim.admitPod(
      draPod('pinned', [{ name: 'acc', resourceClaimName: 'unreserved' }], undefined, { nodeName: NODE }),
    );
    assert.equal(get(pod, 'status.phase'), 'Pending');
    const uid = get(pod, 'metadata.uid') as string;
    const claimUid = (await api.readNamespacedResourceClaim({ name: 'unreserved', namespace: 'default' }))
      .metadata!.uid;
    const events = (
      (await fetch(
        `${f.sim.url}/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=pinned,reason=FailedPrepareDynamicResources`,
      ).then((r) => r.json())) as { items: Obj[] }
    ).items;
    assert.equal(
      events[0]?.['message'],
      `Failed to prepare dynamic resources: prepare dynamic resources: pod pinned (${uid}) is not allowed to use ResourceClaim unreserved (${claimUid})`,
    );
    await f.sim.deletePod('default', 'pinned');

    // An allocated claim is reserved for such a pod by the ResourceClaim controller.
    await api.createNamespacedResourceClaim({
      namespace: 'default',
      body: {
        metadata: { name: 'preallocated', namespace: 'default' },
        spec: { devices: { requests: [{ name: 'acc', exactly: { deviceClassName: OLD } }] } },
      },
    });
    await f.sim.admitPod(draPod('holder', [{ name: 'acc', resourceClaimName: 'preallocated' }]));
    const running = await f.sim.admitPod(
      draPod('pinned-2', [{ name: 'acc', resourceClaimName: 'preallocated' }], undefined, { nodeName: NODE }),
    );
    assert.equal(get(running, 'status.phase'), 'Running');
    assert.deepEqual(
      (
        await api.readNamespacedResourceClaim({ name: 'preallocated', namespace: 'default' })
      ).status?.reservedFor?.map((r) => r.name),
      ['holder', 'pinned-2'],
    );
    await f.sim.deletePod('default', 'holder');
    await f.sim.deletePod('default', 'pinned-2');
  });

  test('the API server refuses claim references that do not add up (422 as a pod create would)', async () => {
    const cases: [unknown, string][] = [
      [
        draPod('bad-1', [{ name: 'gpu' }]),
        'Pod "bad-1" is invalid: spec.resourceClaims[0]: Invalid value: {"name":"gpu"}: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`',
      ],
      [
        draPod('bad-2', [{ name: 'gpu', resourceClaimName: 'a', resourceClaimTemplateName: 'b' }]),
        'Pod "bad-2" is invalid: spec.resourceClaims[0]: Invalid value: {"name":"gpu","resourceClaimName":"a","resourceClaimTemplateName":"b"}: at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified',
      ],
      [
        draPod('bad-3', [{ name: 'gpu', resourceClaimName: 'a' }], [{ name: 'tpu' }]),
        'Pod "bad-3" is invalid: spec.containers[0].resources.claims[0]: Not found: "tpu": must be one of the names in pod.spec.resourceClaims: gpu',
      ],
      [
        draPod('bad-4', [], [{ name: 'gpu' }]),
        'Pod "bad-4" is invalid: spec.containers[0].resources.claims[0]: Not found: "gpu": must be one of the names in pod.spec.resourceClaims which is empty',
      ],
      [
        draPod('bad-5', [
          { name: 'gpu', resourceClaimName: 'a' },
          { name: 'gpu', resourceClaimName: 'b' },
        ]),
        'Pod "bad-5" is invalid: spec.resourceClaims[1].name: Duplicate value: "gpu"',
      ],
    ];
    for (const [pod, message] of cases)
      await assert.rejects(f.sim.admitPod(pod as never), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'Invalid');
        assert.equal(err.message, message);
        return true;
      });
  });
});
