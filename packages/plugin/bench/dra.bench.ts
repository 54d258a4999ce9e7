// DRA driver benchmark (not a test). In one process: a DraDriver (8 simulated GPUs on 2 NUMA nodes,
// the CLI's logger into /dev/null), the test DRA kubelet (DRAPlugin and health clients over real
// Unix sockets), the fake API server (real HTTP on 127.0.0.1, read through @kubernetes/client-node)
// and the baseline, a bare @grpc/grpc-js echo on a Unix socket. It measures:
//  - NodePrepareResources + NodeUnprepareResources of one claim (one GPU) — the claim read from
//    the API server, the CDI spec written and removed, the checkpoint written (fsync) twice — at 1
//    and 8 in flight, beside two echo calls (the same number of gRPC round trips) in the same run;
//    target p99 ≤ 1.5× the echo. The cost of the parts (the claim GET through client-node, one
//    atomic fsync'd write) is measured alone in the same run, to say where the time goes;
//  - fault → health message on the kubelet's NodeWatchResources stream; target p99 ≤ 5 ms;
//  - ResourceSlice publication of 1,024 devices (8 slices; 16 with taints on): time from start to
//    published, requests made; and faults on the tainted pool (the first, then 100): time and
//    requests.
// Run: npm run bench -w @plugboard/plugin   (prints Markdown tables after the device-plugin one)
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { drahealthv1, drav1 } from '@plugboard/proto';
import { writeFileAtomic } from '../src/atomic-file.js';
import {
  createLogger,
  DraDriver,
  kubeApiFromKubeConfig,
  SimulatedSource,
  type DraDriverOptions,
  type DraKubeApi,
} from '../src/index.js';
import { allocatedClaim, FakeApiServer } from '../test/dra/fake-api-server.js';
import { healthOf, TestDraKubelet } from '../test/dra/test-dra-kubelet.js';
import { compare, startEcho, stats, type Stats } from './bench-helpers.js';

const DRIVER = 'gpu.plugboard.example';
const NODE = 'bench-node';
const { UNHEALTHY } = drahealthv1.HealthStatus;

const row = (what: string, s: Stats): string =>
  `| ${what} | ${s.p50.toFixed(3)} | ${s.p99.toFixed(3)} | ${Math.round(s.perSecond)} | ${s.n} |`;

