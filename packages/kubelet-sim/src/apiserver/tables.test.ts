// Server-side Tables: the printers' cells for each kind (fixtures shaped like what pod-status.ts,
// node-object.ts and events.ts store), includeObject, the watch header rule, Accept negotiation and
// apimachinery's HumanDuration test tables.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpError } from './http.js';
import type { KubeObject } from './object-store.js';
import { findResource, type ResourceInfo } from './resources.js';
import {
  humanDuration,
  tableColumns,
  tableRequest,
  toTable,
  toWatchTable,
  watchTableTransform,
  type TableRequest,
} from './tables.js';

const NOW = new Date('2025-06-01T12:00:00Z');
/** An RFC 3339 timestamp `ms` before NOW. */
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

function resource(group: string, name: string): ResourceInfo {
  const r = findResource(group, 'v1', name);
  assert.ok(r, `${group}/${name} is served`);
  return r;
}
const PODS = resource('', 'pods');
const NODES = resource('', 'nodes');
const EVENTS = resource('', 'events');
const NAMESPACES = resource('', 'namespaces');
const SERVICES = resource('', 'services');
const LEASES = resource('coordination.k8s.io', 'leases');
const DEVICE_TAINT_RULES = resource('resource.k8s.io', 'devicetaintrules');

const V1: TableRequest = { version: 'v1', includeObject: 'Metadata' };

interface Row {
  cells: unknown[];
  conditions?: unknown[];
  object: unknown;
}
interface Table {
  kind: string;
  apiVersion: string;
  metadata: Record<string, unknown>;
  columnDefinitions:
    { name: string; type: string; format: string; description: string; priority: number }[] | null;
  rows: Row[] | null;
}
const table = (r: ResourceInfo, objects: KubeObject[], req: TableRequest = V1) =>
  toTable(r, objects, req, { resourceVersion: '42' }, NOW) as unknown as Table;
const cells = (r: ResourceInfo, o: KubeObject) => table(r, [o]).rows?.[0]?.cells;

// --- fixtures ------------------------------------------------------------------------------

const condition = (type: string, status: boolean, reason?: string) => ({
  type,
  status: status ? 'True' : 'False',
  lastProbeTime: null,
  lastTransitionTime: ago(10 * MIN),
  ...(reason ? { reason } : {}),
});

const running = (startedAgo = 10 * MIN) => ({ running: { startedAt: ago(startedAgo) } });
const terminated = (exitCode: number, reason: string, finishedAgo: number) => ({
  terminated: {
    exitCode,
    reason,
    startedAt: ago(finishedAgo + MIN),
    finishedAt: ago(finishedAgo),
    containerID: 'sim://c1',
  },
});

function containerStatus(name: string, state: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    name,
    state,
    lastState: {},
    ready: 'running' in state,
    restartCount: 0,
    image: 'registry.k8s.io/pause:3.10',
    imageID: `registry.k8s.io/pause@sha256:${'0'.repeat(64)}`,
    started: 'running' in state,
    ...extra,
  };
}

/** A pod as renderPod (pods/pod-status.ts) stores it. */
function pod(opts: {
  name?: string;
  phase: string;
  ready?: boolean;
  initialized?: boolean;
  containers?: Record<string, unknown>[];
  initContainers?: Record<string, unknown>[];
  specInit?: Record<string, unknown>[];
  specContainers?: number;
  status?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  spec?: Record<string, unknown>;
}): KubeObject {
  const containers = opts.containers ?? [containerStatus('app', running())];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: opts.name ?? 'web-0',
      namespace: 'default',
      uid: 'c0ffee00-0000-4000-8000-000000000001',
      resourceVersion: '17',
      creationTimestamp: ago(5 * MIN),
      ...opts.metadata,
    },
    spec: {
      nodeName: 'sim-node',
      containers: Array.from({ length: opts.specContainers ?? containers.length }, (_, i) => ({
        name: i === 0 ? 'app' : `app${i}`,
        image: 'registry.k8s.io/pause:3.10',
      })),
      ...(opts.specInit ? { initContainers: opts.specInit } : {}),
      ...opts.spec,
    },
    status: {
      phase: opts.phase,
      conditions: [
        condition('PodReadyToStartContainers', true),
        condition('Initialized', opts.initialized ?? true),
        condition('Ready', opts.ready ?? true),
        condition('ContainersReady', opts.ready ?? true),
        condition('PodScheduled', true),
      ],
      hostIP: '10.0.0.5',
      hostIPs: [{ ip: '10.0.0.5' }],
      podIP: '10.244.0.7',
      podIPs: [{ ip: '10.244.0.7' }],
      startTime: ago(5 * MIN),
      ...(opts.initContainers ? { initContainerStatuses: opts.initContainers } : {}),
      containerStatuses: containers,
      qosClass: 'BestEffort',
      ...opts.status,
    },
  };
}

