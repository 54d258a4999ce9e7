// DRA driver against upstream's example driver, in the same run (not a test). One kubelet-sim node
// (its API server, its plugin watcher) and two kubelet plugins registered with it as separate
// processes, each started the way its operator starts it:
//  - Plugboard's: `plugboard-plugin --config examples/dra-node.yaml` (8 simulated GPUs, checkpoint
//    fsync'd, every RPC logged as a JSON line at info into a file);
//  - sigs.k8s.io/dra-example-driver's dra-example-kubeletplugin (8 GPUs, -v=6: every RPC logged),
//    built from the Go module proxy by @plugboard/local-cluster the first time.
// Eight allocated ResourceClaims per driver (one GPU each) are written to the node's API server;
// the DRAPlugin v1 gRPC client kubelet-sim's DRA manager uses (@plugboard/proto's, the kubelet's
// 45 s call deadline), on the endpoint each driver registered with kubelet-sim, then runs
// NodePrepareResources + NodeUnprepareResources of one claim, 8 in flight for each driver, both at
// once (the same machine load for both): 300 warm-up pairs each, then 200 measured pairs each (no
// time cap: a loaded machine takes longer, it does not get fewer samples). Last, with every claim
// prepared (a driver upgraded under running pods), SIGTERM → process exit of each.
// Target (#27): Plugboard's p50 and p99 ≤ 1.2× the example driver's; SIGTERM → exit ≤ 1 s.
// Run: npm run bench -w @plugboard/plugin   (or node --conditions=@plugboard/source --import tsx
// packages/plugin/bench/dra-compare.bench.ts); prints a Markdown table.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drav1 } from '@plugboard/proto';
import { simNode, thirdParty, waitFor, type SimNode } from '@plugboard/testbed';
import { credentials, Metadata } from '@grpc/grpc-js';
import { load, stats, type Stats } from './bench-helpers.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const PLUGBOARD = 'gpu.plugboard.example';
const IN_FLIGHT = 8;
const PAIRS = 200;
const WARM_UP = 300;
/** The kubelet's defaultClientCallTimeout. */
const CALL_TIMEOUT_MS = 45_000;
/** sysconf(_SC_CLK_TCK) on Linux. */
const CLOCK_TICKS = 100;

/** POSTs an allocated claim for `device` of `driver` on the node and returns its reference. */
async function allocatedClaim(
  node: SimNode,
  driver: string,
  device: string,
  prefix: string,
): Promise<drav1.Claim> {
  const name = `${prefix}-${device}`;
  const base = `${node.sim.url}/apis/resource.k8s.io/v1/namespaces/default/resourceclaims`;
  const send = async (url: string, method: string, body: unknown): Promise<{ metadata: { uid: string } }> => {
    const res = await fetch(url, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { metadata: { uid: string } };
  };
  const created = await send(base, 'POST', {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaim',
    metadata: { name, namespace: 'default' },
    spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: driver } }] } },
  });
  await send(`${base}/${name}/status`, 'PUT', {
    ...created,
    status: {
      allocation: {
        devices: { results: [{ request: 'gpu', driver, pool: node.name, device }] },
        nodeSelector: {
          nodeSelectorTerms: [
            { matchFields: [{ key: 'metadata.name', operator: 'In', values: [node.name] }] },
          ],
        },
      },
    },
  });
  return { namespace: 'default', name, uid: created.metadata.uid };
}

/** The kubelet's client of `driver`'s registered plugin, once kubelet-sim holds it connected. */
async function kubeletClient(node: SimNode, driver: string): Promise<drav1.DRAPluginClient> {
  const plugin = await waitFor(`kubelet-sim to hold a connected ${driver} plugin`, () =>
    node.sim
      .state()
      .dra.drivers.find((d) => d.name === driver)
      ?.plugins.find((p) => p.connected),
  );
  return new drav1.DRAPluginClient(`unix://${plugin.endpoint}`, credentials.createInsecure());
}

const callOptions = (): { deadline: number } => ({ deadline: Date.now() + CALL_TIMEOUT_MS });

/** NodePrepareResources of `claim`, as the kubelet calls it; throws on a per-claim error. */
async function prepare(client: drav1.DRAPluginClient, claim: drav1.Claim): Promise<void> {
  const res = await new Promise<drav1.NodePrepareResourcesResponse>((resolve, reject) =>
    client.nodePrepareResources({ claims: [claim] }, new Metadata(), callOptions(), (e, r) =>
      e ? reject(e) : resolve(r),
    ),
  );
  const error = res.claims[claim.uid]?.error;
  if (error !== '') throw new Error(`prepare ${claim.name}: ${error}`);
}

