// npm run bench -w @plugboard/node-gateway [-- --source] [--devices N] [--pods N]
// At 1,024 devices and 250 pods (kubelet-sim + real plugins, the gateway as its own process via the
// CLI): fault → patch delivered to a WebSocket client (p50/p99), one-device patch size vs snapshot
// size, gateway RSS; and fan-out of one patch payload to 500 clients through the gateway's StreamHub
// beside a bare `ws` broadcast of the same payload, in the same run (ratio).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket, WebSocketServer } from 'ws';
import { StreamHub } from '../src/http/stream.js';
import { chartGatewayEnv, connectStream, simGatewayArgs, waitFor } from '../test/helpers.js';
import type { NodeSnapshot } from '@plugboard/api';

const GPU = 'plugboard.example/gpu';
/** `--devices N` / `--pods N` change the scale (the targets are stated for the defaults). */
function intArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  if (i < 0) return fallback;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} needs a positive integer`);
  return n;
}
const DEVICES = intArg('--devices', 1024);
const PODS = intArg('--pods', 250);
const FAULTS = 500;
const CLIENTS = 500;
const MESSAGES = 200;

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
/** RSS of a process and how much of it is anonymous (heap, stacks) vs mapped files (the node binary). */
function rssOf(pid: number): { rss: number; anon: number } {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)![1]) * 1024;
  return { rss: kb('Rss'), anon: kb('Anonymous') };
}
const mb = (b: number) => (b / 1048576).toFixed(1);
/** Bucket upper bounds at which a Prometheus histogram reaches the 50th and 99th percentile. */
function histogram(text: string, name: string): { p50: number; p99: number; count: number } {
  const buckets = [...text.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"[^}]*\\} (\\d+)$`, 'gm'))].map(
    (m) => ({
      le: m[1] === '+Inf' ? Infinity : Number(m[1]),
      n: Number(m[2]),
    }),
  );
  const count = buckets.at(-1)?.n ?? 0;
  const at = (q: number) => buckets.find((b) => b.n >= q * count)?.le ?? NaN;
  return { p50: at(0.5), p99: at(0.99), count };
}

/** utime + stime of a process, in seconds (clock ticks of 1/100 s on Linux). */
const cpuOf = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
const metric = (text: string, name: string) =>
  Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);

// By default the gateway runs as the container image runs it: the bundle (scripts/bundle.mjs, built
// from the current source into the run's temp dir) under the chart's default NODE_OPTIONS
// (`gateway.nodeOptions` in deploy/helm/plugboard/values.yaml). `--source` runs the TypeScript
// source under tsx instead (readable CPU profiles; more memory). The mode is printed with the results.
const SOURCE = process.argv.includes('--source');

function gatewayCommand(dir: string): { args: string[]; env: NodeJS.ProcessEnv; label: string } {
  if (SOURCE) {
    return {
      args: [
        '--conditions=@plugboard/source',
        '--import',
        'tsx',
        fileURLToPath(new URL('../src/cli.ts', import.meta.url)),
      ],
      env: process.env,
      label: 'the TypeScript source under tsx (--source)',
    };
  }
  const outdir = join(dir, 'bundle');
  const built = spawnSync(
    process.execPath,
    [fileURLToPath(new URL('../scripts/bundle.mjs', import.meta.url)), '--outdir', outdir],
    { encoding: 'utf8' },
  );
  if (built.status !== 0) throw new Error(`bundling the gateway failed:\n${built.stderr}`);
  const env = chartGatewayEnv();
  const shown = Object.entries(env)
    .map(([k, v]) => `${k}="${v}"`)
    .join(' ');
  return {
    args: [join(outdir, 'plugboard-gateway.mjs')],
    env: { ...process.env, ...env },
    label: `the bundle as the image runs it, with the chart's default ${shown}`,
  };
}

/** A port nothing listens on right now (the kernel picks it; the gateway binds it right after). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

interface SimProcess {
  url: string;
  kubeconfigPath: string;
  podResourcesSocket: string;
  devicePluginDir: string;
  admit(pod: object): Promise<void>;
  stop(): Promise<void>;
}

/**
 * kubelet-sim in its own process, as a kubelet is: its CLI (packages/kubelet-sim), pods admitted
 * through its control API (`POST /control/v1/pods`). Logs at warn: no per-event log lines.
 */
