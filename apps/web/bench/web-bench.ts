// `npm run bench -w @plugboard/web`: node page first render at 1,024 devices / 250 pods (real
// kubelet-sim + gateway), the node page with 1,024 DRA + 1,024 device-plugin devices (a contract
// snapshot served by a fake gateway, beside the same fake serving the device-plugin half alone), a
// fault on a DRA device → the browser's switch beside the same on a device-plugin device (one real
// node running both, interleaved), overview first paint with 200 gateways (simulated in one
// process), and the web server's RSS; each against a baseline measured in the same run. Writes
// docs/benchmarks/web.md.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pino } from 'pino';
import { chromium, type Browser } from '@playwright/test';
import {
  gatewayDocument,
  gatewayProcess,
  simNode,
  type GatewayProcess,
  type SimNode,
  waitFor,
} from '@plugboard/testbed';
import type { NodeSnapshot } from '@plugboard/api';
import { REPO_ROOT, startWebServer, stopPid } from '../e2e/processes';
import { CHROMIUM_ARGS, CHROMIUM_EXECUTABLE } from '../e2e/chromium';
import { startFakeGateways, startFakeNodeGateway } from './fake-gateways';
import { makeSnapshot } from '../test/make-snapshot';
import { withDra } from '../test/make-dra';

const RUNS = Number(process.env.PLUGBOARD_BENCH_RUNS ?? 5);
const GPU = 'plugboard.example/gpu';
const DRA_DRIVER = 'gpu.plugboard.example';
const FAULT_ROUNDS = Number(process.env.PLUGBOARD_BENCH_FAULT_ROUNDS ?? 50);
const logger = pino({ level: 'silent' });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const fmt = (ms: number) => `${ms.toFixed(0)} ms`;
/** Nearest-rank percentile. */
const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};

function rssMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** A kubelet-sim node and its gateway (the plugboard-gateway binary, a process of its own). */
interface BenchNode {
  node: SimNode;
  gw: GatewayProcess;
}

