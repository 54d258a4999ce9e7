// The gateway's two read sources failing under it. PodResources: the socket absent at start, then
// appearing; later disappearing for a while (3 s short, 30 s full) while the gateway serves — it
// keeps the last state marked stale and recovers by itself. Kubernetes API: a proxy answering 500s,
// hanging then cutting connections, and ending watches with 410 Expired — the informers relist and
// recover, nothing crashes, and sources.kubernetes says stale with the reason while it lasts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { report, sized } from './figures.js';
import { KubeApiProxy, type ProxyMode } from './kube-proxy.js';
import { GPU, snapshotOf, startRig, UnixRelay, waitFor } from './harness.js';

const OUTAGE_MS = sized(3_000, 30_000);

const pod = (name: string) => ({
  metadata: { name, namespace: 'rel' },
  spec: {
    restartPolicy: 'Always' as const,
    containers: [{ name: 'c', resources: { limits: { [GPU]: 1 } } }],
  },
});

test(`PodResources socket absent at start, then appearing; gone ${OUTAGE_MS / 1000} s while serving: stale last state, recovers by itself`, async (t) => {
  let relay!: UnixRelay;
  const rig = await startRig({
    gateway: (sim, dir) => {
      mkdirSync(join(dir, 'pr'), { recursive: true });
      relay = new UnixRelay(join(dir, 'pr', 'kubelet.sock'), sim.podResourcesSocket);
      return {
        podResources: { socket: relay.path, pollIntervalMs: 200, maxBackoffMs: 400 },
        kube: { mode: 'disabled' },
      };
    },
  });
  t.after(async () => {
    await relay.down();
    await rig.stop();
  });
  await rig.sim.admitPod(pod('early'));
  // Absent at start: the gateway serves, the source is "connecting" and says what it dials.
  let s = await snapshotOf(rig.gw);
  assert.equal(s.sources.podResources.status, 'connecting');
  assert.equal(s.pods['rel/early'], undefined);
  const appearedAt = performance.now();
  await relay.up();
  s = await waitFor('PodResources ok after the socket appears', async () => {
    const s = await snapshotOf(rig.gw);
    return s.sources.podResources.status === 'ok' && s.pods['rel/early'] ? s : null;
  });
  const appearMs = performance.now() - appearedAt;
  const allocated = s.resources[GPU]!.kubelet.allocated;
  assert.equal(allocated, 1);

  // Disappearing while serving.
  await relay.down();
  const stale = await waitFor('stale while the socket is gone', async () => {
    const s = await snapshotOf(rig.gw);
    return s.sources.podResources.status === 'stale' ? s : null;
  });
  assert.match(stale.sources.podResources.reason ?? '', /retr/i);
  // Throughout the outage the last state is served; a change in the kubelet is not seen yet.
  await rig.sim.admitPod(pod('during-outage'));
  const outageEnd = Date.now() + OUTAGE_MS;
  let checks = 0;
  while (Date.now() < outageEnd) {
    const s = await snapshotOf(rig.gw);
    assert.equal(s.sources.podResources.status, 'stale');
    assert.ok(s.pods['rel/early'], 'last known pods kept');
    assert.equal(s.resources[GPU]!.kubelet.allocated, allocated, 'last known allocation kept');
    checks++;
    await new Promise((r) => setTimeout(r, 250));
  }
  const back = performance.now();
  await relay.up();
  s = await waitFor('recovered on its own', async () => {
    const s = await snapshotOf(rig.gw);
    return s.sources.podResources.status === 'ok' && s.resources[GPU]!.kubelet.allocated === 2 ? s : null;
  });
  const recoverMs = performance.now() - back;
  assert.ok(s.events.some((e) => e.kind === 'source' && /PodResources is stale/.test(e.message)));
  report(t, {
    scenario: 'pod-resources-outage',
    figure: 'outage served stale',
    value: OUTAGE_MS / 1000,
    unit: 's',
  });
  report(t, { scenario: 'pod-resources-outage', figure: 'stale snapshots checked', value: checks });
  report(t, {
    scenario: 'pod-resources-outage',
    figure: 'socket appears → ok',
    value: appearMs.toFixed(0),
    unit: 'ms',
  });
  report(t, {
    scenario: 'pod-resources-outage',
    figure: 'socket back → ok',
    value: recoverMs.toFixed(0),
    unit: 'ms',
    bound: '≤ maxBackoffMs + poll',
  });
});