async function startSimProcess(dir: string): Promise<SimProcess> {
  const devicePluginDir = join(dir, 'dp');
  const stateDir = join(dir, 'kubelet');
  const url = `http://127.0.0.1:${await freePort()}`;
  const child = spawn(
    process.execPath,
    [
      '--conditions=@plugboard/source',
      '--import',
      'tsx',
      fileURLToPath(new URL('../../../packages/kubelet-sim/src/cli.ts', import.meta.url)),
      ...['--device-plugin-dir', devicePluginDir, '--state-dir', stateDir, '--node-name', 'bench-node'],
      ...['--listen', url.slice('http://'.length), '--max-pods', String(PODS + 10)],
      ...['--pod-resources-rate-limit', 'off', '--log-level', 'warn'],
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`kubelet-sim exited with ${code}`))),
  );
  exited.catch(() => undefined);
  await Promise.race([
    waitFor(
      'kubelet-sim ready',
      async () => (await fetch(`${url}/api/v1/nodes`).catch(() => null))?.ok,
      30_000,
    ),
    exited,
  ]);
  return {
    url,
    devicePluginDir,
    kubeconfigPath: join(stateDir, 'kubeconfig'),
    podResourcesSocket: join(stateDir, 'pod-resources', 'kubelet.sock'),
    async admit(pod) {
      const res = await fetch(`${url}/control/v1/pods`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(pod),
      });
      if (res.status !== 201) throw new Error(`admitting a pod: HTTP ${res.status} ${await res.text()}`);
      await res.body?.cancel();
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

async function gatewayScenario() {
  const dir = mkdtempSync(join(tmpdir(), 'pb-gw-bench-'));
  const sim = await startSimProcess(dir);
  const cfg = join(dir, 'gateway.yaml');
  writeFileSync(
    cfg,
    `resources:\n  - name: ${GPU}\n    simulated: { count: ${DEVICES}, numaNodes: [0, 1, 2, 3] }\n` +
      `gateway:\n  faults: { enabled: true }\n  logLevel: warn\n` +
      // 2 mutations per cycle, back to back: above the default 20/s limit, which is not measured here.
      `  http: { mutationRateLimit: null }\n`,
  );
  const port = await freePort();
  const command = gatewayCommand(dir);
  // PLUGBOARD_BENCH_CPU_PROF=DIR writes a V8 CPU profile of the gateway process there;
  // PLUGBOARD_BENCH_HEAP_SNAPSHOT=DIR a heap snapshot of it at scale (after the fault cycles).
  const prof = process.env.PLUGBOARD_BENCH_CPU_PROF;
  const heapDir = process.env.PLUGBOARD_BENCH_HEAP_SNAPSHOT;
  const child = spawn(
    process.execPath,
    [
      ...(prof ? ['--cpu-prof', '--cpu-prof-dir', prof] : []),
      ...(heapDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${heapDir}`] : []),
      ...command.args,
      ...simGatewayArgs(sim, {
        config: cfg,
        nodeName: 'bench-node',
        listen: `127.0.0.1:${port}`,
        stateDir: join(dir, 'gw'),
      }),
    ],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: command.env,
    },
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code) => reject(new Error(`the gateway exited with ${code} before it was ready`))),
    );
    exited.catch(() => undefined);
    await Promise.race([
      waitFor(
        'gateway ready',
        async () => (await fetch(`${url}/readyz`).catch(() => null))?.status === 200,
        60_000,
      ),
      exited,
    ]);
    await new Promise((r) => setTimeout(r, 1000));
    const rssIdle = rssOf(child.pid!);
    for (let i = 0; i < PODS; i++) {
      await sim.admit({
        metadata: { name: `pod-${i}`, namespace: `ns-${i % 10}` },
        spec: {
          restartPolicy: 'Always',
          containers: [{ name: 'main', resources: { limits: { [GPU]: 1 + (i % 3) } } }],
        },
      });
    }
    const node = await waitFor(
      'all pods in the snapshot',
      async () => {
        const s = (await (await fetch(`${url}/api/v1/node`)).json()) as NodeSnapshot;
        return Object.keys(s.pods).length === PODS && (s.resources[GPU]?.kubelet.allocated ?? 0) > 0
          ? s
          : null;
      },
      60_000,
      250, // a full snapshot is ~0.8 MB: ask a few times a second, as a REST client would
    );
    const client = await connectStream(`${url.replace('http', 'ws')}/api/v1/stream`);
    await client.next((m) => m.type === 'snapshot', 'snapshot', 30_000);
    const snapshotBytes = Buffer.byteLength(JSON.stringify({ type: 'snapshot', seq: 1, node }));
    const free = Object.values(node.devices)
      .filter((d) => !d.allocation)
      .map((d) => d.id);
    const latencies: number[] = [];
    const gatewayPart: number[] = [];
    let patchBytes = 0;
    const cpu0 = cpuOf(child.pid!);
    const load = (await import('node:os')).loadavg()[0]!;
    for (let i = 0; i < FAULTS; i++) {
      const id = free[i % free.length];
      const path = `/devices/${GPU.replace(/\//g, '~1')}~1${id}/health`;
      const t0 = performance.now();
      const wallT0 = Date.now();
      const res = await fetch(`${url}/api/v1/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ resource: GPU, deviceId: id, reason: 'bench' }),
      });
      const { id: faultId } = (await res.json()) as { id: string };
      const patch = await client.next(
        (m) =>
          m.type === 'patch' && m.ops.some((o) => o.path === path && 'value' in o && o.value === 'Unhealthy'),
        'fault patch',
      );
      // The client's receive time (its message event), not when this loop got round to it.
      const arrivedAt = client.arrivals[client.messages.indexOf(patch)]!;
      latencies.push(arrivedAt - t0);
      // The patch's /updatedAt is the gateway's clock when it built the patch: split the latency into
      // request → patch built (gateway) and patch built → received (send + the client's side).
      const builtAt = patch.type === 'patch' ? patch.ops.find((o) => o.path === '/updatedAt') : undefined;
      if (builtAt && 'value' in builtAt) gatewayPart.push(Date.parse(builtAt.value as string) - wallT0);
      if (i === 0) patchBytes = Buffer.byteLength(JSON.stringify(patch));
      await fetch(`${url}/api/v1/faults/${faultId}`, { method: 'DELETE' });
      await client.next(
        (m) =>
          m.type === 'patch' && m.ops.some((o) => o.path === path && 'value' in o && o.value === 'Healthy'),
        'heal patch',
      );
    }
    const cpuPerCycle = (cpuOf(child.pid!) - cpu0) / FAULTS;
    const updates = histogram(
      await (await fetch(`${url}/metrics`)).text(),
      'plugboard_gateway_model_update_duration_seconds',
    );
    // Let the PodResources poll and event ring settle, then measure the gateway process.
    await new Promise((r) => setTimeout(r, 1500));
    const rss = rssOf(child.pid!);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const heapUsed = metric(metrics, 'nodejs_heap_size_used_bytes');
    if (heapDir) await heapSnapshot(child.pid!, heapDir);
    await client.close();
    return {
      label: command.label,
      env: command.env,
      latencies,
      gatewayPart,
      patchBytes,
      snapshotBytes,
      rss,
      rssIdle,
      heapUsed,
      cpuPerCycle,
      updates,
      load,
      devices: Object.keys(node.devices).length,
      pods: Object.keys(node.pods).length,
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Signals the gateway to write a heap snapshot into `dir` and waits until the file is complete. */
async function heapSnapshot(pid: number, dir: string): Promise<void> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  let last = -1;
  for (const deadline = Date.now() + 120_000; Date.now() < deadline;) {
    await new Promise((r) => setTimeout(r, 500));
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (!file) continue;
    // V8 writes the snapshot in chunks: it is complete once the size stops changing.
    const size = statSync(join(dir, file)).size;
    if (size > 0 && size === last) return;
    last = size;
  }
  throw new Error(`no complete heap snapshot in ${dir} after 120 s`);
}

/** Connects CLIENTS clients and resolves when each has received `expected` messages. */
async function fanOut(url: string, broadcast: (i: number) => void, expected: number) {
  const sockets: WebSocket[] = [];
  let done = 0;
  let resolveAll!: () => void;
  const all = new Promise<void>((r) => (resolveAll = r));
  for (let i = 0; i < CLIENTS; i++) {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    let n = 0;
    ws.on('message', () => {
      if (++n === expected + 1 && ++done === CLIENTS) resolveAll(); // +1: the initial message
    });
    await new Promise((r) => ws.once('open', r));
    sockets.push(ws);
  }
  await new Promise((r) => setTimeout(r, 200));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < expected; i++) broadcast(i);
  await all;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  for (const ws of sockets) ws.terminate();
  return { msgsPerSec: (expected * CLIENTS) / seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, seconds };
}

async function fanOutScenario(patch: unknown) {
  // Gateway path: StreamHub, one serialisation per broadcast, bounded per-client queues.
  const doc = { n: 0 };
  const hub = new StreamHub(
    { heartbeatMs: 60_000, maxQueueBytes: 8 << 20, historySize: 1024, maxClients: 10_000 },
    { full: doc, summary: {} },
  );
  const s1 = createServer();
  s1.on('upgrade', (req, sock, head) => hub.accept(req, sock, head, 'full', null));
  await new Promise<void>((r) => s1.listen(0, '127.0.0.1', r));
  const ops = (patch as { ops: never[] }).ops;
  const hubResult = await fanOut(
    `ws://127.0.0.1:${(s1.address() as AddressInfo).port}`,
    () => hub.channels.full.publish(doc, ops),
    MESSAGES,
  );
  await hub.closeAll(100);
  s1.closeAllConnections();
  await new Promise((r) => s1.close(r));

  // Baseline: a bare ws server sending the same payload string to every client.
  const s2 = createServer();
  const wss = new WebSocketServer({ server: s2, perMessageDeflate: false });
  wss.on('connection', (ws) => ws.send('{"type":"snapshot"}'));
  await new Promise<void>((r) => s2.listen(0, '127.0.0.1', r));
  let seq = 0;
  const bare = await fanOut(
    `ws://127.0.0.1:${(s2.address() as AddressInfo).port}`,
    () => {
      const msg = JSON.stringify({ type: 'patch', seq: ++seq, ops });
      for (const ws of wss.clients) ws.send(msg);
    },
    MESSAGES,
  );
  for (const ws of wss.clients) ws.terminate();
  await new Promise((r) => wss.close(r));
  await new Promise((r) => s2.close(r));
  return { hub: hubResult, bare };
}

/** First line a child process writes on stdout. */
function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    child.once('exit', (code) => reject(new Error(`baseline process exited with ${code}`)));
  });
}

/**
 * Same-run baselines (bench/bare-process.mjs, same node flags and environment as the gateway): the
 * RSS of an idle node process, and POST → WebSocket message through a bare http + ws server.
 */
async function baselineScenario(env: NodeJS.ProcessEnv) {
  const script = fileURLToPath(new URL('./bare-process.mjs', import.meta.url));
  const start = async (mode: string) => {
    const child = spawn(process.execPath, [script, mode], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    return { child, line: await firstLine(child) };
  };
  const stop = async (child: ChildProcess) => {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
  };
  const idle = await start('idle');
  await new Promise((r) => setTimeout(r, 1000));
  const idleRss = rssOf(idle.child.pid!);
  await stop(idle.child);

  const echo = await start('echo');
  const url = echo.line;
  const client = await connectStream(`${url.replace('http', 'ws')}/`);
  const latencies: number[] = [];
  try {
    for (let i = 0; i < FAULTS; i++) {
      const t0 = performance.now();
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'patch', seq: i, ops: [] }),
      });
      await res.json();
      const m = await client.next((x) => x.type === 'patch' && x.seq === i, 'echo');
      latencies.push(client.arrivals[client.messages.indexOf(m)]! - t0);
    }
  } finally {
    await client.close();
    await stop(echo.child);
  }
  return { idleRss, latencies };
}

