import { test } from 'node:test';
import assert from 'node:assert/strict';
import fastJsonPatch from 'fast-json-patch';
import type { podresources } from '@plugboard/proto';
import { BuildCache, buildSnapshot, type ModelInputs, type ResourceInput } from './build.js';
import type { DraDriverInput } from './dra.js';
import { claimHealthStatus } from '../../test/helpers.js';
import { diffDocuments, diffEventRing } from './diff.js';
import { NodeModel } from './node-model.js';
import { summarize } from './summary.js';
import { T0, modelInputs, numaTopology, registeredAtT0, runningPod } from './test-fixtures.js';
import type { NodeEvent, NodeSnapshot } from '@plugboard/api';

const { applyPatch } = fastJsonPatch;

/** `count` GPUs as the plugin lists them; the kubelet was told the same list (an open stream). */
function gpu(count: number, unhealthy: number[] = []): ResourceInput {
  const devices = Array.from({ length: count }, (_, i) => ({
    id: `gpu-${i}`,
    health: unhealthy.includes(i) ? ('Unhealthy' as const) : ('Healthy' as const),
    reason: unhealthy.includes(i) ? 'ecc' : null,
    since: T0,
    numaNodes: [i < count / 2 ? 0 : 1],
    replicaOf: null,
  }));
  return { name: 'plugboard.example/gpu', registration: registeredAtT0, devices, reported: devices };
}

const base = modelInputs();

test('a plugin waiting for its kubelet: the API-server numbers are marked stale since then', () => {
  const T1 = '2026-01-01T00:05:00.000Z';
  const node = {
    metadata: { name: 'n1' },
    status: { capacity: { 'plugboard.example/gpu': '4' }, allocatable: { 'plugboard.example/gpu': '4' } },
  };
  const waiting = {
    ...gpu(4),
    registration: {
      ...registeredAtT0,
      phase: 'waiting-for-kubelet' as const,
      waitingSince: T1,
      error: 'stream closed',
    },
  };
  const s = buildSnapshot({ ...base, resources: [waiting], kube: { node, pods: [] } });
  const r = s.resources['plugboard.example/gpu']!;
  assert.deepEqual(r.apiServer, { capacity: 4, allocatable: 4, staleSince: T1 });
  const summary = summarize(s).resources['plugboard.example/gpu']!;
  assert.equal(summary.registered, false);
  assert.equal(summary.registration, 'waiting-for-kubelet');
  assert.equal(summary.apiServer?.staleSince, T1);
  const current = buildSnapshot({ ...base, resources: [gpu(4)], kube: { node, pods: [] } });
  assert.equal(current.resources['plugboard.example/gpu']!.apiServer?.staleSince, null);
});