/** A node as renderNode (node-object.ts) stores it. */
function node(
  opts: { ready?: string | null; unschedulable?: boolean; labels?: Record<string, string> } = {},
) {
  const conditions = [
    { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory' },
    { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure' },
    { type: 'PIDPressure', status: 'False', reason: 'KubeletHasSufficientPID' },
    ...(opts.ready === null ? [] : [{ type: 'Ready', status: opts.ready ?? 'True', reason: 'KubeletReady' }]),
  ];
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: 'sim-node',
      uid: 'n1',
      resourceVersion: '3',
      creationTimestamp: ago(2 * DAY + 5 * HOUR),
      labels: { 'kubernetes.io/hostname': 'sim-node', 'kubernetes.io/os': 'linux', ...opts.labels },
    },
    spec: opts.unschedulable ? { unschedulable: true } : {},
    status: {
      conditions,
      addresses: [
        { type: 'InternalIP', address: '10.0.0.5' },
        { type: 'Hostname', address: 'sim-node' },
      ],
      nodeInfo: {
        kernelVersion: '6.8.0-45-generic',
        osImage: 'Plugboard kubelet-sim',
        containerRuntimeVersion: 'plugboard-sim://0.1.0',
        kubeletVersion: 'v1.33.0',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
    },
  } satisfies KubeObject;
}

/** An Event as EventRecorder (events.ts) stores it. */
function event(extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      name: 'web-0.18a3b1c2d3e4f5a6',
      namespace: 'default',
      uid: 'e1',
      resourceVersion: '20',
      creationTimestamp: ago(3 * MIN),
    },
    involvedObject: {
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: 'default',
      name: 'web-0',
      uid: 'p1',
      fieldPath: 'spec.containers{app}',
    },
    reason: 'BackOff',
    message: 'Back-off restarting failed container app in pod web-0_default(p1)\n',
    source: { component: 'kubelet', host: 'sim-node' },
    firstTimestamp: ago(3 * MIN),
    lastTimestamp: ago(12 * SEC),
    count: 4,
    type: 'Warning',
    eventTime: null,
    reportingComponent: 'kubelet',
    reportingInstance: 'sim-node',
    ...extra,
  };
}

function service(spec: Record<string, unknown>, status: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'default', uid: 's1', creationTimestamp: ago(90 * SEC) },
    spec,
    status: { loadBalancer: {}, ...status },
  };
}

// --- humanDuration -------------------------------------------------------------------------

describe('humanDuration matches apimachinery duration.HumanDuration', () => {
  // duration_test.go TestHumanDuration and TestHumanDurationBoundaries, in milliseconds
  // (-2s+1ns becomes -2s+1ms).
  const cases: [number, string][] = [
    [SEC, '1s'],
    [70 * SEC, '70s'],
    [190 * SEC, '3m10s'],
    [70 * MIN, '70m'],
    [47 * HOUR, '47h'],
    [49 * HOUR, '2d1h'],
    [(8 * 24 + 2) * HOUR, '8d'],
    [367 * 24 * HOUR, '367d'],
    [(365 * 2 * 24 + 25) * HOUR, '2y1d'],
    [(365 * 8 * 24 + 2) * HOUR, '8y'],
    [-2 * SEC, '<invalid>'],
    [-2 * SEC + 1, '0s'],
    [0, '0s'],
    [SEC - 1, '0s'],
    [2 * MIN - 1, '119s'],
    [2 * MIN, '2m'],
    [2 * MIN + SEC, '2m1s'],
    [10 * MIN - 1, '9m59s'],
    [10 * MIN, '10m'],
    [10 * MIN + SEC, '10m'],
    [3 * HOUR - 1, '179m'],
    [3 * HOUR, '3h'],
    [3 * HOUR + MIN, '3h1m'],
    [8 * HOUR - 1, '7h59m'],
    [8 * HOUR, '8h'],
    [8 * HOUR + 59 * MIN, '8h'],
    [2 * DAY - 1, '47h'],
    [2 * DAY, '2d'],
    [2 * DAY + HOUR, '2d1h'],
    [8 * DAY - 1, '7d23h'],
    [8 * DAY, '8d'],
    [8 * DAY + 23 * HOUR, '8d'],
    [2 * 365 * DAY - 1, '729d'],
    [2 * 365 * DAY, '2y'],
    [2 * 365 * DAY + 23 * HOUR, '2y'],
    [2 * 365 * DAY + 23 * HOUR + 59 * MIN, '2y'],
    [2 * 365 * DAY + DAY - 1, '2y'],
    [2 * 365 * DAY + DAY, '2y1d'],
    [3 * 365 * DAY, '3y'],
    [4 * 365 * DAY, '4y'],
    [5 * 365 * DAY, '5y'],
    [6 * 365 * DAY, '6y'],
    [7 * 365 * DAY, '7y'],
    [8 * 365 * DAY - 1, '7y364d'],
    [8 * 365 * DAY, '8y'],
    [8 * 365 * DAY + 364 * DAY, '8y'],
    [9 * 365 * DAY, '9y'],
  ];
  for (const [ms, want] of cases) {
    test(`${ms}ms → ${want}`, () => assert.equal(humanDuration(ms), want));
  }
});

// --- tableRequest --------------------------------------------------------------------------