test('Kubernetes API returning 500s, hanging, and 410 Gone: informers relist and recover; stale with the reason meanwhile', async (t) => {
  let proxy!: KubeApiProxy;
  const rig = await startRig({
    gateway: async (sim, dir) => {
      proxy = new KubeApiProxy(sim.url, { hangMs: 800 });
      await proxy.start();
      return {
        kube: {
          mode: 'kubeconfig',
          kubeconfig: proxy.writeKubeconfig(sim.kubeconfigPath, join(dir, 'proxy-kubeconfig')),
          maxBackoffMs: 500,
        },
      };
    },
  });
  t.after(async () => {
    await rig.stop();
    await proxy.stop();
  });
  await waitFor(
    'Kubernetes source ok',
    async () => (await snapshotOf(rig.gw)).sources.kubernetes.status === 'ok',
  );

  const outages: { mode: ProxyMode; reason: RegExp; staleMs: number; recoverMs: number; relists: number }[] =
    [];
  let n = 0;
  for (const [mode, reason] of [
    ['error-500', /HTTP 500|500|leader changed/],
    ['hang', /hang up|ECONNRESET|socket|terminated|closed|fetch failed/i],
  ] as const) {
    const listsBefore = proxy.counts.list;
    const t0 = performance.now();
    proxy.setMode(mode);
    // The cut itself is the first reason ("Premature close"); the retries then meet the fault.
    const stale = await waitFor(`stale under ${mode} with its reason`, async () => {
      const s = await snapshotOf(rig.gw);
      return s.sources.kubernetes.status === 'stale' && reason.test(s.sources.kubernetes.reason ?? '')
        ? s
        : null;
    });
    const staleMs = performance.now() - t0;
    assert.match(stale.sources.kubernetes.reason ?? '', /retrying/);
    // A change during the outage must show up after it.
    const name = `during-${mode}-${n++}`;
    await rig.sim.admitPod(pod(name));
    await new Promise((r) => setTimeout(r, 1200));
    assert.equal((await fetch(`${rig.gw.url}/healthz`)).status, 200);
    const t1 = performance.now();
    proxy.setMode('pass');
    await waitFor(
      `recovered after ${mode}`,
      async () => {
        const s = await snapshotOf(rig.gw);
        return s.sources.kubernetes.status === 'ok' && s.pods[`rel/${name}`]?.phase === 'Running';
      },
      15_000,
    );
    outages.push({
      mode,
      reason,
      staleMs,
      recoverMs: performance.now() - t1,
      relists: proxy.counts.list - listsBefore,
    });
  }

  // 410 Gone on every watch: ListWatch relists; changes still arrive through the relists.
  const listsBefore = proxy.counts.list;
  proxy.setMode('gone-410');
  await rig.sim.admitPod(pod('during-410'));
  await waitFor(
    'pod seen through relists while watches answer 410',
    async () =>
      proxy.counts.list - listsBefore >= 2 &&
      (await snapshotOf(rig.gw)).pods['rel/during-410']?.phase === 'Running',
    15_000,
  );
  // Keep every watch expiring for a while: relists must not turn into a hot loop.
  const windowStart = proxy.counts.list;
  await new Promise((r) => setTimeout(r, 2000));
  const relistsPerSecond = (proxy.counts.list - windowStart) / 2;
  const relists410 = proxy.counts.list - listsBefore;
  assert.equal((await snapshotOf(rig.gw)).pods['rel/during-410']?.phase, 'Running');
  proxy.setMode('pass');
  await waitFor('ok after 410s', async () => (await snapshotOf(rig.gw)).sources.kubernetes.status === 'ok');
  const final = await snapshotOf(rig.gw);
  assert.ok(final.resources[GPU]!.apiServer, 'Node status from the API server is back');
  assert.equal(final.resources[GPU]!.apiServer.capacity, 8);
  for (const o of outages) {
    report(t, {
      scenario: 'kube-api-faults',
      figure: `${o.mode}: stale after / recovered after`,
      value: `${o.staleMs.toFixed(0)} / ${o.recoverMs.toFixed(0)}`,
      unit: 'ms',
    });
  }
  report(t, {
    scenario: 'kube-api-faults',
    figure: '410 Gone: relists while every watch expired',
    value: relists410,
  });
  report(t, {
    scenario: 'kube-api-faults',
    figure: '410 Gone: relists per second (2 informers)',
    value: relistsPerSecond,
    bound: '≤ 10',
  });
  assert.ok(relistsPerSecond <= 10, `relist storm: ${relistsPerSecond}/s`);
  report(t, {
    scenario: 'kube-api-faults',
    figure: 'failed API requests answered without a crash',
    value: proxy.counts.failed,
  });
});