test('snapshot joins plugin devices, PodResources allocations, allocatable and API-server counts', () => {
  const s = buildSnapshot({
    ...base,
    resources: [gpu(4, [3])],
    podResources: {
      pods: [
        {
          name: 'train',
          namespace: 'ml',
          cpuIds: [],
          memory: [],
          containers: [
            {
              name: 'main',
              devices: [
                { resourceName: 'plugboard.example/gpu', deviceIds: ['gpu-0', 'gpu-3'], topology: undefined },
              ],
              cpuIds: [3, 1],
              memory: [{ memoryType: 'memory', size: 1024, topology: numaTopology(0) }],
              dynamicResources: [],
            },
          ],
        },
        {
          name: 'aligned',
          namespace: 'ml',
          cpuIds: [],
          memory: [],
          containers: [
            {
              name: 'c',
              devices: [
                { resourceName: 'plugboard.example/gpu', deviceIds: ['gpu-1'], topology: numaTopology(0) },
              ],
              cpuIds: [],
              memory: [],
              dynamicResources: [],
            },
          ],
        },
      ],
      allocatable: {
        devices: [
          {
            resourceName: 'plugboard.example/gpu',
            deviceIds: ['gpu-0', 'gpu-1', 'gpu-2'],
            topology: undefined,
          },
        ],
        cpuIds: [0, 1, 2, 3],
        memory: [{ memoryType: 'memory', size: 4096, topology: numaTopology(0) }],
      },
    },
    kube: {
      node: {
        metadata: { name: 'n1' },
        status: { capacity: { 'plugboard.example/gpu': '4' }, allocatable: { 'plugboard.example/gpu': '3' } },
      },
      pods: [
        runningPod('train', 'ml', {
          ready: false,
          restartCount: 3,
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          allocatedResourcesStatus: [
            { name: 'plugboard.example/gpu', resources: [{ resourceID: 'gpu-3', health: 'Unhealthy' }] },
          ],
        }),
      ],
    },
  });
  const r = s.resources['plugboard.example/gpu']!;
  assert.deepEqual(r.kubelet, {
    capacity: 4,
    allocatable: 3,
    allocated: 3,
    free: 1,
    healthy: 3,
    unhealthy: 1,
  });
  assert.deepEqual(r.apiServer, { capacity: 4, allocatable: 3, staleSince: null });
  assert.deepEqual(s.devices['plugboard.example/gpu/gpu-3']!.allocation, {
    namespace: 'ml',
    pod: 'train',
    container: 'main',
  });
  const train = s.pods['ml/train']!;
  assert.equal(train.affectedByUnhealthyDevice, true);
  assert.equal(train.reason, 'CrashLoopBackOff');
  assert.equal(train.numaAlignment.verdict, 'spread');
  assert.deepEqual(train.numaAlignment.numaNodes, [0, 1]);
  assert.deepEqual(train.containers[0]!.cpuIds, [1, 3]);
  assert.equal(train.containers[0]!.restartCount, 3);
  assert.deepEqual(train.containers[0]!.allocatedResourcesStatus, [
    { resource: 'plugboard.example/gpu', devices: [{ id: 'gpu-3', health: 'Unhealthy' }] },
  ]);
  const aligned = s.pods['ml/aligned']!;
  assert.equal(aligned.numaAlignment.verdict, 'aligned');
  assert.equal(aligned.phase, 'Running');
  assert.equal(aligned.affectedByUnhealthyDevice, false);
  assert.deepEqual(s.numa.nodes['0']!.deviceKeys, [
    'plugboard.example/gpu/gpu-0',
    'plugboard.example/gpu/gpu-1',
  ]);
  assert.equal(s.numa.nodes['0']!.memory.memory, 4096);
});

test('without PodResources, allocatable falls back to healthy devices; replicas are counted', () => {
  // Physical device "a" is faulted: every replica is Unhealthy, and the kubelet was told so.
  const replicas = ['a::0', 'a::1', 'a::2'].map((id) => ({
    id,
    health: 'Unhealthy' as const,
    reason: 'r',
    since: T0,
    numaNodes: [],
    replicaOf: 'a',
  }));
  const shared: ResourceInput = {
    name: 'plugboard.example/shared',
    registration: registeredAtT0,
    devices: replicas,
    reported: replicas,
  };
  const s = buildSnapshot({
    ...base,
    resources: [gpu(2, [0]), shared],
    faults: [
      {
        id: 'f',
        resource: 'plugboard.example/shared',
        deviceId: 'a',
        reason: 'r',
        createdAt: T0,
        expiresAt: null,
        scenarioId: null,
        simulated: true,
      },
    ],
  });
  assert.equal(s.resources['plugboard.example/gpu']!.kubelet.allocatable, 1);
  assert.equal(s.resources['plugboard.example/shared']!.replicas, 3);
  assert.equal(s.devices['plugboard.example/shared/a::1']!.faulted, true);
  assert.equal(s.faults.f!.state, 'active');
  assert.deepEqual(s.numa.nodes.none!.deviceKeys.length, 3);
  assert.equal(s.numa.nodes.none!.id, null);
});

