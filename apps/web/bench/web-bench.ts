// `npm run bench -w @plugboard/web`: node page first render at 1,024 devices / 250 pods (real
// kubelet-sim + gateway), overview first paint with 200 gateways (simulated in one process), and
// the web server's RSS; each against a baseline measured in the same run. Writes
// docs/benchmarks/web.md.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pino } from 'pino';
import { chromium, type Browser } from '@playwright/test';
import { startKubeletSim, type KubeletSim } from '@plugboard/kubelet-sim';
import { parseGatewayConfig, startGateway, type Gateway } from '@plugboard/node-gateway';
import { REPO_ROOT, startWebServer, stopPid } from '../e2e/processes';
import { CHROMIUM_ARGS, CHROMIUM_EXECUTABLE } from '../e2e/chromium';
import { startFakeGateways } from './fake-gateways';

const RUNS = Number(process.env.PLUGBOARD_BENCH_RUNS ?? 5);
const GPU = 'plugboard.example/gpu';
const logger = pino({ level: 'silent' });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const fmt = (ms: number) => `${ms.toFixed(0)} ms`;

function rssMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

async function waitFor<T>(
  what: string,
  fn: () => Promise<T | null | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface SimNode {
  sim: KubeletSim;
  gw: Gateway;
}

async function startNode(
  dir: string,
  name: string,
  devices: number,
  numaNodes: number,
  pods: number,
  perPod: number,
): Promise<SimNode> {
  const base = join(dir, name);
  // 250 pods exceed the kubelet's default of 110 per node; kubelet-sim's node shape honours maxPods
  // (like the kubelet's --max-pods) although its options type does not list it yet.
  const shapeExtras = { maxPods: Math.max(110, pods + 10) };
  const sim = await startKubeletSim({
    ...shapeExtras,
    devicePluginDir: join(base, 'dp'),
    stateDir: join(base, 'kubelet'),
    nodeName: name,
    listen: '127.0.0.1:0',
    numaNodes,
    cpus: numaNodes * 16,
    podResourcesRateLimit: false,
    logger,
  });
  const gw = await startGateway(
    parseGatewayConfig({
      resources: [
        {
          name: GPU,
          simulated: { count: devices, numaNodes: Array.from({ length: numaNodes }, (_, i) => i) },
        },
      ],
      gateway: {
        nodeName: name,
        listen: '127.0.0.1:0',
        devicePluginDir: sim.devicePluginDir,
        stateDir: null,
        podResources: { socket: sim.podResourcesSocket, pollIntervalMs: 1000 },
        kube: { mode: 'kubeconfig', kubeconfig: sim.kubeconfigPath },
        faults: { enabled: true },
      },
    }),
    { logger },
  );
  await waitFor(`${name} ready`, async () => (await fetch(`${gw.url}/readyz`)).status === 200);
  for (let i = 0; i < pods; i++) {
    await sim.admitPod({
      metadata: { name: `pod-${i}`, namespace: i % 2 ? 'batch' : 'ml' },
      spec: {
        restartPolicy: 'Always',
        containers: [{ name: 'main', resources: { limits: { [GPU]: perPod } } }],
      },
    });
  }
  await waitFor(`${name} shows ${pods} pods`, async () => {
    const s = (await (await fetch(`${gw.url}/api/v1/node`)).json()) as { pods: Record<string, unknown> };
    return Object.keys(s.pods).length === pods;
  });
  return { sim, gw };
}

async function newPage(browser: Browser) {
  const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  return { ctx, page: await ctx.newPage() };
}

/** ms from the first data arrival to the first full render (after paint), read from User Timing marks. */
async function nodeFirstRender(
  browser: Browser,
  url: string,
  tiles: number,
): Promise<{ afterData: number; fromNavigation: number }> {
  const { ctx, page } = await newPage(browser);
  await page.goto(url);
  await page.waitForFunction(`performance.getEntriesByName('plugboard:node-rendered').length > 0`, null, {
    timeout: 30_000,
  });
  const count = await page.getByRole('switch').count();
  if (count !== tiles) throw new Error(`expected ${tiles} device switches, saw ${count}`);
  // A string, not a function: tsx's keepNames helpers do not exist in the page.
  const m = await page.evaluate<{ data: number; rendered: number }>(`({
    data: performance.getEntriesByName('plugboard:node-data')[0].startTime,
    rendered: performance.getEntriesByName('plugboard:node-rendered')[0].startTime,
  })`);
  await ctx.close();
  return { afterData: m.rendered - m.data, fromNavigation: m.rendered };
}

async function overviewFirstPaint(
  browser: Browser,
  url: string,
  nodes: number,
): Promise<{ rendered: number; fcp: number }> {
  const { ctx, page } = await newPage(browser);
  await page.goto(url);
  await page.waitForFunction(`performance.getEntriesByName('plugboard:overview-rendered').length > 0`, null, {
    timeout: 30_000,
  });
  const cards = await page.getByRole('article').count();
  if (cards !== nodes) throw new Error(`expected ${nodes} node cards, saw ${cards}`);
  const m = await page.evaluate<{ rendered: number; fcp: number }>(`({
    rendered: performance.getEntriesByName('plugboard:overview-rendered')[0].startTime,
    fcp: (performance.getEntriesByName('first-contentful-paint')[0] || { startTime: NaN }).startTime,
  })`);
  await ctx.close();
  return m;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pb-web-bench-'));
  const browser = await chromium.launch({
    executablePath: CHROMIUM_EXECUTABLE,
    args: CHROMIUM_ARGS,
  });
  const nodes: SimNode[] = [];
  const pids: number[] = [];
  const fakes = await startFakeGateways(200);
  try {
    console.log(
      '[bench] starting kubelet-sim + gateway: big-node (1,024 devices, 250 pods) and small-node (16 devices, 4 pods)…',
    );
    const t0 = Date.now();
    nodes.push(await startNode(dir, 'big-node', 1024, 4, 250, 2));
    nodes.push(await startNode(dir, 'small-node', 16, 2, 4, 2));
    console.log(`[bench] nodes ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    const web = await startWebServer(nodes.map((n) => `${n.sim.nodeName}=${n.gw.url}`).join(','));
    pids.push(web.child.pid!);
    const base = web.value;
    // Warm-up: the first request compiles nothing in production, but loads route chunks.
    await nodeFirstRender(browser, `${base}/nodes/small-node`, 16);

    const big: number[] = [];
    const bigNav: number[] = [];
    const small: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const b = await nodeFirstRender(browser, `${base}/nodes/big-node`, 1024);
      big.push(b.afterData);
      bigNav.push(b.fromNavigation);
      small.push((await nodeFirstRender(browser, `${base}/nodes/small-node`, 16)).afterData);
    }
    const smallOverview = await overviewFirstPaint(browser, `${base}/`, 2);
    await stopPid(web.child.pid);

    console.log('[bench] overview with 200 simulated gateways…');
    const web200 = await startWebServer(fakes.gateways.map((g) => `${g.name}=${g.url}`).join(','));
    pids.push(web200.child.pid!);
    const idle = rssMb(web200.child.pid!);
    const cold = await overviewFirstPaint(browser, `${web200.value}/`, 200);
    const warm: number[] = [];
    const warmFcp: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await overviewFirstPaint(browser, `${web200.value}/`, 200);
      warm.push(r.rendered);
      warmFcp.push(r.fcp);
    }
    const loaded = rssMb(web200.child.pid!);
    await stopPid(web200.child.pid);

    const rows = {
      nodeBig: median(big),
      nodeBigNav: median(bigNav),
      nodeSmall: median(small),
      overviewCold: cold.rendered,
      overviewWarm: median(warm),
      overviewFcp: median(warmFcp),
      overviewSmall: smallOverview.rendered,
      rssIdle: idle.rss,
      rssLoaded: loaded.rss,
      rssPeak: loaded.peak,
    };
    const md = `# Web dashboard benchmark

Generated by \`npm run bench -w @plugboard/web\` on ${new Date().toISOString().slice(0, 10)} — ${cpus().length} cores, Node ${process.version},
Debian Chromium (headless), production build (\`next build\` + \`apps/web/server.ts\`). Medians of ${RUNS} runs.
Load average when the run finished: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')} (1 / 5 / 15 min; the machine is shared,
so compare the ratios against the same-run baselines rather than absolute times across runs).

| measurement | result | baseline (same run) | ratio | target |
| --- | --- | --- | --- | --- |
| Node page first render after data arrives, 1,024 devices / 250 pods (real kubelet-sim + gateway) | ${fmt(rows.nodeBig)} | 16 devices / 4 pods: ${fmt(rows.nodeSmall)} | ${(rows.nodeBig / rows.nodeSmall).toFixed(1)}× | ≤ 1 s |
| Node page, navigation start → full render, 1,024 devices | ${fmt(rows.nodeBigNav)} | — | — | — |
| Overview first paint with 200 gateways, cold (server opens 200 summary streams) | ${fmt(rows.overviewCold)} | 2 gateways: ${fmt(rows.overviewSmall)} | ${(rows.overviewCold / rows.overviewSmall).toFixed(1)}× | ≤ 2 s |
| Overview first paint with 200 gateways, warm | ${fmt(rows.overviewWarm)} (FCP ${fmt(rows.overviewFcp)}) | 2 gateways: ${fmt(rows.overviewSmall)} | ${(rows.overviewWarm / rows.overviewSmall).toFixed(1)}× | ≤ 2 s |
| Web server RSS with 200 gateways streamed | ${rows.rssLoaded.toFixed(0)} MB (peak ${rows.rssPeak.toFixed(0)} MB) | idle after start: ${rows.rssIdle.toFixed(0)} MB | ${(rows.rssLoaded / rows.rssIdle).toFixed(2)}× | ≤ 300 MB |

How it is measured:
- *First render after data arrives*: User Timing marks in the app — \`plugboard:node-data\` when the
  snapshot reaches the browser, \`plugboard:node-rendered\` one frame after React committed the page
  (NUMA map with every device tile, pods table, events). The run checks that all 1,024 fault
  switches are in the DOM.
- *Overview first paint*: navigation start → \`plugboard:overview-rendered\` (one frame after the
  first commit with data); the run checks that 200 node cards are rendered. The 200 gateways are
  simulated in the benchmark process (each its own HTTP + WebSocket port speaking the summary
  contract); the web server holds one upstream WebSocket per gateway and one browser socket.
- *RSS*: \`VmRSS\`/\`VmHWM\` of the web server process from /proc after the overview runs.
`;
    const out = join(REPO_ROOT, 'docs', 'benchmarks', 'web.md');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, md);
    console.log(md);
  } finally {
    for (const pid of pids) await stopPid(pid);
    await browser.close();
    await fakes.stop();
    for (const n of nodes.reverse()) {
      await n.gw.stop().catch(() => {});
      await n.sim.stop().catch(() => {});
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