describe('tableRequest negotiates like kube-apiserver', () => {
  const KUBECTL =
    'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
  const none = new URLSearchParams();

  test("kubectl's Accept gets a v1 Table with metadata", () => {
    assert.deepEqual(tableRequest(KUBECTL, none), { version: 'v1', includeObject: 'Metadata' });
  });

  test('the first acceptable clause wins: v1beta1 first, plain JSON first', () => {
    assert.deepEqual(
      tableRequest('application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json', none),
      { version: 'v1beta1', includeObject: 'Metadata' },
    );
    assert.equal(tableRequest('application/json, application/json;as=Table;v=v1;g=meta.k8s.io', none), null);
  });

  test('plain JSON, protobuf, a missing or empty header ask for no Table', () => {
    assert.equal(tableRequest('application/json', none), null);
    assert.equal(tableRequest('application/vnd.kubernetes.protobuf, application/json', none), null);
    assert.equal(tableRequest(undefined, none), null);
    assert.equal(tableRequest('', none), null);
  });

  test('q values order clauses (goautoneg), equal q keeps the header order', () => {
    assert.deepEqual(
      tableRequest('application/json;q=0.5, application/json;as=Table;v=v1;g=meta.k8s.io;q=0.9', none),
      { version: 'v1', includeObject: 'Metadata' },
    );
    assert.deepEqual(
      tableRequest('application/json;as=Table;v=v1;g=meta.k8s.io;q=0.9, application/json;q=0.9', none),
      { version: 'v1', includeObject: 'Metadata' },
    );
    assert.equal(tableRequest('application/json;as=Table;v=v1;g=meta.k8s.io;q=0.1,*/*', none), null);
  });

  test('clauses the server cannot honour are skipped, wildcards match JSON', () => {
    // A Table only in JSON or YAML, only meta.k8s.io v1/v1beta1.
    assert.equal(tableRequest('application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io', none), null);
    assert.deepEqual(
      tableRequest(
        'application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v2;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io',
        none,
      ),
      { version: 'v1beta1', includeObject: 'Metadata' },
    );
    assert.deepEqual(tableRequest('*/*;as=Table;v=v1;g=meta.k8s.io', none)?.version, 'v1');
    assert.deepEqual(
      tableRequest('application/json; as=Table; v=v1; g=meta.k8s.io; stream=watch', none)?.version,
      'v1',
    );
    assert.equal(
      tableRequest('application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io', none),
      null,
    );
  });

  test('includeObject: None, Object, Metadata, empty; anything else is a 400', () => {
    const p = (v: string) => new URLSearchParams({ includeObject: v });
    assert.equal(tableRequest(KUBECTL, p('None'))?.includeObject, 'None');
    assert.equal(tableRequest(KUBECTL, p('Object'))?.includeObject, 'Object');
    assert.equal(tableRequest(KUBECTL, p('Metadata'))?.includeObject, 'Metadata');
    assert.equal(tableRequest(KUBECTL, p(''))?.includeObject, 'Metadata');
    assert.equal(tableRequest('application/json', p('bogus')), null, 'only checked for a Table');
    assert.throws(
      () => tableRequest(KUBECTL, p('object')),
      (err: unknown) =>
        err instanceof HttpError &&
        err.status === 400 &&
        err.reason === 'BadRequest' &&
        err.message ===
          `Unable to convert to Table as requested: includeObject: Invalid value: "object": must be 'Metadata', 'Object', 'None', or empty`,
    );
  });
});

// --- the Table envelope and includeObject ----------------------------------------------------

