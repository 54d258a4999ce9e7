// Table-driven unit tests of the small rules: quantities, extended resource names, selectors,
// the PodResources token bucket, back-off formatting and the object store's watch history.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseInteger, parseMilliCpu, parseQuantity } from '../util/quantity.js';
import { isExtendedResourceName } from '../util/resource-names.js';
import { parseFieldSelector, parseLabelSelector, SelectorError } from '../apiserver/selectors.js';
import { TokenBucket } from '../apis/podresources/server.js';
import { formatDuration } from '../pods/pod-manager.js';
import {
  ObjectStore,
  ResourceVersionClock,
  type KubeObject,
  type WatchEvent,
} from '../apiserver/object-store.js';
import { buildNodeShape, formatCpuList, parseCpuList } from './node-shape.js';
import { parseCliConfig } from '../config.js';

test('quantities', () => {
  const cases: [string, number | undefined][] = [
    ['1', 1],
    ['1.5', 1.5],
    ['500m', 0.5],
    ['1Ki', 1024],
    ['16Gi', 16 * 2 ** 30],
    ['1G', 1e9],
    ['2e3', 2000],
    ['abc', undefined],
    ['1 Gi', undefined],
  ];
  for (const [input, want] of cases) assert.equal(parseQuantity(input), want, input);
  assert.equal(parseMilliCpu('250m'), 250);
  assert.equal(parseMilliCpu('2'), 2000);
  assert.equal(parseMilliCpu('0.1'), 100);
  assert.equal(parseInteger('3'), 3);
  assert.equal(parseInteger('500m'), undefined);
});

test('extended resource names follow IsExtendedResourceName', () => {
  const cases: [string, boolean][] = [
    ['example.com/gpu', true],
    ['nvidia.com/gpu', true],
    ['vendor.io/dev_1.x', true],
    ['gpu', false],
    ['cpu', false],
    ['kubernetes.io/gpu', false],
    ['foo.kubernetes.io/gpu', false],
    ['requests.example.com/gpu', false],
    ['Example.com/gpu', false],
    ['example.com/-gpu', false],
    ['example.com/gpu/x', false],
    [`example.com/${'a'.repeat(64)}`, false],
  ];
  for (const [name, want] of cases) assert.equal(isExtendedResourceName(name), want, name);
});

const obj = (
  name: string,
  labels: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', uid: name, creationTimestamp: '', labels },
  ...extra,
});

test('label selectors', () => {
  const o = obj('a', { app: 'web', tier: 'front' });
  const cases: [string, boolean][] = [
    ['app=web', true],
    ['app==web', true],
    ['app!=web', false],
    ['app in (web,api)', true],
    ['app notin (web)', false],
    ['tier', true],
    ['!tier', false],
    ['app=web,tier=back', false],
    ['', true],
  ];
  for (const [sel, want] of cases) assert.equal(parseLabelSelector(sel)(o), want, sel);
  assert.throws(() => parseLabelSelector('app=(x'), SelectorError);
});

test("field selectors know each kind's field labels", () => {
  const p = obj('p', {}, { spec: { nodeName: 'n1' }, status: { phase: 'Running' } });
  assert.equal(parseFieldSelector('spec.nodeName=n1', 'Pod')(p), true);
  assert.equal(parseFieldSelector('spec.nodeName=n2', 'Pod')(p), false);
  assert.equal(parseFieldSelector('status.phase!=Failed,metadata.name=p', 'Pod')(p), true);
  assert.throws(() => parseFieldSelector('spec.bogus=1', 'Pod'), /field label not supported: spec.bogus/);
  assert.throws(() => parseFieldSelector('spec.nodeName=n1', 'Node'), /field label not supported/);
});

test('the token bucket allows the burst, then refills at qps', () => {
  let now = 0;
  const bucket = new TokenBucket({ qps: 100, burst: 10 }, () => now);
  const first = Array.from({ length: 12 }, () => bucket.allow());
  assert.deepEqual(first.filter(Boolean).length, 10);
  now += 50; // 5 tokens at 100/s
  assert.equal(Array.from({ length: 8 }, () => bucket.allow()).filter(Boolean).length, 5);
  now += 10_000;
  assert.equal(
    Array.from({ length: 20 }, () => bucket.allow()).filter(Boolean).length,
    10,
    'never more than the burst',
  );
});

test('back-off durations print like Go', () => {
  assert.equal(formatDuration(10_000), '10s');
  assert.equal(formatDuration(80_000), '1m20s');
  assert.equal(formatDuration(300_000), '5m0s');
  assert.equal(formatDuration(250), '250ms');
});

