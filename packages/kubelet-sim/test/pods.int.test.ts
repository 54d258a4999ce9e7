// Pod admission (NUMA-aligned first-fit, GetPreferredAllocation with must_include, Allocate and
// PreStartContainer failures), device-health-driven container failures (CrashLoopBackOff vs
// Failed), recovery on heal, allocatedResourcesStatus and freeing devices on delete.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeletSimError, type AdmittedPod } from '../src/index.js';
import { pod, startFixture, waitFor, type SimFixture, startWithPlugin } from './helpers.js';
import { TestPlugin } from './test-plugin.js';

const GPU = 'example.com/gpu';
const NIC = 'example.com/nic';

type ContainerStatus = {
  name: string;
  restartCount: number;
  state: {
    running?: unknown;
    waiting?: { reason: string; message?: string };
    terminated?: { exitCode: number; reason: string };
  };
  lastState: { terminated?: { exitCode: number } };
  allocatedResourcesStatus?: { name: string; resources: { resourceID: string; health: string }[] }[];
};
type PodStatus = { phase: string; reason?: string; message?: string; containerStatuses?: ContainerStatus[] };

async function getPod(f: SimFixture, name: string): Promise<{ status: PodStatus }> {
  const res = await fetch(`${f.sim.url}/api/v1/namespaces/default/pods/${name}`);
  assert.equal(res.status, 200);
  return (await res.json()) as { status: PodStatus };
}

const devicesOf = (f: SimFixture, name: string, resource: string, container = 'main') =>
  f.sim
    .state()
    .pods.find((p) => p.name === name)
    ?.containers.find((c) => c.name === container)?.devices[resource] ?? [];

