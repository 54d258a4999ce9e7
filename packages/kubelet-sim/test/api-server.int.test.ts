// The Kubernetes API slice against @kubernetes/client-node 1.4.0, unchanged: the written kubeconfig,
// typed list/read calls, informers (ListWatch) with field selectors, watch resume from a
// resourceVersion, 410 Gone for compacted versions (the informer relists), bookmarks, POST events;
// plus control-API authentication.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, ListWatch, Watch, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { KubeletSimError, startKubeletSim } from '../src/index.js';
import { pod, startFixture, waitFor, type SimFixture } from './helpers.js';
import { TestPlugin } from './test-plugin.js';

const GPU = 'example.com/gpu';

describe('Kubernetes API slice with @kubernetes/client-node', () => {
  let f: SimFixture;
  let plugin: TestPlugin;
  let kc: KubeConfig;
  let core: CoreV1Api;
  const informers: ListWatch<V1Node | V1Pod>[] = [];
  before(async () => {
    f = await startFixture({
      watchHistorySize: 8,
      bookmarkIntervalMs: 50,
      crashLoopBackOff: { initialMs: 30, maxMs: 60 },
    });
    plugin = new TestPlugin({
      dir: f.dir,
      resourceName: GPU,
      devices: [{ id: 'g0' }, { id: 'g1' }, { id: 'g2' }],
    });
    await plugin.start();
    await plugin.register();
    await waitFor(() => f.sim.state().resources[GPU]?.allocatable === 3, 'devices');
    kc = new KubeConfig();
    kc.loadFromFile(f.sim.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
  });
  after(async () => {
    for (const i of informers) await i.stop();
    await plugin.stop();
    await f.cleanup();
  });

  test('the kubeconfig points at the simulator; the node reports extended resources and conditions', async () => {
    assert.equal(kc.getCurrentCluster()?.server, f.sim.url);
    const nodes = await core.listNode({ fieldSelector: 'metadata.name=sim-node' });
    assert.equal(nodes.items.length, 1);
    const node = await core.readNode({ name: 'sim-node' });
    assert.equal(node.status?.capacity?.[GPU], '3');
    assert.equal(node.status?.allocatable?.[GPU], '3');
    assert.equal(node.status?.capacity?.['cpu'], '8');
    assert.equal(node.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    assert.ok(node.metadata?.resourceVersion);
    await assert.rejects(core.readNode({ name: 'other' }), (err: { code?: number }) => err.code === 404);
  });

  test('a node informer sees allocatable follow device health', async () => {
    const lw = new ListWatch<V1Node>(
      '/api/v1/nodes',
      new Watch(kc),
      () => core.listNode({ fieldSelector: 'metadata.name=sim-node' }),
      false,
      undefined,
      'metadata.name=sim-node',
    );
    informers.push(lw);
    await lw.start();
    assert.equal(lw.get('sim-node')?.status?.allocatable?.[GPU], '3');
    plugin.setHealth('g2', 'Unhealthy');
    await waitFor(() => lw.get('sim-node')?.status?.allocatable?.[GPU] === '2', 'allocatable 2 via watch');
    assert.equal(lw.get('sim-node')?.status?.capacity?.[GPU], '3');
    plugin.setHealth('g2', 'Healthy');
    await waitFor(() => lw.get('sim-node')?.status?.allocatable?.[GPU] === '3', 'allocatable 3 via watch');
  });

  test('a pod informer with spec.nodeName sees adds, status updates and deletes', async () => {
    const selector = 'spec.nodeName=sim-node';
    const lw = new ListWatch<V1Pod>(
      '/api/v1/pods',
      new Watch(kc),
      () => core.listPodForAllNamespaces({ fieldSelector: selector }),
      false,
      undefined,
      selector,
    );
    informers.push(lw);
    const deleted: string[] = [];
    lw.on('delete', (p) => deleted.push(p.metadata?.name ?? ''));
    await lw.start();
    await f.sim.admitPod(pod('watched', { [GPU]: 1 }));
    const running = await waitFor(
      () =>
        lw.get('watched', 'default')?.status?.phase === 'Running' ? lw.get('watched', 'default') : undefined,
      'pod Running',
    );
    assert.equal(running.spec?.nodeName, 'sim-node');
    const statuses = running.status?.containerStatuses?.[0] as unknown as {
      allocatedResourcesStatus?: { name: string }[];
    };
    assert.equal(statuses.allocatedResourcesStatus?.[0]?.name, GPU);
    await f.sim.deletePod('default', 'watched');
    await waitFor(() => deleted.includes('watched'), 'delete event');
    assert.equal(lw.get('watched', 'default'), undefined);
    const other = await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=other-node' });
    assert.equal(other.items.length, 0);
  });

  test('watches resume from a resourceVersion and answer a compacted one with 410 Expired', async () => {
    const list = await core.listNamespacedPod({ namespace: 'default' });
    const from = list.metadata?.resourceVersion ?? '';
    await f.sim.admitPod(pod('resume', {}));
    const seen: { type: string; name?: string }[] = [];
    const watch = new Watch(kc);
    const req = await watch.watch(
      '/api/v1/namespaces/default/pods',
      { resourceVersion: from },
      (type, obj: V1Pod) => seen.push({ type, name: obj.metadata?.name }),
      () => undefined,
    );
    await waitFor(() => seen.some((e) => e.type === 'ADDED' && e.name === 'resume'), 'replayed ADDED');
    req.abort();

    // Push the old version out of the bounded history (8 events).
    for (let i = 0; i < 6; i++) {
      await f.sim.admitPod(pod(`churn-${i}`, {}));
      await f.sim.deletePod('default', `churn-${i}`);
    }
    const events: {
      type: string;
      obj: { code?: number; reason?: string; kind?: string; message?: string };
    }[] = [];
    let closed = false;
    await watch.watch(
      '/api/v1/pods',
      { resourceVersion: from },
      (type, obj: { code?: number }) => events.push({ type, obj }),
      () => (closed = true),
    );
    await waitFor(() => closed, 'the server closes an expired watch');
    assert.equal(events.length, 1);
    assert.equal(events[0]!.type, 'ERROR');
    assert.equal(events[0]!.obj.kind, 'Status');
    assert.equal(events[0]!.obj.code, 410);
    assert.equal(events[0]!.obj.reason, 'Expired');
    assert.match(events[0]!.obj.message ?? '', /^too old resource version: \d+ \(\d+\)$/);
  });

  test('an informer whose resourceVersion expired relists and catches up', async () => {
    let lists = 0;
    const lw = new ListWatch<V1Pod>(
      '/api/v1/namespaces/default/pods',
      new Watch(kc),
      () => {
        lists++;
        return core.listNamespacedPod({ namespace: 'default' });
      },
      false,
    );
    informers.push(lw);
    await lw.start();
    assert.equal(lists, 1);
    const stale = lw.latestResourceVersion();
    await lw.stop();
    for (let i = 0; i < 6; i++) await f.sim.admitPod(pod(`while-away-${i}`, {}));
    await lw.start(); // watches from the stale version → ERROR 410 → relist
    await waitFor(
      () => lw.list().filter((p) => p.metadata?.name?.startsWith('while-away-')).length === 6,
      'relist after 410',
    );
    assert.equal(lists, 2, 'exactly one relist, caused by the 410');
    assert.notEqual(lw.latestResourceVersion(), stale);
  });

  test('watches with allowWatchBookmarks receive BOOKMARK events carrying the current version', async () => {
    const bookmarks: string[] = [];
    const req = await new Watch(kc).watch(
      '/api/v1/nodes',
      { allowWatchBookmarks: true },
      (type, obj: { metadata?: { resourceVersion?: string } }) => {
        if (type === 'BOOKMARK') bookmarks.push(obj.metadata?.resourceVersion ?? '');
      },
      () => undefined,
    );
    await waitFor(() => bookmarks.length >= 2, 'bookmarks');
    req.abort();
    assert.match(bookmarks[0]!, /^\d+$/);
  });

  test('sendInitialEvents streams the current objects, then a bookmark marking their end', async () => {
    const seen: { type: string; name?: string; end?: string }[] = [];
    const req = await new Watch(kc).watch(
      '/api/v1/nodes',
      { sendInitialEvents: true, allowWatchBookmarks: true, resourceVersionMatch: 'NotOlderThan' },
      (type, obj: { metadata?: { name?: string; annotations?: Record<string, string> } }) =>
        seen.push({
          type,
          name: obj.metadata?.name,
          end: obj.metadata?.annotations?.['k8s.io/initial-events-end'],
        }),
      () => undefined,
    );
    await waitFor(() => seen.length >= 2, 'initial events');
    req.abort();
    assert.deepEqual(seen.slice(0, 2), [
      { type: 'ADDED', name: 'sim-node', end: undefined },
      { type: 'BOOKMARK', name: undefined, end: 'true' },
    ]);
  });

  test('timeoutSeconds ends a watch from the server side; later changes do not write to it', async () => {
    const started = Date.now();
    const res = await fetch(`${f.sim.url}/api/v1/pods?watch=true&timeoutSeconds=1`);
    assert.equal(res.status, 200);
    const body = await res.text(); // resolves when the server ends the stream
    assert.ok(Date.now() - started >= 900, 'ended by the timeout');
    assert.ok(
      body
        .split('\n')
        .filter(Boolean)
        .every((l) => (JSON.parse(l) as { type: string }).type === 'ADDED'),
    );
    await f.sim.admitPod(pod('after-timeout', {}));
    assert.equal(
      (await core.readNamespacedPod({ name: 'after-timeout', namespace: 'default' })).metadata?.name,
      'after-timeout',
    );
  });

  test('events can be created and are listed with their field selectors', async () => {
    const created = await core.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { generateName: 'sim-node.' },
        involvedObject: { kind: 'Node', apiVersion: 'v1', name: 'sim-node' },
        reason: 'DeviceUnhealthy',
        message: 'g2 failed',
        type: 'Warning',
        source: { component: 'test' },
      },
    });
    assert.match(created.metadata?.name ?? '', /^sim-node\./);
    assert.ok(created.metadata?.uid);
    const listed = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: 'involvedObject.kind=Node,reason=DeviceUnhealthy',
    });
    assert.deepEqual(
      listed.items.map((e) => e.message),
      ['g2 failed'],
    );
    const bad = await fetch(`${f.sim.url}/api/v1/pods?fieldSelector=spec.bogus=1`);
    assert.equal(bad.status, 400);
    assert.deepEqual(await bad.json(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'field label not supported: spec.bogus',
      reason: 'BadRequest',
      code: 400,
    });
    const put = await fetch(`${f.sim.url}/api/v1/nodes/sim-node`, { method: 'PUT', body: '{}' });
    assert.equal(put.status, 405);
  });
});