test('a fault is "active" only once the kubelet was told Unhealthy; pending, absent and failed say why', () => {
  const fault = (id: string, deviceId: string, extra: Partial<ModelInputs['faults'][0]> = {}) => ({
    id,
    resource: 'plugboard.example/gpu',
    deviceId,
    reason: 'drill',
    createdAt: T0,
    expiresAt: null,
    scenarioId: null,
    simulated: true as const,
    ...extra,
  });
  const faults = [
    fault('told', 'gpu-0'),
    fault('unsent', 'gpu-1'),
    fault('absent', 'gpu-9'),
    fault('refused', 'gpu-2', { failure: 'could not be restored: nope' }),
    fault('gone', 'x', { resource: 'plugboard.example/gone' }),
  ];
  // The plugin holds gpu-0 and gpu-1 Unhealthy; the kubelet has heard of gpu-0 only so far.
  const plugin = gpu(4, [0, 1]);
  const told = gpu(4, [0]).devices;
  const build = (reported: ResourceInput['reported']) =>
    buildSnapshot({ ...base, resources: [{ ...plugin, reported }], faults });

  const s = build(told);
  const d = (id: string) => s.devices[`plugboard.example/gpu/${id}`]!;
  assert.deepEqual(
    [d('gpu-0').fault, d('gpu-0').faulted, d('gpu-0').kubeletHealth],
    ['active', true, 'Unhealthy'],
  );
  assert.deepEqual(
    [d('gpu-1').health, d('gpu-1').kubeletHealth, d('gpu-1').fault, d('gpu-1').faulted],
    ['Unhealthy', 'Healthy', 'pending', false],
    'never "fault on" over a device the kubelet sees Healthy',
  );
  assert.deepEqual([d('gpu-2').fault, d('gpu-2').faulted], [null, false], 'a refused fault holds nothing');
  assert.deepEqual(Object.fromEntries(Object.values(s.faults).map((f) => [f.id, f.state])), {
    told: 'active',
    unsent: 'pending',
    absent: 'device-absent',
    refused: 'failed',
    gone: 'failed',
  });
  assert.equal(s.faults.told!.stateReason, null);
  assert.match(s.faults.unsent!.stateReason!, /not sent/);
  assert.match(s.faults.absent!.stateReason!, /does not list gpu-9 now; the fault holds it/);
  assert.equal(s.faults.refused!.stateReason, 'could not be restored: nope');
  assert.match(s.faults.gone!.stateReason!, /plugboard.example\/gone is not served/);

  // No stream open (the kubelet is down): nothing is "active", and the reason says so.
  const down = build(null);
  assert.equal(down.devices['plugboard.example/gpu/gpu-0']!.kubeletHealth, null);
  assert.equal(down.devices['plugboard.example/gpu/gpu-0']!.faulted, false);
  assert.equal(down.faults.told!.state, 'pending');
  assert.match(down.faults.told!.stateReason!, /no ListAndWatch stream is open/);
});

const ev = (seq: number): NodeEvent => ({
  seq,
  at: T0,
  kind: 'source',
  resource: null,
  deviceIds: [],
  pod: null,
  message: `e${seq}`,
});

test('event ring diff: drop-oldest + append is remove/0 + add/-, not a replace of every element', () => {
  const prev = [ev(1), ev(2), ev(3)];
  const next = [ev(3), ev(4), ev(5)];
  const ops = diffEventRing(prev, next);
  assert.deepEqual(
    ops.map((o) => `${o.op} ${o.path}`),
    ['remove /events/0', 'remove /events/0', 'add /events/-', 'add /events/-'],
  );
  assert.deepEqual(applyPatch({ events: structuredClone(prev) }, ops as never).newDocument.events, next);
  assert.deepEqual(diffEventRing(prev, prev), []);
  assert.deepEqual(diffEventRing([], [ev(1)]).length, 1);
  // Non-ring change falls back to replace.
  assert.equal(diffEventRing([ev(1), ev(2)], [ev(1), ev(7), ev(2)])[0]!.op, 'replace');
});

test('diffDocuments round-trips arbitrary snapshot changes', () => {
  const a = buildSnapshot({ ...base, resources: [gpu(8)], events: [ev(1)] });
  const b = buildSnapshot({
    ...base,
    resources: [gpu(8, [2, 5])],
    events: [ev(1), ev(2)],
    updatedAt: '2026-01-02T00:00:00.000Z',
  });
  const ops = diffDocuments(a, b);
  assert.deepEqual(applyPatch(structuredClone(a), ops as never).newDocument, b);
  assert.ok(ops.length < 20, `small patch for two device changes, got ${ops.length} ops`);
});

test('NodeModel coalesces updates, emits nothing for unchanged input, bounds the event ring', async () => {
  let t = 0;
  const model = new NodeModel({
    nodeName: 'n',
    gateway: base.gateway,
    eventRingSize: 3,
    now: () => new Date(Date.parse(T0) + ++t),
  });
  const changes: number[] = [];
  model.on('change', (c) => changes.push(c.ops.length));
  model.setResource(gpu(2));
  model.setResource(gpu(2));
  await new Promise((r) => setImmediate(r));
  assert.equal(changes.length, 1);
  model.setResource(gpu(2));
  assert.equal(model.flush(), null);
  for (let i = 0; i < 5; i++)
    model.addEvent({ kind: 'source', resource: null, deviceIds: [], pod: null, message: `m${i}` });
  const c = model.flush()!;
  assert.deepEqual(
    model.snapshot().events.map((e) => e.message),
    ['m2', 'm3', 'm4'],
  );
  assert.ok(c.summaryOps.length === 0, 'events do not touch the summary');
  model.setResource(gpu(2, [1]));
  const c2 = model.flush()!;
  assert.ok(c2.summaryOps.some((o) => o.path.endsWith('/unhealthy')));
  assert.equal(model.summary().unhealthyDevices, 1);
  model.close();
});