describe('the Table', () => {
  test('envelope: kind, apiVersion, list metadata, all columns, one row per item', () => {
    const t = toTable(PODS, [pod({ phase: 'Running' })], V1, { resourceVersion: '99', continue: 'abc' }, NOW);
    assert.equal(t['kind'], 'Table');
    assert.equal(t['apiVersion'], 'meta.k8s.io/v1');
    assert.deepEqual(t['metadata'], { resourceVersion: '99', continue: 'abc' });
    assert.deepEqual(Object.keys(t), ['kind', 'apiVersion', 'metadata', 'columnDefinitions', 'rows']);
    assert.equal((t['rows'] as unknown[]).length, 1);
    const v1beta1 = table(PODS, [], { version: 'v1beta1', includeObject: 'Metadata' });
    assert.equal(v1beta1.apiVersion, 'meta.k8s.io/v1beta1');
    assert.deepEqual(v1beta1.rows, [], 'printers start from an empty slice');
  });

  test('includeObject Metadata (the default): PartialObjectMetadata in the Table version', () => {
    const p = pod({ phase: 'Running' });
    assert.deepEqual(table(PODS, [p]).rows?.[0]?.object, {
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: p.metadata,
    });
    const beta = table(PODS, [p], { version: 'v1beta1', includeObject: 'Metadata' });
    assert.equal((beta.rows?.[0]?.object as { apiVersion: string }).apiVersion, 'meta.k8s.io/v1beta1');
  });

  test('includeObject Object: the full object, kind and apiVersion restored on list items', () => {
    const { kind: _k, apiVersion: _a, ...item } = pod({ phase: 'Running' });
    const object = table(PODS, [item as KubeObject], { version: 'v1', includeObject: 'Object' }).rows?.[0]
      ?.object as Record<string, unknown>;
    assert.deepEqual(object, { kind: 'Pod', apiVersion: 'v1', ...item });
    assert.deepEqual(Object.keys(object).slice(0, 2), ['kind', 'apiVersion']);
    const lease = table(
      LEASES,
      [{ metadata: { name: 'l', uid: 'u', creationTimestamp: ago(SEC) } } as KubeObject],
      {
        version: 'v1',
        includeObject: 'Object',
      },
    ).rows?.[0]?.object as Record<string, unknown>;
    assert.equal(lease['apiVersion'], 'coordination.k8s.io/v1');
  });

  test('includeObject None: the row object is null (a nil RawExtension)', () => {
    const row = table(PODS, [pod({ phase: 'Running' })], { version: 'v1', includeObject: 'None' }).rows?.[0];
    assert.ok(row && 'object' in row);
    assert.equal(row.object, null);
  });

  test('the bookmark ending initial events keeps its metadata even with None', () => {
    const bookmark = {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { resourceVersion: '50', annotations: { 'k8s.io/initial-events-end': 'true' } },
    } as unknown as KubeObject;
    const t = toWatchTable(PODS, bookmark, { version: 'v1', includeObject: 'None' }, NOW) as unknown as Table;
    assert.deepEqual(t.rows?.[0]?.object, {
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: bookmark.metadata,
    });
    assert.deepEqual(t.metadata, { resourceVersion: '50' });
  });

  test('wide columns have priority 1, the others 0', () => {
    const priorities = (r: ResourceInfo) =>
      Object.fromEntries(tableColumns(r).map((c) => [c.name, c.priority] as const));
    assert.deepEqual(priorities(PODS), {
      Name: 0,
      Ready: 0,
      Status: 0,
      Restarts: 0,
      Age: 0,
      IP: 1,
      Node: 1,
      'Nominated Node': 1,
      'Readiness Gates': 1,
    });
    assert.deepEqual(priorities(NODES), {
      Name: 0,
      Status: 0,
      Roles: 0,
      Age: 0,
      Version: 0,
      'Internal-IP': 1,
      'External-IP': 1,
      'OS-Image': 1,
      'Kernel-Version': 1,
      'Container-Runtime': 1,
    });
    assert.deepEqual(
      tableColumns(EVENTS).map((c) => [c.name, c.priority]),
      [
        ['Last Seen', 0],
        ['Type', 0],
        ['Reason', 0],
        ['Object', 0],
        ['Subobject', 1],
        ['Source', 1],
        ['Message', 0],
        ['First Seen', 1],
        ['Count', 1],
        ['Name', 1],
      ],
    );
    assert.deepEqual(
      tableColumns(SERVICES).map((c) => [c.name, c.priority]),
      [
        ['Name', 0],
        ['Type', 0],
        ['Cluster-IP', 0],
        ['External-IP', 0],
        ['Port(s)', 0],
        ['Age', 0],
        ['Selector', 1],
      ],
    );
    assert.deepEqual(
      tableColumns(NAMESPACES).map((c) => c.name),
      ['Name', 'Status', 'Age'],
    );
    assert.deepEqual(
      tableColumns(LEASES).map((c) => c.name),
      ['Name', 'Holder', 'Age'],
    );
  });

  test('column definitions carry type, format and the API docs as upstream', () => {
    const [name, ready, , restarts, age] = tableColumns(PODS);
    assert.deepEqual(
      { ...name, description: name?.description.slice(0, 40) },
      {
        name: 'Name',
        type: 'string',
        format: 'name',
        description: 'Name must be unique within a namespace. ',
        priority: 0,
      },
    );
    assert.equal(ready?.description, 'The aggregate readiness state of this pod for accepting traffic.');
    assert.equal(restarts?.type, 'string');
    assert.ok(age?.description.startsWith('CreationTimestamp is a timestamp'));
    assert.equal(tableColumns(EVENTS).at(-1)?.format, 'name');
    assert.equal(tableColumns(LEASES)[1]?.description.startsWith('holderIdentity contains'), true);
  });

  test('kinds without a printer get the default convertor: NAME, CREATED AT', () => {
    const other: ResourceInfo = { ...NAMESPACES, group: 'example.dev', resource: 'widgets', kind: 'Widget' };
    assert.deepEqual(
      tableColumns(other).map((c) => [c.name, c.type, c.format]),
      [
        ['Name', 'string', 'name'],
        ['Created At', 'date', ''],
      ],
    );
    const w = { kind: 'Widget', apiVersion: 'example.dev/v1', metadata: { name: 'w1', uid: 'u' } };
    const t = table(other, [
      { ...w, metadata: { ...w.metadata, creationTimestamp: '2025-05-31T10:00:00+02:00' } },
      { ...w, metadata: { ...w.metadata, name: 'w2', creationTimestamp: '' } },
    ]);
    assert.deepEqual(
      t.rows?.map((r) => r.cells),
      [
        ['w1', '2025-05-31T08:00:00Z'],
        ['w2', '0001-01-01T00:00:00Z'],
      ],
    );
    assert.equal(table(other, []).rows, null, 'its rows stay a nil slice for an empty list');
  });
});