const g = await gatewayScenario();
const base = await baselineScenario(g.env);
const samplePatch = {
  type: 'patch',
  seq: 1,
  ops: [
    { op: 'replace', path: `/devices/${GPU.replace(/\//g, '~1')}~1gpu-3/health`, value: 'Unhealthy' },
    { op: 'replace', path: '/updatedAt', value: new Date().toISOString() },
  ],
};
// The machine is shared: alternate the two servers over 3 rounds and keep each one's median.
const rounds = [];
for (let i = 0; i < 3; i++) rounds.push(await fanOutScenario(samplePatch));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const f = {
  hub: {
    msgsPerSec: median(rounds.map((r) => r.hub.msgsPerSec)),
    cpuSeconds: median(rounds.map((r) => r.hub.cpuSeconds)),
  },
  bare: {
    msgsPerSec: median(rounds.map((r) => r.bare.msgsPerSec)),
    cpuSeconds: median(rounds.map((r) => r.bare.cpuSeconds)),
  },
};
const ratios = rounds.map((r) => (r.hub.msgsPerSec / r.bare.msgsPerSec).toFixed(2)).join(', ');
const lines = [
  `scale: ${g.devices} devices, ${g.pods} pods (kubelet-sim + real plugin, gateway as a separate process running ${g.label})`,
  `fault → patch at client: p50 ${pct(g.latencies, 50).toFixed(2)} ms, p99 ${pct(g.latencies, 99).toFixed(2)} ms (n=${g.latencies.length}; target p99 ≤ 50 ms)`,
  `  of which request → patch built in the gateway (ms-resolution wall clock): p50 ${pct(g.gatewayPart, 50)} ms, p99 ${pct(g.gatewayPart, 99)} ms`,
  `  baseline, a bare http POST → ws message server in the same run: p50 ${pct(base.latencies, 50).toFixed(2)} ms, p99 ${pct(base.latencies, 99).toFixed(2)} ms (gateway p50 ${(pct(g.latencies, 50) / pct(base.latencies, 50)).toFixed(1)}×, p99 ${(pct(g.latencies, 99) / pct(base.latencies, 99)).toFixed(1)}× the baseline)`,
  `one-device fault patch: ${g.patchBytes} B; full snapshot: ${g.snapshotBytes} B (${(g.snapshotBytes / g.patchBytes).toFixed(0)}× larger)`,
  `gateway model update (rebuild + diff + broadcast), all ${g.updates.count} updates of the run: p50 ≤ ${g.updates.p50 * 1000} ms, p99 ≤ ${g.updates.p99 * 1000} ms (histogram bucket bounds)`,
  `gateway CPU per fault cycle (inject + heal, incl. PodResources polls and API-server updates it causes): ${(g.cpuPerCycle * 1000).toFixed(1)} ms; 1-min load average during the run: ${g.load.toFixed(1)} on ${(await import('node:os')).cpus().length} cores`,
  `gateway RSS: ${mb(g.rssIdle.rss)} MB when ready (no pods), ${mb(g.rss.rss)} MB at scale (target ≤ 120 MB; ${mb(g.rss.anon)} MB anonymous, ${mb(g.rss.rss - g.rss.anon)} MB mapped files such as the node binary), V8 heap used ${mb(g.heapUsed)} MB`,
  `  baseline, an idle node process with the same flags: ${mb(base.idleRss.rss)} MB RSS (gateway at scale ${(g.rss.rss / base.idleRss.rss).toFixed(1)}× it, ${mb(g.rss.rss - base.idleRss.rss)} MB above it)`,
  `fan-out ${CLIENTS} clients × ${MESSAGES} msgs (median of 3): gateway hub ${f.hub.msgsPerSec.toFixed(0)} msg/s (${f.hub.cpuSeconds.toFixed(2)} s CPU), bare ws ${f.bare.msgsPerSec.toFixed(0)} msg/s (${f.bare.cpuSeconds.toFixed(2)} s CPU)`,
  `fan-out ratio gateway/bare (medians): ${(f.hub.msgsPerSec / f.bare.msgsPerSec).toFixed(2)}; per round ${ratios} (target ≥ 0.7)`,
];
console.log(lines.join('\n'));