describe('Admission without GetPreferredAllocation', () => {
  let f: SimFixture;
  let plugin: TestPlugin;
  let stop: () => Promise<void>;
  before(async () => {
    ({ f, plugin, stop } = await startWithPlugin(
      { numaNodes: 2, cpus: 8 },
      {
        resourceName: GPU,
        devices: [{ id: 'a', numa: [1] }, { id: 'b', numa: [0] }, { id: 'c', numa: [0] }, { id: 'd' }],
      },
    ));
  });
  after(() => stop());

  test('picks NUMA-aligned devices first-fit and calls Allocate with them', async () => {
    await f.sim.admitPod(pod('two', { [GPU]: 2 }));
    assert.deepEqual(devicesOf(f, 'two', GPU), ['b', 'c']);
    assert.deepEqual(plugin.calls.allocate.at(-1), ['b', 'c']);
    assert.equal(plugin.calls.preferred.length, 0);
    const main = f.sim.state().pods.find((p) => p.name === 'two')!.containers[0]!;
    assert.deepEqual(main.allocateResponses[GPU], {
      envs: { TEST_DEVICES: 'b,c' },
      mounts: [],
      devices: [],
      annotations: {},
      cdiDevices: [],
    });
    await f.sim.admitPod(pod('one', { [GPU]: 1 }));
    assert.deepEqual(devicesOf(f, 'one', GPU), ['a'], 'the lowest NUMA node that fits (node 1)');
  });

  test("container IDs name the runtime the Node reports (containerRuntimeVersion's scheme)", async () => {
    await f.sim.admitPod(pod('ids', { [GPU]: 1 }));
    const node = (await (await fetch(`${f.sim.url}/api/v1/nodes/${f.sim.nodeName}`)).json()) as {
      status: { nodeInfo: { containerRuntimeVersion: string } };
    };
    const runtime = node.status.nodeInfo.containerRuntimeVersion.split('://')[0];
    const status = (await getPod(f, 'ids')).status as PodStatus & {
      containerStatuses: (ContainerStatus & { containerID?: string })[];
    };
    const id = status.containerStatuses[0]?.containerID ?? '';
    assert.match(id, /^[a-z0-9-]+:\/\/[0-9a-f]{64}$/);
    assert.equal(id.split('://')[0], runtime, `${id} vs ${node.status.nodeInfo.containerRuntimeVersion}`);
    await f.sim.deletePod('default', 'ids');
  });

  test('whole-CPU Guaranteed containers get exclusive CPUs from one NUMA node', async () => {
    await f.sim.admitPod({
      metadata: { name: 'pinned', namespace: 'default' },
      spec: {
        containers: [{ name: 'main', resources: { limits: { cpu: '2', memory: '1Gi', [GPU]: '1' } } }],
      },
    });
    const main = f.sim.state().pods.find((p) => p.name === 'pinned')!.containers[0]!;
    assert.deepEqual(main.devices[GPU], ['d']);
    assert.equal(main.cpuIds.length, 2);
    const numa = f.sim.state().node.numaNodes;
    assert.ok(
      numa.some((n) => main.cpuIds.every((c) => n.cpus.includes(c))),
      `CPUs ${main.cpuIds.join(',')} share a NUMA node`,
    );
    const pinnedPod = await getPod(f, 'pinned');
    assert.equal((pinnedPod.status as { qosClass?: string }).qosClass, 'Guaranteed');
  });

  test('more devices than are free fail admission with UnexpectedAdmissionError and free nothing twice', async () => {
    await assert.rejects(f.sim.admitPod(pod('greedy', { [GPU]: 2 })), (err: KubeletSimError) => {
      assert.ok(err instanceof KubeletSimError);
      assert.equal(err.code, 'UnexpectedAdmissionError');
      assert.equal(err.reason, 'UnexpectedAdmissionError');
      assert.equal(
        err.message,
        `Allocate failed due to requested number of devices unavailable for ${GPU}. Requested: 2, Available: 0, which is unexpected`,
      );
      return true;
    });
    const rejected = await getPod(f, 'greedy');
    assert.equal(rejected.status.phase, 'Failed');
    assert.equal(rejected.status.reason, 'UnexpectedAdmissionError');
    assert.match(rejected.status.message ?? '', /^Pod was rejected: Allocate failed due to/);
  });

  test('delete frees the devices', async () => {
    await f.sim.deletePod('default', 'two');
    assert.deepEqual(f.sim.state().resources[GPU]!.allocated, ['a', 'd']);
    await f.sim.admitPod(pod('after-delete', { [GPU]: 2 }));
    assert.deepEqual(devicesOf(f, 'after-delete', GPU), ['b', 'c']);
    const res = await fetch(`${f.sim.url}/api/v1/namespaces/default/pods/two`);
    assert.equal(res.status, 404);
  });

  test('a resource without a plugin fails the node-resources predicate (OutOf<resource>)', async () => {
    await assert.rejects(
      f.sim.admitPod(pod('no-plugin', { 'example.com/fpga': 1 })),
      (err: KubeletSimError) => {
        assert.equal(err.code, 'OutOfResource');
        assert.equal(err.reason, 'OutOfexample.com/fpga');
        assert.equal(
          err.message,
          "Node didn't have enough resource: example.com/fpga, requested: 1, used: 0, capacity: 0",
        );
        return true;
      },
    );
  });

  test("the API server's validation: integers, requests equal limits, limits required", async () => {
    const bad = (resources: Record<string, unknown>) => ({
      metadata: { name: 'bad' },
      spec: { containers: [{ name: 'c', resources }] },
    });
    await assert.rejects(f.sim.admitPod(bad({ limits: { [GPU]: '500m' } })), /must be an integer/);
    await assert.rejects(
      f.sim.admitPod(bad({ requests: { [GPU]: '1' }, limits: { [GPU]: '2' } })),
      /must be equal to example.com\/gpu limit of 2/,
    );
    await assert.rejects(
      f.sim.admitPod(bad({ requests: { [GPU]: '1' } })),
      /Limit must be set for non overcommitable resources/,
    );
    await assert.rejects(
      f.sim.admitPod({ metadata: { name: 'Bad_Name' }, spec: { containers: [{ name: 'c' }] } }),
      (err: KubeletSimError) => err.code === 'Invalid',
    );
    await assert.rejects(
      f.sim.admitPod(pod('one', {})),
      (err: KubeletSimError) => err.code === 'AlreadyExists',
    );
  });
});