// --- pods ----------------------------------------------------------------------------------

describe('pods print like kube-apiserver', () => {
  test('Running: all wide cells', () => {
    assert.deepEqual(cells(PODS, pod({ phase: 'Running' })), [
      'web-0',
      '1/1',
      'Running',
      '0',
      '5m',
      '10.244.0.7',
      'sim-node',
      '<none>',
      '<none>',
    ]);
  });

  test('Pending with ContainerCreating; no IP yet', () => {
    const p = pod({
      phase: 'Pending',
      ready: false,
      containers: [containerStatus('app', { waiting: { reason: 'ContainerCreating' } })],
      status: { podIP: undefined, podIPs: undefined },
    });
    assert.deepEqual(cells(PODS, p)?.slice(0, 6), ['web-0', '0/1', 'ContainerCreating', '0', '5m', '<none>']);
    const bare = pod({ phase: 'Pending', ready: false, containers: [], specContainers: 1 });
    assert.deepEqual(cells(PODS, bare)?.slice(1, 3), ['0/1', 'Pending']);
  });

  test('CrashLoopBackOff: the waiting reason, restarts with the last restart', () => {
    const p = pod({
      phase: 'Running',
      ready: false,
      containers: [
        containerStatus(
          'app',
          { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' } },
          { restartCount: 3, lastState: terminated(1, 'Error', 12 * SEC) },
        ),
      ],
    });
    assert.deepEqual(cells(PODS, p)?.slice(1, 4), ['0/1', 'CrashLoopBackOff', '3 (12s ago)']);
  });

  test('restarts: the latest finishedAt of all containers; no date, no suffix', () => {
    const p = pod({
      phase: 'Running',
      containers: [
        containerStatus('app', running(), {
          restartCount: 2,
          lastState: terminated(137, 'OOMKilled', 3 * HOUR),
        }),
        containerStatus('side', running(), { restartCount: 1, lastState: terminated(1, 'Error', 190 * SEC) }),
      ],
    });
    assert.deepEqual(cells(PODS, p)?.slice(1, 4), ['2/2', 'Running', '3 (3m10s ago)']);
    const noDate = pod({
      phase: 'Running',
      containers: [containerStatus('app', running(), { restartCount: 2 })],
    });
    assert.equal(cells(PODS, noDate)?.[3], '2');
  });

  test('Succeeded: Completed, with the row condition', () => {
    const p = pod({
      phase: 'Succeeded',
      ready: false,
      containers: [containerStatus('app', terminated(0, 'Completed', MIN))],
    });
    const row = table(PODS, [p]).rows?.[0];
    assert.deepEqual(row?.cells.slice(1, 4), ['0/1', 'Completed', '0']);
    assert.deepEqual(row?.conditions, [
      {
        type: 'Completed',
        status: 'True',
        reason: 'Succeeded',
        message: 'The pod has completed successfully.',
      },
    ]);
    assert.equal(table(PODS, [pod({ phase: 'Running' })]).rows?.[0]?.conditions, undefined);
  });

  test('Failed: the terminated reason (Error), ExitCode / Signal without one', () => {
    const failed = (state: Record<string, unknown>) =>
      pod({ phase: 'Failed', ready: false, containers: [containerStatus('app', state)] });
    const row = table(PODS, [failed(terminated(2, 'Error', MIN))]).rows?.[0];
    assert.equal(row?.cells[2], 'Error');
    assert.deepEqual(row?.conditions, [
      { type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' },
    ]);
    assert.equal(cells(PODS, failed({ terminated: { exitCode: 3 } }))?.[2], 'ExitCode:3');
    assert.equal(cells(PODS, failed({ terminated: { exitCode: 137, signal: 9 } }))?.[2], 'Signal:9');
  });

  test('a completed container beside a running one: Running, or NotReady without Ready', () => {
    const containers = [
      containerStatus('app', running()),
      containerStatus('job', terminated(0, 'Completed', MIN)),
    ];
    assert.equal(cells(PODS, pod({ phase: 'Running', containers }))?.[2], 'Running');
    assert.equal(cells(PODS, pod({ phase: 'Running', ready: false, containers }))?.[2], 'NotReady');
  });

  test('rejected at admission: Failed with status.reason, no containers started', () => {
    const p = pod({
      phase: 'Failed',
      ready: false,
      containers: [],
      specContainers: 1,
      status: {
        reason: 'UnexpectedAdmissionError',
        message:
          'Allocate failed due to no healthy devices present; cannot allocate unhealthy devices example.com/gpu',
        conditions: undefined,
        podIP: undefined,
        podIPs: undefined,
      },
    });
    assert.deepEqual(cells(PODS, p)?.slice(0, 6), [
      'web-0',
      '0/1',
      'UnexpectedAdmissionError',
      '0',
      '5m',
      '<none>',
    ]);
  });

  test('init containers: Init:x/y, Init:<waiting reason>, Init:<terminated reason>, ExitCode', () => {
    const specInit = [
      { name: 'init-a', image: 'busybox' },
      { name: 'init-b', image: 'busybox' },
    ];
    const initPod = (initContainers: Record<string, unknown>[], restarts = 0) =>
      pod({
        phase: 'Pending',
        ready: false,
        initialized: false,
        specInit,
        initContainers,
        containers: [
          containerStatus('app', { waiting: { reason: 'PodInitializing' } }, { restartCount: restarts }),
        ],
      });
    const waitingInit = (reason: string) => containerStatus('init-a', { waiting: { reason } });
    assert.equal(cells(PODS, initPod([waitingInit('PodInitializing')]))?.[2], 'Init:0/2');
    assert.equal(
      cells(
        PODS,
        initPod([
          containerStatus('init-a', terminated(0, 'Completed', MIN)),
          containerStatus('init-b', running()),
        ]),
      )?.[2],
      'Init:1/2',
    );
    const crashing = initPod([
      containerStatus(
        'init-a',
        { waiting: { reason: 'CrashLoopBackOff' } },
        { restartCount: 4, lastState: terminated(1, 'Error', 30 * SEC) },
      ),
    ]);
    assert.deepEqual(cells(PODS, crashing)?.slice(1, 4), ['0/1', 'Init:CrashLoopBackOff', '4 (30s ago)']);
    assert.equal(
      cells(PODS, initPod([containerStatus('init-a', terminated(1, 'Error', MIN))]))?.[2],
      'Init:Error',
    );
    assert.equal(
      cells(PODS, initPod([containerStatus('init-a', { terminated: { exitCode: 2 } })]))?.[2],
      'Init:ExitCode:2',
    );
    assert.equal(
      cells(PODS, initPod([containerStatus('init-a', { terminated: { exitCode: 1, signal: 15 } })]))?.[2],
      'Init:Signal:15',
    );
  });

  test('a started sidecar counts in READY and lets the pod run', () => {
    const p = pod({
      phase: 'Running',
      specInit: [{ name: 'proxy', image: 'envoy', restartPolicy: 'Always' }],
      initContainers: [
        containerStatus('proxy', running(), {
          restartCount: 1,
          lastState: terminated(1, 'Error', 2 * MIN),
        }),
      ],
      containers: [
        containerStatus('app', running(), { restartCount: 1, lastState: terminated(1, 'Error', 5 * SEC) }),
      ],
    });
    assert.deepEqual(cells(PODS, p)?.slice(1, 4), ['2/2', 'Running', '2 (5s ago)']);
  });

  test('Terminating while deleting, unless terminal; Unknown when the node is lost', () => {
    const deleting = { deletionTimestamp: ago(2 * SEC), deletionGracePeriodSeconds: 30 };
    assert.equal(cells(PODS, pod({ phase: 'Running', metadata: deleting }))?.[2], 'Terminating');
    const done = pod({
      phase: 'Succeeded',
      ready: false,
      metadata: deleting,
      containers: [containerStatus('app', terminated(0, 'Completed', MIN))],
    });
    assert.equal(cells(PODS, done)?.[2], 'Completed');
    const lost = pod({ phase: 'Running', metadata: deleting, status: { reason: 'NodeLost' } });
    assert.equal(cells(PODS, lost)?.[2], 'Unknown');
  });

  test('SchedulingGated, nominated node and readiness gates', () => {
    const gated = pod({
      phase: 'Pending',
      containers: [],
      specContainers: 1,
      status: {
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }],
        podIP: undefined,
        podIPs: undefined,
        nominatedNodeName: 'other-node',
      },
      spec: { nodeName: undefined },
    });
    assert.deepEqual(cells(PODS, gated)?.slice(2), [
      'SchedulingGated',
      '0',
      '5m',
      '<none>',
      '<none>',
      'other-node',
      '<none>',
    ]);
    const gates = pod({
      phase: 'Running',
      spec: { readinessGates: [{ conditionType: 'example.com/lb' }, { conditionType: 'example.com/dns' }] },
      status: { conditions: [condition('Ready', true), { type: 'example.com/lb', status: 'True' }] },
    });
    assert.equal(cells(PODS, gates)?.[8], '1/2');
  });

  test('AGE is <unknown> without a creationTimestamp', () => {
    assert.equal(
      cells(PODS, pod({ phase: 'Running', metadata: { creationTimestamp: '' } }))?.[4],
      '<unknown>',
    );
  });
});