/** NodeUnprepareResources of `claim`; throws on a per-claim error. */
async function unprepare(client: drav1.DRAPluginClient, claim: drav1.Claim): Promise<void> {
  const res = await new Promise<drav1.NodeUnprepareResourcesResponse>((resolve, reject) =>
    client.nodeUnprepareResources({ claims: [claim] }, new Metadata(), callOptions(), (e, r) =>
      e ? reject(e) : resolve(r),
    ),
  );
  const error = res.claims[claim.uid]?.error;
  if (error !== '') throw new Error(`unprepare ${claim.name}: ${error}`);
}

/** One NodePrepareResources + NodeUnprepareResources of `claim`. */
async function pair(client: drav1.DRAPluginClient, claim: drav1.Claim): Promise<void> {
  await prepare(client, claim);
  await unprepare(client, claim);
}

/**
 * Both drivers loaded at once, each with its own IN_FLIGHT workers: the same machine load for both,
 * and each driver always IN_FLIGHT calls deep. (Alternating one call of each per worker, as the
 * echo comparison does, would leave each driver about half as deep, and the faster driver's calls
 * would push more of the other's into its queue.) WARM_UP pairs each first (JIT, HTTP/2 windows).
 */
async function sideBySide(
  a: (worker: number) => Promise<void>,
  b: (worker: number) => Promise<void>,
): Promise<[Stats, Stats]> {
  await Promise.all([load(a, IN_FLIGHT, WARM_UP, []), load(b, IN_FLIGHT, WARM_UP, [])]);
  const samples: [number[], number[]] = [[], []];
  const [ta, tb] = await Promise.all([
    load(a, IN_FLIGHT, PAIRS, samples[0], Infinity),
    load(b, IN_FLIGHT, PAIRS, samples[1], Infinity),
  ]);
  return [stats(samples[0], ta), stats(samples[1], tb)];
}

/** CPU time (user + system) a process has used so far, in ms, from /proc; NaN where there is none. */
function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime: fields 14 and 15 of proc(5)'s stat, the 12th and 13th after the command name.
    return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1000;
  } catch {
    return Number.NaN;
  }
}

/** SIGTERM → the process's exit, in ms, and how it exited. */
async function sigterm(
  pid: number,
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>,
): Promise<{ ms: number; exit: string; at: number }> {
  const at = Date.now();
  const t = performance.now();
  process.kill(pid, 'SIGTERM');
  const { code, signal } = await exited;
  return { ms: performance.now() - t, exit: signal ?? `code ${code}`, at };
}

/**
 * Where Plugboard's SIGTERM → exit went, from its log: to the `stopping` line (the signal reaching
 * the event loop), to the last `stopped` line (the stop itself), and to the exit.
 */
function stopPhases(logFile: string, signalledAt: number, exitMs: number): string {
  const times = (msg: string): number[] =>
    readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes(`"msg":"${msg}"`))
      .map((l) => Date.parse((JSON.parse(l) as { time: string }).time) - signalledAt);
  const stopping = times('stopping')[0];
  const stopped = times('stopped').at(-1);
  if (stopping === undefined || stopped === undefined) return 'no stopping/stopped lines';
  return `signal → "stopping" ${stopping} ms, → "stopped" ${stopped - stopping} ms, → exit ${Math.round(exitMs - stopped)} ms`;
}