test('diffAndShare: ops rebuild the new document, unchanged subtrees keep their identity (property)', async () => {
  const fc = await import('fast-check');
  const { diffAndShare } = await import('./diff.js');
  // Keys of the model's maps always contain a '/' (resource, device and pod keys) or are UUIDs or
  // numbers, so "__proto__" cannot occur; prototype-like names that can are covered.
  const json = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.integer(),
      fc.string(),
      fc.boolean(),
      fc.constant(null),
      tie('object'),
      tie('array'),
    ),
    object: fc.dictionary(
      fc.oneof(
        fc.string().filter((k) => k !== '__proto__'),
        fc.constantFrom('a/b', 'x~y', 'constructor', 'toString'),
      ),
      tie('value'),
      { maxKeys: 5, noNullPrototype: true },
    ),
    array: fc.array(tie('value'), { maxLength: 4 }),
  }));
  fc.assert(
    fc.property(json.object, json.object, (a, b) => {
      const { ops, document } = diffAndShare(a, b);
      assert.deepEqual(document, b);
      assert.deepEqual(applyPatch(structuredClone(a), ops as never).newDocument, b);
      if (ops.length === 0) assert.equal(document, a);
    }),
    { numRuns: 300 },
  );
  const prev = buildSnapshot({ ...base, resources: [gpu(4)] });
  const { document } = diffAndShare(prev, buildSnapshot({ ...base, resources: [gpu(4, [1])] }));
  assert.equal(document.devices['plugboard.example/gpu/gpu-0'], prev.devices['plugboard.example/gpu/gpu-0']);
  assert.notEqual(
    document.devices['plugboard.example/gpu/gpu-1'],
    prev.devices['plugboard.example/gpu/gpu-1'],
  );
});

test('incremental builds (cache) equal a from-scratch build after every kind of change', () => {
  const model = new NodeModel({
    nodeName: 'n1',
    gateway: base.gateway,
    eventRingSize: 50,
    sources: base.sources,
    now: () => new Date(T0),
  });
  let resources = [gpu(6)];
  let faults: ModelInputs['faults'] = [];
  let podResources: ModelInputs['podResources'] = null;
  let kube: ModelInputs['kube'] = null;
  const check = (step: string) => {
    model.flush();
    const expected = buildSnapshot({
      ...base,
      gateway: base.gateway,
      resources,
      faults,
      podResources,
      kube,
      events: model.snapshot().events,
    });
    assert.deepEqual({ ...model.snapshot(), updatedAt: T0 }, expected, step);
  };
  const pod = (name: string, ids: string[]) => ({
    name,
    namespace: 'ns',
    cpuIds: [],
    memory: [],
    containers: [
      {
        name: 'c',
        devices: [{ resourceName: 'plugboard.example/gpu', deviceIds: ids, topology: undefined }],
        cpuIds: [],
        memory: [],
        dynamicResources: [],
      },
    ],
  });
  const alloc = {
    devices: [
      {
        resourceName: 'plugboard.example/gpu',
        deviceIds: ['gpu-0', 'gpu-1', 'gpu-2', 'gpu-3', 'gpu-4', 'gpu-5'],
        topology: undefined,
      },
    ],
    cpuIds: [],
    memory: [],
  };
  model.setResource(resources[0]!);
  check('initial');
  podResources = { pods: [pod('a', ['gpu-0']), pod('b', ['gpu-4', 'gpu-5'])], allocatable: alloc };
  model.setPodResources(podResources);
  check('pods admitted');
  resources = [gpu(6, [4])];
  model.setResource(resources[0]!);
  check('device of pod b unhealthy');
  faults = [
    {
      id: 'f1',
      resource: 'plugboard.example/gpu',
      deviceId: 'gpu-1',
      reason: 'r',
      createdAt: T0,
      expiresAt: null,
      scenarioId: null,
      simulated: true,
    },
  ];
  model.setFaults(faults);
  check('fault');
  resources = [gpu(6, [4, 2])];
  model.setResource(resources[0]!);
  check('free device unhealthy');
  resources = [gpu(6, [4, 2, 0])];
  model.setResource(resources[0]!);
  check('device of pod a unhealthy');
  assert.equal(model.snapshot().pods['ns/a']!.affectedByUnhealthyDevice, true);
  resources = [gpu(6, [4])];
  model.setResource(resources[0]!);
  check('pod a healthy again');
  kube = {
    node: {
      metadata: { name: 'n1' },
      status: { capacity: { 'plugboard.example/gpu': '6' }, allocatable: { 'plugboard.example/gpu': '5' } },
    },
    pods: [{ metadata: { name: 'a', namespace: 'ns' }, status: { phase: 'Running' } }],
  };
  model.setKube(kube);
  check('kube');
  resources = [gpu(8, [4])];
  model.setResource(resources[0]!);
  check('devices added (layout change)');
  podResources = { pods: [pod('b', ['gpu-4', 'gpu-5'])], allocatable: alloc };
  model.setPodResources(podResources);
  faults = [];
  model.setFaults(faults);
  resources = [gpu(8)];
  model.setResource(resources[0]!);
  check('pod a deleted, fault cleared, healed');
  model.close();
});