// --- nodes, events, namespaces, services, leases ---------------------------------------------

describe('nodes print like kube-apiserver', () => {
  test('Ready, with the wide cells', () => {
    assert.deepEqual(cells(NODES, node()), [
      'sim-node',
      'Ready',
      '<none>',
      '2d5h',
      'v1.33.0',
      '10.0.0.5',
      '<none>',
      'Plugboard kubelet-sim',
      '6.8.0-45-generic',
      'plugboard-sim://0.1.0',
    ]);
  });

  test('STATUS from the Ready condition and unschedulable', () => {
    assert.equal(cells(NODES, node({ unschedulable: true }))?.[1], 'Ready,SchedulingDisabled');
    assert.equal(cells(NODES, node({ ready: 'False' }))?.[1], 'NotReady');
    assert.equal(cells(NODES, node({ ready: 'Unknown' }))?.[1], 'NotReady');
    assert.equal(cells(NODES, node({ ready: null }))?.[1], 'Unknown');
    assert.equal(cells(NODES, node({ ready: null, unschedulable: true }))?.[1], 'Unknown,SchedulingDisabled');
  });

  test('ROLES from node-role.kubernetes.io/* and kubernetes.io/role, sorted', () => {
    const labels = {
      'node-role.kubernetes.io/worker': '',
      'node-role.kubernetes.io/control-plane': '',
      'node-role.kubernetes.io/': '',
      'kubernetes.io/role': 'gpu',
    };
    assert.equal(cells(NODES, node({ labels }))?.[2], 'control-plane,gpu,worker');
  });

  test('missing nodeInfo fields print <unknown>, an ExternalIP is shown', () => {
    const n = node();
    n.status.nodeInfo = { ...n.status.nodeInfo, osImage: '', kernelVersion: '', containerRuntimeVersion: '' };
    n.status.addresses.push({ type: 'ExternalIP', address: '203.0.113.9' });
    assert.deepEqual(cells(NODES, n)?.slice(5), [
      '10.0.0.5',
      '203.0.113.9',
      '<unknown>',
      '<unknown>',
      '<unknown>',
    ]);
  });
});