async function main(): Promise<void> {
  const loadAtStart = loadavg();
  const dir = mkdtempSync(join(tmpdir(), 'pb-dra-compare-'));
  const node = await simNode(dir, 'bench-node');
  /** What to stop however the run ends (a no-op once a process has exited). */
  const stops: (() => Promise<void>)[] = [];
  try {
    // The test bed builds it with Go from the module proxy the first time (cached after that, as for
    // `npm test`'s third-party suites); without Go it fails saying so.
    console.error(
      'starting dra-example-kubeletplugin (built from the Go module proxy first if not cached: minutes on 2 cores)',
    );
    const example = await thirdParty.draExampleDriver(node, {
      numDevices: 8,
      // client-go's default limit (5 requests/s, burst 10) would time the rate limiter, not the
      // driver: every prepare reads its claim. Plugboard's client has no such limit.
      args: ['--kube-api-qps=10000', '--kube-api-burst=10000'],
    });
    stops.push(() => example.stop());
    const logFile = join(dir, 'plugboard-plugin.log');
    const log = openSync(logFile, 'w');
    const plugboard = spawn(
      process.execPath,
      [
        '--conditions=@plugboard/source',
        '--import',
        'tsx',
        'packages/plugin/src/cli.ts',
        '--config',
        'examples/dra-node.yaml',
        '--node-name',
        node.name,
        '--kubeconfig',
        node.kubeconfig,
        '--plugins-dir',
        node.pluginsDir,
        '--plugins-registry-dir',
        node.pluginsRegistryDir,
        '--cdi-dir',
        node.cdiDir,
      ],
      { cwd: root, stdio: ['ignore', log, log], env: { PATH: process.env.PATH } },
    );
    const plugboardExited = once(plugboard, 'exit').then(([code, signal]) => ({
      code: code as number | null,
      signal: signal as NodeJS.Signals | null,
    }));
    stops.push(async () => {
      if (plugboard.exitCode === null && plugboard.signalCode === null) plugboard.kill('SIGKILL');
      await plugboardExited;
    });
    const [pb, ex] = await Promise.all([
      kubeletClient(node, PLUGBOARD),
      example.registered().then(() => kubeletClient(node, example.driverName)),
    ]);
    const devices = Array.from({ length: IN_FLIGHT }, (_, i) => `gpu-${i}`);
    const pbClaims = await Promise.all(devices.map((d) => allocatedClaim(node, PLUGBOARD, d, 'plugboard')));
    const exClaims = await Promise.all(
      devices.map((d) => allocatedClaim(node, example.driverName, d, 'example')),
    );
    const cpuBefore = [processCpuMs(plugboard.pid!), processCpuMs(example.pid), process.cpuUsage()] as const;
    const [p, e] = await sideBySide(
      (w) => pair(pb, pbClaims[w]!),
      (w) => pair(ex, exClaims[w]!),
    );
    const cpu = {
      plugboard: processCpuMs(plugboard.pid!) - cpuBefore[0],
      example: processCpuMs(example.pid) - cpuBefore[1],
      bench: (({ user, system }) => (user + system) / 1000)(process.cpuUsage(cpuBefore[2])),
    };
    const loadAfterPairs = loadavg()[0]!;
    // SIGTERM with every claim prepared, as when a driver is upgraded under running pods.
    await Promise.all([...pbClaims.map((c) => prepare(pb, c)), ...exClaims.map((c) => prepare(ex, c))]);
    pb.close();
    ex.close();
    const pbExit = await sigterm(plugboard.pid!, plugboardExited);
    const exExit = await sigterm(example.pid, example.exited);

    const r = (s: Stats, q: 'p50' | 'p99'): string => s[q].toFixed(2);
    console.log(
      `\n# DRA drivers, same run — ${new Date().toISOString()}, Node ${process.version}, ${cpus().length} CPUs, load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')} at start (1/5/15 min), ${loadAfterPairs.toFixed(2)} after the pairs\n`,
    );
    console.log(
      `| ${IN_FLIGHT} in flight, ${p.n} + ${e.n} pairs | p50 ms | p99 ms | pairs/s | SIGTERM → exit ms |\n| --- | --- | --- | --- | --- |`,
    );
    console.log(
      `| Plugboard (plugboard-plugin, examples/dra-node.yaml) | ${r(p, 'p50')} | ${r(p, 'p99')} | ${Math.round(p.perSecond)} | ${pbExit.ms.toFixed(0)} (${pbExit.exit}) |`,
    );
    console.log(
      `| dra-example-kubeletplugin | ${r(e, 'p50')} | ${r(e, 'p99')} | ${Math.round(e.perSecond)} | ${exExit.ms.toFixed(0)} (${exExit.exit}) |`,
    );
    const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}×`;
    console.log(
      `| ratio Plugboard / example | ${ratio(p.p50, e.p50)} | ${ratio(p.p99, e.p99)} | ${ratio(p.perSecond, e.perSecond)} | |`,
    );
    console.log(
      `\nCPU time over the warm-up and the measured pairs: Plugboard ${cpu.plugboard.toFixed(0)} ms, example driver ${cpu.example.toFixed(0)} ms, this process (kubelet-sim, its API server, the client) ${cpu.bench.toFixed(0)} ms`,
    );
    console.log(`Plugboard's SIGTERM → exit: ${stopPhases(logFile, pbExit.at, pbExit.ms)}`);
    const met = (ok: boolean): string => (ok ? 'met' : 'MISSED');
    console.log(
      `\nPlugboard / example driver: p50 ${ratio(p.p50, e.p50)}, p99 ${ratio(p.p99, e.p99)} (target ≤ 1.2×: ${met(Math.max(p.p50 / e.p50, p.p99 / e.p99) <= 1.2)}); SIGTERM → exit ${pbExit.ms.toFixed(0)} ms (target ≤ 1 s: ${met(pbExit.ms <= 1000)}), example driver ${exExit.ms.toFixed(0)} ms`,
    );
  } finally {
    await Promise.all(stops.map((stop) => stop()));
    await node.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