describe('Control API authentication', () => {
  test('binding beyond loopback requires a control token', async () => {
    const root = mkdtempSync(join(tmpdir(), 'pb-ksim-auth-'));
    try {
      await assert.rejects(
        startKubeletSim({
          devicePluginDir: join(root, 'dp'),
          stateDir: join(root, 'st'),
          listen: '0.0.0.0:0',
        }),
        (err: KubeletSimError) => err.code === 'Config' && /control token/.test(err.message),
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  let f: SimFixture;
  before(async () => {
    f = await startFixture({ controlToken: 's3cret' });
  });
  after(() => f.cleanup());

  test('mutations need the bearer token; reads do not', async () => {
    const body = JSON.stringify(pod('authz', {}));
    const denied = await fetch(`${f.sim.url}/control/v1/pods`, { method: 'POST', body });
    assert.equal(denied.status, 401);
    assert.equal(denied.headers.get('content-type'), 'application/problem+json');
    const ok = await fetch(`${f.sim.url}/control/v1/pods`, {
      method: 'POST',
      body,
      headers: { authorization: 'Bearer s3cret' },
    });
    assert.equal(ok.status, 201);
    const state = await fetch(`${f.sim.url}/control/v1/state`);
    assert.equal(state.status, 200);
    assert.equal(((await state.json()) as { pods: unknown[] }).pods.length, 1);
    // The kubeconfig carries the token, so client-node can post events.
    const kc = new KubeConfig();
    kc.loadFromFile(f.sim.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedEvent({
      namespace: 'default',
      body: { metadata: { name: 'e1' }, involvedObject: { kind: 'Node', name: 'sim-node' } },
    });
    const restart = await fetch(`${f.sim.url}/control/v1/restart`, {
      method: 'POST',
      headers: { authorization: 'Bearer s3cret' },
    });
    assert.equal(restart.status, 200);
  });

  test('state?view=admissions: the policy/admission slice, with an ETag that answers 304 while unchanged', async () => {
    const url = `${f.sim.url}/control/v1/state?view=admissions`;
    const first = await fetch(url);
    assert.equal(first.status, 200);
    const etag = first.headers.get('etag');
    assert.match(etag ?? '', /^"[\w-]+"$/);
    const body = (await first.json()) as {
      node: Record<string, unknown>;
      pods: Record<string, unknown>[];
    };
    assert.deepEqual(Object.keys(body.node).sort(), [
      'cpuManagerPolicy',
      'memoryManagerPolicy',
      'reservedCpus',
      'topologyManagerPolicy',
      'topologyManagerScope',
    ]);
    for (const p of body.pods) assert.deepEqual(Object.keys(p).sort(), ['admission', 'name', 'namespace']);

    const same = await fetch(url, { headers: { 'if-none-match': etag! } });
    assert.equal(same.status, 304);
    assert.equal(await same.text(), '');

    const admitted = await fetch(`${f.sim.url}/control/v1/pods`, {
      method: 'POST',
      body: JSON.stringify(pod('etag-check', {})),
      headers: { authorization: 'Bearer s3cret' },
    });
    assert.equal(admitted.status, 201);
    const changed = await fetch(url, { headers: { 'if-none-match': etag! } });
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers.get('etag'), etag);
    const names = ((await changed.json()) as { pods: { name: string }[] }).pods.map((p) => p.name);
    assert.ok(names.includes('etag-check'), names.join(', '));

    const full = await fetch(`${f.sim.url}/control/v1/state`);
    assert.ok(full.headers.get('etag'));
    assert.ok('resources' in ((await full.json()) as object));

    const bad = await fetch(`${f.sim.url}/control/v1/state?view=everything`);
    assert.equal(bad.status, 400);
    assert.equal(bad.headers.get('content-type'), 'application/problem+json');
    assert.match(
      ((await bad.json()) as { detail: string }).detail,
      /view must be "full" or "admissions", got "everything"/,
    );
  });
});