describe('events print like kube-apiserver', () => {
  test('the server prints wide: LAST SEEN … NAME, message trimmed, count a number', () => {
    assert.deepEqual(cells(EVENTS, event()), [
      '12s',
      'Warning',
      'BackOff',
      'pod/web-0',
      'spec.containers{app}',
      'kubelet, sim-node',
      'Back-off restarting failed container app in pod web-0_default(p1)',
      '3m',
      4,
      'web-0.18a3b1c2d3e4f5a6',
    ]);
  });

  test('events.k8s.io-style events: eventTime, series, reporting controller', () => {
    // 59.877s ago: HumanDuration truncates.
    const e = event({
      firstTimestamp: null,
      lastTimestamp: null,
      count: 0,
      eventTime: '2025-06-01T11:59:00.123456Z',
      source: {},
      reportingComponent: 'example.com/controller',
      reportingInstance: '',
      involvedObject: { kind: 'Node', name: '' },
    });
    assert.deepEqual(cells(EVENTS, e)?.slice(0, 9), [
      '59s',
      'Warning',
      'BackOff',
      'node',
      '',
      'example.com/controller',
      'Back-off restarting failed container app in pod web-0_default(p1)',
      '59s',
      1,
    ]);
    const series = event({ series: { count: 7, lastObservedTime: '2025-06-01T11:59:58.000000Z' } });
    assert.deepEqual([cells(EVENTS, series)?.[0], cells(EVENTS, series)?.[8]], ['2s', 7]);
    const neverSeen = event({ firstTimestamp: null, lastTimestamp: null, eventTime: null });
    assert.deepEqual(
      [cells(EVENTS, neverSeen)?.[0], cells(EVENTS, neverSeen)?.[7]],
      ['<unknown>', '<unknown>'],
    );
  });
});