async function timeSamples(n: number, fn: () => Promise<void>): Promise<Stats> {
  for (let i = 0; i < 50; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  return stats(
    samples,
    samples.reduce((a, b) => a + b, 0),
  );
}

async function main(): Promise<void> {
  const loadAtStart = loadavg();
  const dir = await mkdtemp(join(tmpdir(), 'pb-dra-bench-'));
  const api = await FakeApiServer.start();
  api.addNode(NODE);
  const kube: DraKubeApi = await kubeApiFromKubeConfig({ kubeconfig: api.kubeconfigPath });
  const logger = createLogger('info', {}, '/dev/null');
  const driverOptions = (root: string, extra: Partial<DraDriverOptions> = {}): DraDriverOptions => ({
    driverName: DRIVER,
    nodeName: NODE,
    source: new SimulatedSource({ count: 8, numaNodes: [0, 1], idPrefix: 'gpu' }),
    kube,
    pluginsDir: join(root, 'plugins'),
    pluginsRegistryDir: join(root, 'registry'),
    cdiDir: join(root, 'cdi'),
    logger,
    ...extra,
  });

  const driver = new DraDriver(driverOptions(join(dir, 'a')));
  await driver.start();
  const kubelet = new TestDraKubelet(join(dir, 'a', 'registry'));
  kubelet.start();
  await kubelet.registered(DRIVER);

  // --- prepare + unprepare vs echo ------------------------------------------------------------
  const claims = Array.from({ length: 8 }, (_, i) =>
    allocatedClaim({
      name: `claim-${i}`,
      node: NODE,
      results: [{ driver: DRIVER, pool: NODE, device: `gpu-${i}` }],
    }),
  );
  for (const c of claims) api.putClaim(c);
  const refs: drav1.Claim[] = claims.map((c) => ({
    namespace: 'default',
    name: c.metadata.name,
    uid: c.metadata.uid,
  }));
  const roundTrip = async (worker: number): Promise<void> => {
    const ref = refs[worker % refs.length]!;
    const prepared = await kubelet.prepare(DRIVER, [ref]);
    const error = prepared.claims[ref.uid]?.error;
    if (error !== '') throw new Error(`prepare failed: ${error}`);
    const unprepared = await kubelet.unprepare(DRIVER, [ref]);
    if (unprepared.claims[ref.uid]?.error !== '') throw new Error('unprepare failed');
  };
  const echo = await startEcho(join(dir, 'echo.sock'));
  const prepareBytes = Buffer.from(drav1.NodePrepareResourcesRequest.encode({ claims: [refs[0]!] }).finish());
  const unprepareBytes = Buffer.from(
    drav1.NodeUnprepareResourcesRequest.encode({ claims: [refs[0]!] }).finish(),
  );
  const echoRoundTrip = async (): Promise<void> => {
    await echo.call(prepareBytes);
    await echo.call(unprepareBytes);
  };
  const rows: string[] = [];
  const ratios: Record<string, number> = {};
  for (const inFlight of [1, 8]) {
    const total = inFlight === 1 ? 1000 : 2000;
    const [d, e] = await compare(roundTrip, echoRoundTrip, inFlight, total);
    ratios[`p50@${inFlight}`] = d.p50 / e.p50;
    ratios[`p99@${inFlight}`] = d.p99 / e.p99;
    rows.push(
      row(`NodePrepareResources + NodeUnprepareResources (1 claim, 1 GPU), ${inFlight} in flight`, d),
      row(`2 bare grpc-js echo calls, ${inFlight} in flight`, e),
      `| ratio DRA / echo | ${(d.p50 / e.p50).toFixed(2)}× | ${(d.p99 / e.p99).toFixed(2)}× | ${(d.perSecond / e.perSecond).toFixed(2)}× | |`,
    );
  }
  // Where the time goes: the parts of a round trip, alone.
  const claimGet = await timeSamples(500, async () => {
    await kube.readResourceClaim('default', 'claim-0');
  });
  const fsyncWrite = await timeSamples(500, () =>
    writeFileAtomic(join(dir, 'probe.json'), '{"probe":true}\n', { fsync: true }),
  );
  const plainWrite = await timeSamples(500, () =>
    writeFileAtomic(join(dir, 'probe.json'), '{"probe":true}\n'),
  );
  echo.close();

  // --- fault → health message ------------------------------------------------------------------
  const stream = kubelet.plugin(DRIVER).health!;
  const faultCycle = async (i: number, samples: number[] | null): Promise<void> => {
    const id = `gpu-${i % 8}`;
    const update = (async () => {
      for (;;) {
        const [msg] = (await once(stream, 'data')) as [drahealthv1.NodeWatchResourcesResponse];
        if (healthOf(msg.devices, id)?.health === UNHEALTHY) return performance.now();
      }
    })();
    const t = performance.now();
    driver.injectFault(id, 'bench');
    const at = await update;
    samples?.push(at - t);
    const healed = once(stream, 'data');
    driver.clearFault(id);
    await healed;
  };
  const cold: number[] = [];
  for (let i = 0; i < 300; i++) await faultCycle(i, cold);
  for (let i = 0; i < 2000; i++) await faultCycle(i, null);
  const warm: number[] = [];
  for (let i = 0; i < 300; i++) await faultCycle(i, warm);
  const coldFault = stats(cold, 1);
  const fault = stats(warm, 1);
  kubelet.stop();
  await driver.stop();

  // --- ResourceSlice publication of 1,024 devices --------------------------------------------
  const publish = async (name: string, extra: Partial<DraDriverOptions>) => {
    api.slices.clear();
    const from = api.requests.length;
    const d = new DraDriver({
      ...driverOptions(join(dir, name)),
      source: new SimulatedSource({ count: 1024, numaNodes: [0, 1], idPrefix: 'gpu' }),
      ...extra,
    });
    const published = once(d, 'slices-published');
    const t = performance.now();
    await d.start();
    await published;
    const ms = performance.now() - t;
    const requests = api.requests.slice(from).map((r) => r.method);
    return { d, ms, requests, slices: api.slicesOf(DRIVER).length };
  };
  const count = (methods: string[]): string => {
    const by = new Map<string, number>();
    for (const m of methods) by.set(m, (by.get(m) ?? 0) + 1);
    return `${methods.length} (${[...by].map(([m, n]) => `${n} ${m}`).join(', ')})`;
  };
  const plain = await publish('p1', {});
  await plain.d.stop();
  const tainted = await publish('p2', { taints: { effect: 'NoSchedule' } });
  // Fault → taint published: the first one (every device's canonical form is computed once, on
  // this first compare), then 100 fault/heal cycles on other devices.
  const taintCycle = async (id: string): Promise<{ ms: number; requests: string[] }> => {
    const from = api.requests.length;
    const published = once(tainted.d, 'slices-published');
    const t = performance.now();
    tainted.d.injectFault(id, 'bench');
    await published;
    const ms = performance.now() - t;
    const requests = api.requests.slice(from).map((r) => r.method);
    const healed = once(tainted.d, 'slices-published');
    tainted.d.clearFault(id);
    await healed;
    return { ms, requests };
  };
  const firstTaint = await taintCycle('gpu-700');
  const taintSamples: number[] = [];
  const taintRequests: string[] = [];
  for (let i = 0; i < 100; i++) {
    const { ms, requests } = await taintCycle(`gpu-${(i * 37) % 1024}`);
    taintSamples.push(ms);
    taintRequests.push(...requests);
  }
  const taint = stats(taintSamples, 1);
  await tainted.d.stop();

  await api.stop();
  await rm(dir, { recursive: true, force: true });

  const verdict = (ok: boolean): string => (ok ? 'met' : 'MISSED');
  const worst = Math.max(ratios['p99@1']!, ratios['p99@8']!);
  console.log(
    `\n# @plugboard/plugin DRA benchmark — ${new Date().toISOString()}, Node ${process.version}, ${process.platform}/${process.arch}, ${cpus().length} CPUs, load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')} at start`,
    `(1/5/15 min) and ${loadavg()[0]!.toFixed(2)} at the end\n`,
  );
  console.log('| what | p50 ms | p99 ms | calls/s | calls |\n| --- | --- | --- | --- | --- |');
  console.log(rows.join('\n'));
  console.log(
    row('  part: read the ResourceClaim (client-node GET, fake API server in this process)', claimGet),
  );
  console.log(row('  part: one atomic write with fsync (checkpoint)', fsyncWrite));
  console.log(row('  part: one atomic write without fsync (CDI spec)', plainWrite));
  console.log(
    '\n| what | p50 ms | p99 ms | max ms | samples | target |\n| --- | --- | --- | --- | --- | --- |',
  );
  console.log(
    `| fault → health message, first 300 after start (JIT compiling) | ${coldFault.p50.toFixed(3)} | ${coldFault.p99.toFixed(3)} | ${coldFault.max.toFixed(3)} | ${coldFault.n} | (informational) |`,
  );
  console.log(
    `| fault → health message, steady state (after 2,000 warm-up cycles) | ${fault.p50.toFixed(3)} | ${fault.p99.toFixed(3)} | ${fault.max.toFixed(3)} | ${fault.n} | p99 ≤ 5 ms: ${verdict(fault.p99 <= 5)} |`,
  );
  console.log(
    '\n| ResourceSlice publication, 1,024 devices | time ms | requests | slices |\n| --- | --- | --- | --- |',
  );
  console.log(
    `| start → published, no taints (128 per slice) | ${plain.ms.toFixed(1)} | ${count(plain.requests)} | ${plain.slices} |`,
  );
  console.log(
    `| start → published, taints on (64 per slice) | ${tainted.ms.toFixed(1)} | ${count(tainted.requests)} | ${tainted.slices} |`,
  );
  console.log(
    `| first fault → taint published (taints on) | ${firstTaint.ms.toFixed(1)} | ${count(firstTaint.requests)} | |`,
  );
  console.log(
    `| fault → taint published, 100 more (taints on) | p50 ${taint.p50.toFixed(1)}, p99 ${taint.p99.toFixed(1)} | ${count(taintRequests)} | |`,
  );
  console.log(
    `\nDRA round trip p99 / echo p99: ${ratios['p99@1']!.toFixed(2)}× at 1 in flight, ${ratios['p99@8']!.toFixed(2)}× at 8 (target ≤ 1.5×: ${verdict(worst <= 1.5)}); p50: ${ratios['p50@1']!.toFixed(2)}× / ${ratios['p50@8']!.toFixed(2)}×`,
  );
}

await main();