async function startNode(
  dir: string,
  name: string,
  devices: number,
  numaNodes: number,
  pods: number,
  perPod: number,
): Promise<BenchNode> {
  const node = await simNode(dir, name, {
    sim: {
      // 250 pods exceed the kubelet's default of 110 per node (kubelet-sim honours maxPods, like
      // the kubelet's --max-pods).
      maxPods: Math.max(110, pods + 10),
      listen: '127.0.0.1:0',
      numaNodes,
      cpus: numaNodes * 16,
      podResourcesRateLimit: false,
      logger,
    },
  });
  const sim = node.sim;
  const gw = await gatewayProcess(
    node,
    gatewayDocument(node, {
      resources: [
        {
          name: GPU,
          simulated: { count: devices, numaNodes: Array.from({ length: numaNodes }, (_, i) => i) },
        },
      ],
      gateway: { podResources: { pollIntervalMs: 1000 } },
    }),
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
  return { node, gw };
}

/**
 * One node with both APIs, like the demo's dra-node: 8 GPUs from a device plugin and 8 from a DRA
 * driver (`xpu-*`) run by the same gateway on one kubelet-sim.
 */
async function startMixedNode(dir: string, name: string): Promise<BenchNode> {
  const node = await simNode(dir, name, {
    sim: { listen: '127.0.0.1:0', numaNodes: 2, cpus: 32, podResourcesRateLimit: false, logger },
  });
  const gw = await gatewayProcess(
    node,
    gatewayDocument(node, {
      resources: [{ name: GPU, simulated: { count: 8, numaNodes: [0, 1] } }],
      dra: [{ driver: DRA_DRIVER, simulated: { count: 8, numaNodes: [0, 1], idPrefix: 'xpu' } }],
      gateway: { podResources: { pollIntervalMs: 1000 } },
    }),
  );
  await waitFor(`${name} ready, its DRA devices published and their health streamed`, async () => {
    if ((await fetch(`${gw.url}/readyz`)).status !== 200) return false;
    const s = (await (await fetch(`${gw.url}/api/v1/node`)).json()) as NodeSnapshot;
    const devices = Object.values(s.dra?.devices ?? {});
    return devices.length === 8 && devices.every((d) => d.published && d.kubeletHealth === 'Healthy');
  });
  return { node, gw };
}

/**
 * Fault → browser: ms from sending POST (inject) or DELETE (clear) through the web server to the
 * page's fault switch reading "fault on" (the kubelet was told Unhealthy) or "fault off", for a
 * device-plugin device and a DRA device on one node, interleaved so both see the same load. The
 * page records each switch's text changes with Date.now() (same clock as this process).
 */
async function faultToBrowser(
  browser: Browser,
  base: string,
  node: string,
  rounds: number,
): Promise<{ plugin: number[]; dra: number[] }> {
  const { ctx, page } = await newPage(browser);
  const paths = {
    plugin: { switchName: 'Fault gpu-0', body: { resource: GPU, deviceId: 'gpu-0' } },
    dra: {
      switchName: `Fault xpu-0 (DRA, ${DRA_DRIVER})`,
      body: { resource: DRA_DRIVER, deviceId: 'xpu-0' },
    },
  } as const;
  await page.goto(`${base}/nodes/${node}`);
  await page.getByRole('status').filter({ hasText: 'Live' }).first().waitFor();
  await page.evaluate(`(() => {
    const names = ${JSON.stringify({ plugin: paths.plugin.switchName, dra: paths.dra.switchName })};
    const last = {};
    window.__pbFault = last;
    const check = () => {
      for (const [path, name] of Object.entries(names)) {
        const el = document.querySelector('[role="switch"][aria-label="' + name + '"]');
        const text = el ? el.textContent : null;
        if (!last[path] || last[path].text !== text) last[path] = { text, t: Date.now() };
      }
    };
    check();
    new MutationObserver(check).observe(document.body, {
      subtree: true, childList: true, characterData: true, attributes: true,
    });
  })()`);
  const out = { plugin: [] as number[], dra: [] as number[] };
  const url = `${base}/api/nodes/${node}/faults`;
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? (['plugin', 'dra'] as const) : (['dra', 'plugin'] as const);
    for (const path of order) {
      const { body } = paths[path];
      for (const kind of ['inject', 'clear'] as const) {
        const want = kind === 'inject' ? 'fault on' : 'fault off';
        const t0 = Date.now();
        const res =
          kind === 'inject'
            ? await fetch(url, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ ...body, reason: 'bench' }),
              })
            : await fetch(`${url}?${new URLSearchParams(body)}`, { method: 'DELETE' });
        if (!res.ok) throw new Error(`${kind} ${path}: HTTP ${res.status} ${await res.text()}`);
        await res.arrayBuffer().catch(() => undefined);
        await page.waitForFunction(
          `(() => { const l = window.__pbFault[${JSON.stringify(path)}]; return l && l.text === ${JSON.stringify(want)} && l.t >= ${t0}; })()`,
          null,
          { timeout: 30_000 },
        );
        const t = await page.evaluate<number>(`window.__pbFault[${JSON.stringify(path)}].t`);
        out[path].push(t - t0);
      }
    }
  }
  await ctx.close();
  return out;
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
  const nodes: BenchNode[] = [];
  const pids: number[] = [];
  const fakes = await startFakeGateways(200);
  // The same 1,024 device-plugin devices / 250 pods, with and without 1,024 DRA devices, 250 claims
  // prepared for 250 more pods and 4 pending claims: the DRA half's cost is the ratio of the two.
  const pluginShape = { devices: 1024, numaNodes: 4, pods: 250, devicesPerPod: 2 };
  const fakeDra = await startFakeNodeGateway(
    withDra(makeSnapshot({ ...pluginShape, nodeName: 'dra-big-node' }), {
      devices: 1024,
      numaNodes: 4,
      claims: 250,
      pendingClaims: 4,
    }),
  );
  const fakePlugin = await startFakeNodeGateway(
    makeSnapshot({ ...pluginShape, nodeName: 'plugin-big-node' }),
  );
  try {
    console.log(
      '[bench] starting kubelet-sim + gateway: big-node (1,024 devices, 250 pods) and small-node (16 devices, 4 pods)…',
    );
    const t0 = Date.now();
    nodes.push(await startNode(dir, 'big-node', 1024, 4, 250, 2));
    nodes.push(await startNode(dir, 'small-node', 16, 2, 4, 2));
    nodes.push(await startMixedNode(dir, 'mixed-node'));
    console.log(`[bench] nodes ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    // The overview's 2-gateway baseline stays the two device-plugin nodes.
    const web = await startWebServer(
      nodes
        .filter((n) => n.node.name !== 'mixed-node')
        .map((n) => `${n.node.name}=${n.gw.url}`)
        .join(','),
    );
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

    console.log(`[bench] fault → browser, device plugin and DRA interleaved, ${FAULT_ROUNDS} rounds…`);
    const mixed = nodes.find((n) => n.node.name === 'mixed-node')!;
    const webMixed = await startWebServer(`mixed-node=${mixed.gw.url}`);
    pids.push(webMixed.child.pid!);
    await faultToBrowser(browser, webMixed.value, 'mixed-node', 2); // warm-up
    const faults = await faultToBrowser(browser, webMixed.value, 'mixed-node', FAULT_ROUNDS);
    await stopPid(webMixed.child.pid);

    console.log('[bench] node page with 1,024 DRA + 1,024 device-plugin devices…');
    const webDra = await startWebServer(
      [fakeDra.gateway, fakePlugin.gateway].map((g) => `${g.name}=${g.url}`).join(','),
    );
    pids.push(webDra.child.pid!);
    await nodeFirstRender(browser, `${webDra.value}/nodes/plugin-big-node`, 1024);
    const draBig: number[] = [];
    const draBigNav: number[] = [];
    const pluginBig: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const d = await nodeFirstRender(browser, `${webDra.value}/nodes/dra-big-node`, 2048);
      draBig.push(d.afterData);
      draBigNav.push(d.fromNavigation);
      pluginBig.push(
        (await nodeFirstRender(browser, `${webDra.value}/nodes/plugin-big-node`, 1024)).afterData,
      );
    }
    await stopPid(webDra.child.pid);

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
      nodeDra: median(draBig),
      nodeDraNav: median(draBigNav),
      nodePluginFake: median(pluginBig),
      faultPluginP50: percentile(faults.plugin, 50),
      faultPluginP99: percentile(faults.plugin, 99),
      faultDraP50: percentile(faults.dra, 50),
      faultDraP99: percentile(faults.dra, 99),
      faultSamples: faults.dra.length,
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
| Node page first render after data arrives, 1,024 DRA + 1,024 device-plugin devices, 250 DRA claims + 4 pending, 500 pods (contract snapshot, fake gateway) | ${fmt(rows.nodeDra)} | the device-plugin half alone (1,024 devices / 250 pods, same fake): ${fmt(rows.nodePluginFake)} | ${(rows.nodeDra / rows.nodePluginFake).toFixed(1)}× | ≤ 1 s |
| Node page, navigation start → full render, 1,024 DRA + 1,024 device-plugin devices | ${fmt(rows.nodeDraNav)} | — | — | — |
| Fault on a DRA device → the browser's switch reads it (inject: "fault on", clear: "fault off"), p99 of ${rows.faultSamples} (p50) | ${fmt(rows.faultDraP99)} (p50 ${fmt(rows.faultDraP50)}) | the same on a device-plugin device of the same node, interleaved: p99 ${fmt(rows.faultPluginP99)} (p50 ${fmt(rows.faultPluginP50)}) | ${(rows.faultDraP99 / rows.faultPluginP99).toFixed(2)}× (p50 ${(rows.faultDraP50 / rows.faultPluginP50).toFixed(2)}×) | beside the device-plugin path |
| Overview first paint with 200 gateways, cold (server opens 200 summary streams) | ${fmt(rows.overviewCold)} | 2 gateways: ${fmt(rows.overviewSmall)} | ${(rows.overviewCold / rows.overviewSmall).toFixed(1)}× | ≤ 2 s |
| Overview first paint with 200 gateways, warm | ${fmt(rows.overviewWarm)} (FCP ${fmt(rows.overviewFcp)}) | 2 gateways: ${fmt(rows.overviewSmall)} | ${(rows.overviewWarm / rows.overviewSmall).toFixed(1)}× | ≤ 2 s |
| Web server RSS with 200 gateways streamed | ${rows.rssLoaded.toFixed(0)} MB (peak ${rows.rssPeak.toFixed(0)} MB) | idle after start: ${rows.rssIdle.toFixed(0)} MB | ${(rows.rssLoaded / rows.rssIdle).toFixed(2)}× | ≤ 300 MB |

How it is measured:
- *First render after data arrives*: User Timing marks in the app — \`plugboard:node-data\` when the
  snapshot reaches the browser, \`plugboard:node-rendered\` one frame after React committed the page
  (NUMA map with every device tile, pods table, events). The run checks that all 1,024 fault
  switches are in the DOM.
- *1,024 DRA + 1,024 device-plugin devices*: the same marks. No simulator here serves that many DRA
  devices with claims yet, so a fake gateway serves a snapshot built from the contract types
  (\`apps/web/test/make-dra.ts\`, the component tests' fixtures) over the real REST proxy and stream
  proxy; the baseline is the same fake serving the device-plugin half alone. The run checks that all
  2,048 fault switches are in the DOM.
- *Fault → browser*: one real node runs a device plugin (8 GPUs) and a DRA driver (8 \`xpu-*\`
  devices) in one gateway on kubelet-sim; the benchmark sends each fault through the web server's
  REST proxy (POST to inject, DELETE to clear, health only: no taint) and the open node page records,
  with a MutationObserver and \`Date.now()\`, when the device's switch reads "fault on" (the kubelet
  was told Unhealthy: ListAndWatch for the device plugin, the NodeWatchResources health stream for
  DRA) or "fault off". Device-plugin and DRA faults alternate, ${FAULT_ROUNDS} rounds of inject +
  clear each.
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
    await fakeDra.stop();
    await fakePlugin.stop();
    for (const n of nodes.reverse()) {
      await n.gw.stop().catch(() => {});
      await n.node.remove().catch(() => {});
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