describe('namespaces, services and leases print like kube-apiserver', () => {
  test('namespaces: NAME, STATUS, AGE', () => {
    const ns: KubeObject = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'kube-system', uid: 'ns1', creationTimestamp: ago(400 * DAY) },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    };
    assert.deepEqual(cells(NAMESPACES, ns), ['kube-system', 'Active', '400d']);
    const terminating = { ...ns, status: { phase: 'Terminating' } };
    assert.equal(cells(NAMESPACES, terminating)?.[1], 'Terminating');
  });

  test('services: ClusterIP with selector, NodePort, headless, LoadBalancer, ExternalName', () => {
    const clusterIP = service({
      type: 'ClusterIP',
      clusterIP: '10.96.0.10',
      clusterIPs: ['10.96.0.10'],
      selector: { app: 'web', tier: 'front' },
      ports: [
        { name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 },
        { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
      ],
    });
    assert.deepEqual(cells(SERVICES, clusterIP), [
      'web',
      'ClusterIP',
      '10.96.0.10',
      '<none>',
      '80/TCP,53/UDP',
      '90s',
      'app=web,tier=front',
    ]);
    const nodePort = service({
      type: 'NodePort',
      clusterIP: '10.96.0.11',
      externalIPs: ['192.0.2.1', '192.0.2.2'],
      ports: [{ port: 443, nodePort: 30443, protocol: 'TCP' }],
    });
    assert.deepEqual(cells(SERVICES, nodePort)?.slice(1, 5), [
      'NodePort',
      '10.96.0.11',
      '192.0.2.1,192.0.2.2',
      '443:30443/TCP',
    ]);
    const headless = service({ type: 'ClusterIP', clusterIP: 'None', clusterIPs: ['None'] });
    assert.deepEqual(cells(SERVICES, headless)?.slice(2, 5).concat(cells(SERVICES, headless)?.[6]), [
      'None',
      '<none>',
      '<none>',
      '<none>',
    ]);
    const pending = service({
      type: 'LoadBalancer',
      clusterIP: '10.96.0.12',
      ports: [{ port: 80, nodePort: 31000, protocol: 'TCP' }],
    });
    assert.equal(cells(SERVICES, pending)?.[3], '<pending>');
    const lb = service(
      { type: 'LoadBalancer', clusterIP: '10.96.0.12', externalIPs: ['192.0.2.9'] },
      {
        loadBalancer: {
          ingress: [
            { ip: '203.0.113.20' },
            { hostname: 'a-very-long-lb-name.example.com' },
            { ip: '203.0.113.3' },
          ],
        },
      },
    );
    assert.equal(
      cells(SERVICES, lb)?.[3],
      '203.0.113.20,203.0.113.3,a-very-long-lb-name.example.com,192.0.2.9',
    );
    const external = service({ type: 'ExternalName', externalName: 'db.example.com' });
    assert.deepEqual(cells(SERVICES, external)?.slice(1, 4), ['ExternalName', '<none>', 'db.example.com']);
  });

  test('leases: NAME, HOLDER, AGE', () => {
    const lease: KubeObject = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: 'sim-node',
        namespace: 'kube-node-lease',
        uid: 'l1',
        creationTimestamp: ago(2 * DAY),
      },
      spec: { holderIdentity: 'sim-node', leaseDurationSeconds: 40, renewTime: ago(3 * SEC) },
    };
    assert.deepEqual(cells(LEASES, lease), ['sim-node', 'sim-node', '2d']);
    assert.deepEqual(cells(LEASES, { ...lease, spec: {} }), ['sim-node', '', '2d']);
  });
});

describe('resource.k8s.io kinds print like kube-apiserver', () => {
  test('devicetaintrules: NAME, KEY, VALUE, EFFECT, TIMEADDED, AGE (printDeviceTaint)', () => {
    assert.deepEqual(
      tableColumns(DEVICE_TAINT_RULES).map((c) => [c.name, c.priority]),
      [
        ['Name', 0],
        ['Key', 0],
        ['Value', 0],
        ['Effect', 0],
        ['TimeAdded', 0],
        ['Age', 0],
      ],
    );
    const rule: KubeObject = {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'DeviceTaintRule',
      metadata: { name: 'gpu-maintenance', uid: 'r1', creationTimestamp: ago(3 * HOUR) },
      spec: {
        deviceSelector: { driver: 'gpu.example.com' },
        taint: {
          key: 'example.com/maintenance',
          value: 'planned',
          effect: 'NoExecute',
          timeAdded: ago(5 * MIN),
        },
      },
    };
    assert.deepEqual(cells(DEVICE_TAINT_RULES, rule), [
      'gpu-maintenance',
      'example.com/maintenance',
      'planned',
      'NoExecute',
      '5m',
      '3h',
    ]);
    // No timeAdded (a taint the API server has not defaulted) prints empty, not <unknown>.
    assert.deepEqual(cells(DEVICE_TAINT_RULES, { ...rule, spec: { taint: { key: 'k', effect: 'None' } } }), [
      'gpu-maintenance',
      'k',
      '',
      'None',
      '',
      '3h',
    ]);
  });
});

// --- watch -------------------------------------------------------------------------------

describe('watch events as Tables', () => {
  test('one row per event, the object’s resourceVersion, headers on the first event only', () => {
    const transform = watchTableTransform(PODS, V1);
    const first = transform(pod({ phase: 'Pending', ready: false }), NOW) as Table;
    const second = transform(pod({ phase: 'Running' }), NOW) as Table;
    assert.equal(first.kind, 'Table');
    assert.deepEqual(first.metadata, { resourceVersion: '17' });
    assert.deepEqual(
      first.columnDefinitions?.map((c) => c.name),
      tableColumns(PODS).map((c) => c.name),
    );
    assert.equal(first.rows?.length, 1);
    assert.equal(second.columnDefinitions, null);
    assert.deepEqual(second.rows?.[0]?.cells.slice(0, 3), ['web-0', '1/1', 'Running']);
  });

  test('a Status (ERROR event) passes unchanged and uses up the header', () => {
    const transform = watchTableTransform(NODES, V1);
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      code: 410,
      reason: 'Expired',
    };
    assert.equal(transform(status, NOW), status);
    assert.equal((transform(node(), NOW) as Table).columnDefinitions, null);
  });

  test('toWatchTable includes the header unless told otherwise', () => {
    assert.equal((toWatchTable(NODES, node(), V1, NOW) as unknown as Table).columnDefinitions?.length, 10);
    assert.equal(
      (toWatchTable(NODES, node(), V1, NOW, { headers: false }) as unknown as Table).columnDefinitions,
      null,
    );
  });
});