test('the pods section is reused as is when only free devices change, rebuilt when a held one does', () => {
  const cache = new BuildCache();
  const podResources: ModelInputs['podResources'] = {
    pods: [
      {
        name: 'a',
        namespace: 'ns',
        cpuIds: [],
        memory: [],
        containers: [
          {
            name: 'c',
            devices: [{ resourceName: 'plugboard.example/gpu', deviceIds: ['gpu-0'], topology: undefined }],
            cpuIds: [],
            memory: [],
            dynamicResources: [],
          },
        ],
      },
    ],
    allocatable: { devices: [], cpuIds: [], memory: [] },
  };
  const build = (unhealthy: number[]) => {
    const s = buildSnapshot({ ...base, resources: [gpu(4, unhealthy)], podResources }, cache);
    cache.adopt(s);
    return s;
  };
  const first = build([]);
  const freeFault = build([3]);
  assert.equal(freeFault.pods, first.pods, 'same object: buildPods did not run');
  assert.equal(freeFault.devices['plugboard.example/gpu/gpu-3']!.health, 'Unhealthy');
  const heldFault = build([3, 0]);
  assert.notEqual(heldFault.pods, first.pods);
  assert.equal(heldFault.pods['ns/a']!.affectedByUnhealthyDevice, true);
  const healed = build([3]);
  assert.equal(healed.pods['ns/a']!.affectedByUnhealthyDevice, false);
});