describe('Admission with GetPreferredAllocation', () => {
  let f: SimFixture;
  let plugin: TestPlugin;
  let stop: () => Promise<void>;
  before(async () => {
    ({ f, plugin, stop } = await startWithPlugin(
      {},
      {
        resourceName: GPU,
        getPreferredAllocationAvailable: true,
        devices: [{ id: 'p0' }, { id: 'p1' }, { id: 'p2' }, { id: 'p3' }, { id: 'p4' }],
      },
    ));
  });
  after(() => stop());

  test("the plugin's preferred devices are used", async () => {
    await f.sim.admitPod(pod('preferred', { [GPU]: 2 }));
    const req = plugin.calls.preferred.at(-1)!;
    assert.deepEqual(req.availableDeviceIDs, ['p0', 'p1', 'p2', 'p3', 'p4']);
    assert.deepEqual(req.mustIncludeDeviceIDs, []);
    assert.equal(req.allocationSize, 2);
    assert.deepEqual(devicesOf(f, 'preferred', GPU), ['p4', 'p3']);
    assert.deepEqual(plugin.calls.allocate.at(-1), ['p4', 'p3']);
  });

  test('devices of init containers are reused and passed as must_include', async () => {
    plugin.calls.preferred.length = 0;
    await f.sim.admitPod(pod('with-init', { [GPU]: 2 }, { init: { [GPU]: 1 } }));
    const [initReq, mainReq] = plugin.calls.preferred;
    assert.ok(initReq && mainReq);
    assert.deepEqual(initReq.mustIncludeDeviceIDs, []);
    assert.equal(initReq.allocationSize, 1);
    const initDevices = devicesOf(f, 'with-init', GPU, 'init');
    assert.deepEqual(initDevices, ['p2']);
    assert.deepEqual(mainReq.mustIncludeDeviceIDs, ['p2']);
    assert.equal(mainReq.allocationSize, 2);
    assert.ok(mainReq.availableDeviceIDs.includes('p2'));
    assert.deepEqual(devicesOf(f, 'with-init', GPU), ['p2', 'p1']);
    const st = await getPod(f, 'with-init');
    assert.equal(st.status.phase, 'Running');
  });
});

describe('Admission failures from the plugin', () => {
  let f: SimFixture;
  let plugin: TestPlugin;
  let stop: () => Promise<void>;
  before(async () => {
    ({ f, plugin, stop } = await startWithPlugin(
      {},
      {
        resourceName: GPU,
        preStartRequired: true,
        devices: [{ id: 'x0' }, { id: 'x1' }],
      },
    ));
  });
  after(() => stop());

  test('an Allocate error rejects the pod and frees what was taken', async () => {
    plugin.allocateError = 'device x0 is busy';
    await assert.rejects(f.sim.admitPod(pod('alloc-fails', { [GPU]: 1 })), (err: KubeletSimError) => {
      assert.equal(err.reason, 'UnexpectedAdmissionError');
      assert.equal(
        err.message,
        'Allocate failed due to rpc error: code = InvalidArgument desc = device x0 is busy, which is unexpected',
      );
      return true;
    });
    assert.deepEqual(f.sim.state().resources[GPU]!.allocated, []);
    plugin.allocateError = null;
  });

  test('an empty container_responses list is an error', async () => {
    plugin.emptyAllocateResponse = true;
    await assert.rejects(
      f.sim.admitPod(pod('empty-response', { [GPU]: 1 })),
      /no containers return in allocation response/,
    );
    assert.deepEqual(f.sim.state().resources[GPU]!.allocated, []);
    plugin.emptyAllocateResponse = false;
  });

  test('the control API answers an admission failure with problem+json carrying the reason', async () => {
    plugin.allocateError = 'nope';
    const res = await fetch(`${f.sim.url}/control/v1/pods`, {
      method: 'POST',
      body: JSON.stringify(pod('via-http', { [GPU]: 1 })),
    });
    plugin.allocateError = null;
    assert.equal(res.status, 409);
    assert.equal(res.headers.get('content-type'), 'application/problem+json');
    const body = (await res.json()) as { reason: string; status: number; detail: string };
    assert.equal(body.reason, 'UnexpectedAdmissionError');
    assert.equal(body.status, 409);
    assert.match(body.detail, /desc = nope, which is unexpected$/);
    const invalid = await fetch(`${f.sim.url}/control/v1/pods`, { method: 'POST', body: '{"metadata":{}}' });
    assert.equal(invalid.status, 422);
    assert.equal(((await invalid.json()) as { reason: string }).reason, 'Invalid');
    const missing = await fetch(`${f.sim.url}/control/v1/pods/default/nope`, { method: 'DELETE' });
    assert.equal(missing.status, 404);
  });

  test('PreStartContainer runs before the container starts; its failure is CreateContainerConfigError', async () => {
    await f.sim.admitPod(pod('prestart', { [GPU]: 1 }));
    assert.deepEqual(plugin.calls.preStart.at(-1), devicesOf(f, 'prestart', GPU));
    plugin.preStartError = 'firmware not loaded';
    const admitted: AdmittedPod = await f.sim.admitPod(pod('prestart-fails', { [GPU]: 1 }));
    const status = admitted['status'] as PodStatus;
    assert.equal(status.phase, 'Pending');
    assert.equal(status.containerStatuses![0]!.state.waiting!.reason, 'CreateContainerConfigError');
    assert.match(
      status.containerStatuses![0]!.state.waiting!.message!,
      /^device plugin PreStartContainer rpc failed with err: rpc error: code = Internal desc = firmware not loaded$/,
    );
    plugin.preStartError = null;
  });
});