test('node shape splits CPUs across NUMA nodes, SMT siblings within a node', () => {
  const odd = buildNodeShape({ cpus: 5, numaNodes: 2, memoryPerNumaBytes: 10 });
  assert.deepEqual(odd.numaNodes, [
    { id: 0, cpus: [0, 1, 2], memoryBytes: 10, hugepages: {} },
    { id: 1, cpus: [3, 4], memoryBytes: 10, hugepages: {} },
  ]);
  assert.equal(odd.threadsPerCore, 1, 'an odd CPU count on a node means no SMT by default');
  const smt = buildNodeShape({
    cpus: 8,
    numaNodes: 2,
    hugepagesPerNumaBytes: { 'hugepages-2Mi': 2 ** 30, 'hugepages-1Gi': 0 },
  });
  assert.equal(smt.threadsPerCore, 2);
  assert.deepEqual(
    smt.cpus.map((c) => [c.id, c.coreId, c.numaNode, c.siblings]),
    [
      [0, 0, 0, [0, 1]],
      [1, 0, 0, [0, 1]],
      [2, 1, 0, [2, 3]],
      [3, 1, 0, [2, 3]],
      [4, 2, 1, [4, 5]],
      [5, 2, 1, [4, 5]],
      [6, 3, 1, [6, 7]],
      [7, 3, 1, [6, 7]],
    ],
  );
  assert.deepEqual(smt.numaNodes[1]!.hugepages, { 'hugepages-2Mi': 2 ** 30 });
  assert.equal(buildNodeShape({ cpus: 8, threadsPerCore: 4 }).cpus[5]!.siblings.join(','), '4,5,6,7');
  const bad: [Parameters<typeof buildNodeShape>[0], RegExp][] = [
    [{ cpus: 1, numaNodes: 2 }, /cpus: must be an integer of at least numaNodes/],
    [{ cpus: 6, numaNodes: 2, threadsPerCore: 2 }, /threadsPerCore: must be a positive integer dividing/],
    [
      { hugepagesPerNumaBytes: { 'hugepages-1Gi': 2 ** 20 } },
      /hugepagesPerNumaBytes.hugepages-1Gi: must be a multiple/,
    ],
    [{ cpus: 64, numaNodes: 17 }, /numaNodes: must be an integer from 1 to 16/],
  ];
  for (const [opts, message] of bad) assert.throws(() => buildNodeShape(opts), message);
});

test('cpulists parse and format like sysfs and --reserved-cpus', () => {
  const cases: [string, number[] | undefined][] = [
    ['0-3,8,10-11', [0, 1, 2, 3, 8, 10, 11]],
    ['5', [5]],
    ['', []],
    ['3-1', undefined],
    ['a', undefined],
    ['0,,1', undefined],
  ];
  for (const [text, want] of cases) assert.deepEqual(parseCpuList(text), want, text);
  assert.equal(formatCpuList([11, 0, 1, 2, 3, 8, 10]), '0-3,8,10-11');
  assert.equal(formatCpuList([]), '');
});

test('the object store replays, filters transitions and expires compacted versions', () => {
  const clock = new ResourceVersionClock();
  const store = new ObjectStore('Pod', 'PodList', true, clock, 3);
  const a = store.upsert(obj('a', { app: 'x' }));
  assert.equal(a.metadata.resourceVersion, '1');
  assert.equal(store.upsert(obj('a', { app: 'x' })), a, 'an unchanged object keeps its version');
  store.upsert(obj('a', { app: 'y' })); // rv 2: leaves app=x
  store.upsert(obj('b', { app: 'x' })); // rv 3
  const seen: WatchEvent[] = [];
  const w = store.watch(1, parseLabelSelector('app=x'), (e) => seen.push(e));
  assert.ok(w.ok);
  assert.deepEqual(
    seen.map((e) => [e.type, (e.object as KubeObject).metadata.name]),
    [
      ['DELETED', 'a'],
      ['ADDED', 'b'],
    ],
  );
  store.delete('default', 'b'); // rv 4 → history keeps 2..4
  assert.deepEqual(seen.at(-1)?.type, 'DELETED');
  const expired = store.watch(
    0,
    () => true,
    () => undefined,
  );
  assert.equal(expired.ok, false);
  assert.equal(!expired.ok && expired.code, 410);
  assert.ok(
    store.watch(
      1,
      () => true,
      () => undefined,
    ).ok,
    'rv 1 is still covered (events after it are kept)',
  );
});

test('a capped store deletes the least recently changed object', () => {
  const store = new ObjectStore('Event', 'EventList', true, new ResourceVersionClock(), 100, 2);
  store.upsert(obj('a'));
  store.upsert(obj('b'));
  store.upsert(obj('a', { touched: 'yes' }));
  const deleted: string[] = [];
  store.watch(
    null,
    () => true,
    (e) => e.type === 'DELETED' && deleted.push((e.object as KubeObject).metadata.name),
  );
  store.upsert(obj('c'));
  assert.deepEqual(deleted, ['b']);
  assert.deepEqual(
    store.list(() => true).items.map((o) => o.metadata.name),
    ['a', 'c'],
  );
});

test('NUMA flags: topology/CPU/memory manager policies, reserved CPUs, SMT, hugepages', () => {
  const base = ['--device-plugin-dir', '/d', '--state-dir', '/s'];
  const ok = parseCliConfig([
    ...base,
    '--topology-manager-policy',
    'restricted',
    '--topology-manager-scope',
    'pod',
    '--reserved-cpus',
    '0-1,4',
    '--threads-per-core',
    '1',
    '--hugepages-2mi-per-numa',
    '1Gi',
    '--cpu-manager-policy',
    'none',
  ]).options;
  assert.equal(ok.topologyManagerPolicy, 'restricted');
  assert.equal(ok.topologyManagerScope, 'pod');
  assert.deepEqual(ok.reservedCpus, [0, 1, 4]);
  assert.equal(ok.threadsPerCore, 1);
  assert.deepEqual(ok.hugepagesPerNumaBytes, { 'hugepages-2Mi': 2 ** 30 });
  const bad: [string[], RegExp][] = [
    [
      ['--topology-manager-policy', 'strict'],
      /--topology-manager-policy: expected none, best-effort, restricted or single-numa-node/,
    ],
    [['--topology-manager-scope', 'node'], /--topology-manager-scope: expected container or pod/],
    [['--reserved-cpus', '3-1'], /--reserved-cpus: expected a cpulist/],
    [['--threads-per-core', '0'], /--threads-per-core: expected a positive integer/],
    [['--hugepages-1gi-per-numa', 'lots'], /--hugepages-1gi-per-numa: expected a quantity/],
  ];
  for (const [flags, message] of bad)
    assert.throws(() => parseCliConfig([...base, ...flags]), message, flags.join(' '));
});