test('DRA claims in the pods: affected by an unhealthy claim device, cleared on heal; a free DRA device leaves the pods alone; DRA parts in the alignment', () => {
  const DRIVER = 'gpu.example.com';
  const dkey = (i: number) => `${DRIVER}/n1/dgpu-${i}`;
  // As the driver does: a changed device is a new object, the others stay the same objects.
  const healthy = [0, 1, 2, 3].map((i) => ({
    id: `dgpu-${i}`,
    health: 'Healthy' as const,
    reason: null,
    since: T0,
    numaNodes: [i < 2 ? 0 : 1],
  }));
  const sliceDevices = healthy.map((d) => ({
    name: d.id,
    attributes: { 'resource.kubernetes.io/numaNode': { int: d.numaNodes[0]! } },
  }));
  const driver = (unhealthy: number[] = []): DraDriverInput => {
    const devices = healthy.map((d, i) =>
      unhealthy.includes(i) ? { ...d, health: 'Unhealthy' as const, reason: 'xid 79' } : d,
    );
    return {
      name: DRIVER,
      poolName: 'n1',
      devices,
      sliceDevices,
      reported: devices,
      registration: { phase: 'registered', registeredAt: T0, error: null },
      healthStreams: 1,
      publication: { generation: 1, slices: [], lastPublishedAt: T0, error: null },
    };
  };
  const claim = (name: string, device: number, pod: string) => ({
    metadata: { name, namespace: 'ns', uid: `uid-${name}` },
    spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: DRIVER } }] } },
    status: {
      allocation: {
        devices: { results: [{ request: 'gpu', driver: DRIVER, pool: 'n1', device: `dgpu-${device}` }] },
      },
      reservedFor: [{ resource: 'pods', name: pod, uid: `uid-${pod}` }],
    },
  });
  // Pod a: a device-plugin GPU on NUMA 0 and, prepared by the kubelet, claim ca's dgpu-3 on NUMA 1.
  // Pod b: claim cb's dgpu-2, allocated and reserved but not prepared (no PodResources entry).
  const kubePod = (name: string, claimName: string, claimHealth?: string) => ({
    metadata: { name, namespace: 'ns' },
    spec: { containers: [{ name: 'c' }], resourceClaims: [{ name: 'gpu', resourceClaimName: claimName }] },
    status: {
      phase: 'Running',
      containerStatuses: [
        claimHealthStatus('c', 'gpu', claimHealth ? [{ resourceID: 'cdi-ca', health: claimHealth }] : []),
      ],
    },
  });
  const podResources: ModelInputs['podResources'] = {
    pods: [
      {
        name: 'a',
        namespace: 'ns',
        containers: [
          {
            name: 'c',
            devices: [{ resourceName: 'plugboard.example/gpu', deviceIds: ['gpu-0'], topology: undefined }],
            cpuIds: [],
            memory: [],
            dynamicResources: [
              {
                claimName: 'ca',
                claimNamespace: 'ns',
                claimResources: [
                  {
                    driverName: DRIVER,
                    poolName: 'n1',
                    deviceName: 'dgpu-3',
                    cdiDevices: [{ name: 'cdi-ca' }],
                  },
                ],
              },
            ],
          },
        ],
      },
    ] as unknown as podresources.PodResources[],
    allocatable: { devices: [], cpuIds: [], memory: [] },
  };
  const dra = {
    slices: [],
    claims: [claim('ca', 3, 'a'), claim('cb', 2, 'b')],
    taintRules: [],
    notServed: {},
  };
  const resources = [gpu(4)];
  // The API server's pods as the informer keeps them: the same objects until they change.
  const podB = kubePod('b', 'cb');
  const podsA = new Map<string | undefined, ReturnType<typeof kubePod>>();
  const podA = (claimHealth?: string) => {
    if (!podsA.has(claimHealth)) podsA.set(claimHealth, kubePod('a', 'ca', claimHealth));
    return podsA.get(claimHealth)!;
  };
  const inputs = (unhealthy: number[], claimHealth?: string): ModelInputs => ({
    ...base,
    resources,
    podResources,
    draDrivers: [driver(unhealthy)],
    kube: { node: null, pods: [podA(claimHealth), podB], dra },
  });
  const cache = new BuildCache();
  const build = (unhealthy: number[], claimHealth?: string) => {
    const s = buildSnapshot(inputs(unhealthy, claimHealth), cache);
    assert.deepEqual(s, buildSnapshot(inputs(unhealthy, claimHealth)), 'the cached build equals a fresh one');
    cache.adopt(s);
    return s;
  };
  const affected = (s: NodeSnapshot) =>
    Object.fromEntries(Object.values(s.pods).map((p) => [p.name, p.affectedByUnhealthyDevice]));

  const first = build([]);
  assert.deepEqual(affected(first), { a: false, b: false });
  const a = first.pods['ns/a']!.numaAlignment;
  assert.deepEqual(
    a.parts?.map((p) => [p.kind, p.name, p.count, p.numaNodes]),
    [
      ['devices', 'plugboard.example/gpu', 1, [0]],
      ['dra-devices', DRIVER, 1, [1]],
    ],
  );
  assert.deepEqual([a.verdict, a.numaNodes], ['spread', [0, 1]]);
  assert.match(a.reason, /gpu\.example\.com ×1 \(DRA\) on 1/);
  assert.match(a.reason, /DRA devices are placed by the scheduler .*not the Topology Manager/);
  assert.equal(first.pods['ns/b']!.numaAlignment.verdict, 'no-preference', 'not prepared: no DRA part');

  const freeFault = build([0]);
  assert.equal(freeFault.dra!.devices[dkey(0)]!.health, 'Unhealthy');
  assert.equal(freeFault.pods, first.pods, 'same object: a free DRA device does not rebuild the pods');

  const heldFault = build([0, 3]);
  assert.deepEqual(affected(heldFault), { a: true, b: false });
  assert.equal(heldFault.pods['ns/b'], first.pods['ns/b'], 'pod b reused');
  assert.deepEqual(affected(build([0, 2])), { a: false, b: true }, 'by its claim alone, not prepared');
  assert.deepEqual(affected(build([])), { a: false, b: false }, 'healed');

  // What the kubelet reports for the claim counts too (e.g. it has not seen the driver heal yet).
  assert.deepEqual(affected(build([], 'Unhealthy')), { a: true, b: false });
  assert.deepEqual(affected(build([], 'Healthy')), { a: false, b: false });
});