describe('Unhealthy devices: CrashLoopBackOff vs Failed, recovery on heal', () => {
  let f: SimFixture;
  let plugin: TestPlugin;
  let stop: () => Promise<void>;
  before(async () => {
    ({ f, plugin, stop } = await startWithPlugin(
      { crashLoopBackOff: { initialMs: 40, maxMs: 160 } },
      {
        resourceName: NIC,
        devices: [{ id: 'n0' }, { id: 'n1' }, { id: 'n2' }],
      },
    ));
    await f.sim.admitPod(pod('always', { [NIC]: 1 }, { restartPolicy: 'Always' }));
    await f.sim.admitPod(pod('never', { [NIC]: 1 }, { restartPolicy: 'Never' }));
    await f.sim.admitPod(pod('on-failure', { [NIC]: 1 }, { restartPolicy: 'OnFailure' }));
  });
  after(() => stop());

  test('every container starts Running with healthy allocatedResourcesStatus', async () => {
    for (const name of ['always', 'never', 'on-failure']) {
      const p = await getPod(f, name);
      assert.equal(p.status.phase, 'Running');
      const cs = p.status.containerStatuses![0]!;
      assert.ok(cs.state.running);
      assert.deepEqual(cs.allocatedResourcesStatus, [
        { name: NIC, resources: [{ resourceID: devicesOf(f, name, NIC)[0], health: 'Healthy' }] },
      ]);
    }
  });

  test('restartPolicy Always crash-loops with a growing restart count; Never ends Failed', async () => {
    const alwaysDev = devicesOf(f, 'always', NIC)[0]!;
    const neverDev = devicesOf(f, 'never', NIC)[0]!;
    const onFailureDev = devicesOf(f, 'on-failure', NIC)[0]!;
    plugin.setHealth(alwaysDev, 'Unhealthy');
    plugin.setHealth(neverDev, 'Unhealthy');
    plugin.setHealth(onFailureDev, 'Unhealthy');

    const never = await waitFor(async () => {
      const p = await getPod(f, 'never');
      return p.status.phase === 'Failed' ? p : undefined;
    }, 'never → Failed');
    const cs = never.status.containerStatuses![0]!;
    assert.equal(cs.state.terminated!.exitCode, 1);
    assert.equal(cs.restartCount, 0);
    assert.deepEqual(cs.allocatedResourcesStatus, [
      { name: NIC, resources: [{ resourceID: neverDev, health: 'Unhealthy' }] },
    ]);
    // A terminated pod no longer holds its device (the kubelet frees devices of inactive pods).
    assert.ok(!f.sim.state().resources[NIC]!.allocated.includes(neverDev));

    const counts: number[] = [];
    for (let i = 0; i < 3; i++) {
      const p = await waitFor(
        () =>
          f.sim
            .state()
            .pods.find((x) => x.name === 'always' && x.containers[0]!.restartCount > (counts.at(-1) ?? 0)),
        'another restart',
      );
      counts.push(p.containers[0]!.restartCount);
    }
    assert.ok(counts[2]! > counts[0]!, `restart count grows: ${counts.join(',')}`);
    const always = await getPod(f, 'always');
    assert.equal(always.status.phase, 'Running');
    const acs = always.status.containerStatuses![0]!;
    assert.equal(acs.lastState.terminated!.exitCode, 1);
    await waitFor(
      async () =>
        (await getPod(f, 'always')).status.containerStatuses![0]!.state.waiting?.reason ===
        'CrashLoopBackOff',
      'CrashLoopBackOff',
    );
    const onFailure = await getPod(f, 'on-failure');
    assert.equal(onFailure.status.phase, 'Running', 'OnFailure restarts a failed container too');
    assert.ok(onFailure.status.containerStatuses![0]!.restartCount >= 1);
    const events = (await (
      await fetch(`${f.sim.url}/api/v1/namespaces/default/events?fieldSelector=reason=BackOff`)
    ).json()) as { items: { involvedObject: { name: string }; count: number; type: string }[] };
    const backOff = events.items.find((e) => e.involvedObject.name === 'always');
    assert.equal(backOff?.type, 'Warning');
    assert.ok((backOff?.count ?? 0) >= 2, 'repeated back-offs are aggregated into one Event with a count');
  });

  test('when the device heals, the crash-looping container recovers', async () => {
    const alwaysDev = devicesOf(f, 'always', NIC)[0]!;
    const before = f.sim.state().pods.find((p) => p.name === 'always')!.containers[0]!.restartCount;
    plugin.setHealth(alwaysDev, 'Healthy');
    const p = await waitFor(async () => {
      const x = await getPod(f, 'always');
      return x.status.containerStatuses![0]!.state.running ? x : undefined;
    }, 'recovery');
    const cs = p.status.containerStatuses![0]!;
    assert.ok(cs.restartCount >= before);
    assert.deepEqual(cs.allocatedResourcesStatus, [
      { name: NIC, resources: [{ resourceID: alwaysDev, health: 'Healthy' }] },
    ]);
    assert.equal(p.status.phase, 'Running');
  });
});

describe('Init containers and sidecars', () => {
  let f: SimFixture;
  let plugin: TestPlugin;
  let stop: () => Promise<void>;
  before(async () => {
    ({ f, plugin, stop } = await startWithPlugin(
      { crashLoopBackOff: { initialMs: 30, maxMs: 60 } },
      {
        resourceName: GPU,
        devices: [{ id: 's0' }, { id: 's1' }, { id: 's2' }],
      },
    ));
  });
  after(() => stop());

  test('an init container completes, a sidecar reuses its device, keeps it, crash-loops on a fault, then heals', async () => {
    const res = (n: number) => ({ limits: { [GPU]: String(n) } });
    await f.sim.admitPod({
      metadata: { name: 'with-sidecar', namespace: 'default' },
      spec: {
        restartPolicy: 'Never',
        initContainers: [
          { name: 'setup', resources: res(1) },
          { name: 'proxy', restartPolicy: 'Always', resources: res(1) },
        ],
        containers: [{ name: 'main', resources: res(1) }],
      },
    });
    const setup = devicesOf(f, 'with-sidecar', GPU, 'setup');
    const proxy = devicesOf(f, 'with-sidecar', GPU, 'proxy');
    const main = devicesOf(f, 'with-sidecar', GPU, 'main');
    // As in the kubelet, the next container (here the sidecar) reuses the init container's device,
    // and a sidecar's devices are not reusable: the app container gets another one.
    assert.deepEqual(proxy, setup);
    assert.equal(main.length, 1);
    assert.notDeepEqual(main, proxy);
    type Init = { name: string; state: ContainerStatus['state']; restartCount: number };
    const inits = async () =>
      ((await getPod(f, 'with-sidecar')).status as PodStatus & { initContainerStatuses: Init[] })
        .initContainerStatuses;
    const first = await inits();
    assert.equal(first[0]!.state.terminated?.reason, 'Completed');
    assert.ok(first[1]!.state.running);

    plugin.setHealth(proxy[0]!, 'Unhealthy');
    await waitFor(async () => (await inits())[1]!.restartCount >= 2, 'sidecar restarts');
    const p = await getPod(f, 'with-sidecar');
    assert.equal(p.status.phase, 'Running', 'a sidecar restarts even under restartPolicy Never');
    plugin.setHealth(proxy[0]!, 'Healthy');
    await waitFor(async () => (await inits())[1]!.state.running, 'sidecar recovers');
    assert.ok((await getPod(f, 'with-sidecar')).status.containerStatuses![0]!.state.running);
  });
});

describe('Node capacity predicate', () => {
  let f: SimFixture;
  before(async () => {
    f = await startFixture({ maxPods: 2, cpus: 2 });
  });
  after(() => f.cleanup());

  test('pods and cpu beyond the node allocatable are rejected with OutOf<resource>', async () => {
    const cpuPod = (name: string, cpu: string) => ({
      metadata: { name },
      spec: { containers: [{ name: 'c', resources: { requests: { cpu } } }] },
    });
    await f.sim.admitPod(cpuPod('half', '1500m'));
    await assert.rejects(f.sim.admitPod(cpuPod('too-much-cpu', '1')), (err: KubeletSimError) => {
      assert.equal(err.reason, 'OutOfcpu');
      assert.equal(
        err.message,
        "Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000",
      );
      return true;
    });
    await f.sim.admitPod(cpuPod('small', '100m'));
    await assert.rejects(
      f.sim.admitPod(cpuPod('third', '1m')),
      (err: KubeletSimError) => err.reason === 'OutOfpods',
    );
    const node = (await (await fetch(`${f.sim.url}/api/v1/nodes/sim-node`)).json()) as {
      status: { allocatable: Record<string, string> };
    };
    assert.equal(node.status.allocatable['pods'], '2');
    // Rejected pods are Failed and no longer count; deleting one frees its slot.
    await f.sim.deletePod('default', 'small');
    await f.sim.admitPod(cpuPod('fourth', '1m'));
  });
});
