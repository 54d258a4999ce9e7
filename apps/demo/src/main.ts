// `npm start`: the whole demo in one process — four simulated nodes (kubelet-sim + gateway + real
// plugins and a DRA driver over real Unix sockets) and the dashboard — under a temporary state directory, stopped
// cleanly by Ctrl-C. Prints one progress line per component and, at the end, the URL and what to try.
import { createServer } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { assertCanRunCluster } from '@plugboard/local-cluster';
import { startWebServer, type WebServer } from '@plugboard/web/server';
import { loadWebConfig } from '@plugboard/web/server/config';
import { startDemoCluster, type DemoCluster, type SimDemoNode } from './cluster.js';
import { loadDemo } from './demo-config.js';
import { DemoError } from './errors.js';
import { loadScenario, playScenario, type ScenarioPlayback } from './scenario-player.js';
import { writeDemoKubeconfig } from './kubeconfig.js';
import { startRealDemoCluster, type RealDemoCluster } from './real-cluster.js';
import { ensureWebBuild } from './web-build.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

const USAGE = `Usage: npm start [-- --cluster sim|real] [--scenario FILE] [--demo FILE] [--state-dir DIR]

Starts a simulated four-node cluster and the Plugboard dashboard on http://127.0.0.1:3000.
  --cluster KIND    sim (default): a kubelet-sim per node, in this process.
                    real: a real Kubernetes v1.37.2 built from upstream source (kube-apiserver,
                    kube-scheduler, kube-controller-manager, a real kubelet per node); needs root
                    and Go, and builds the binaries the first time (see docs/LOCAL-CLUSTER.md).
  --scenario FILE   replay a fault timeline, e.g. examples/scenarios/numa-outage.yaml
  --demo FILE       the cluster description (default examples/demo.yaml)
  --state-dir DIR   keep sockets, state and logs here (default: a new temporary directory, removed on exit)
Environment: PORT (default 3000), HOST (default 127.0.0.1).
Stop with Ctrl-C.`;

const say = (line: string): void => {
  process.stdout.write(`[plugboard] ${line}\n`);
};

function portFree(host: string, port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.once('error', () => res(false));
    srv.listen(port, host, () => srv.close(() => res(true)));
  });
}

/** A concrete first thing to try: a device the first node's first pod holds, and what will happen. */
function firstFaultHint(cluster: DemoCluster, url: string): string {
  const node = cluster.nodes[0]!;
  const snap = node.gateway.model.snapshot();
  const held = Object.values(snap.devices).find((d) => d.allocation !== null);
  if (!held?.allocation) return `open ${url}/nodes/${node.name} and flip a device's Fault switch`;
  const pod = `${held.allocation.namespace}/${held.allocation.pod}`;
  return `open ${url}/nodes/${node.name}, flip "Fault ${held.id}", and watch ${held.resource} allocatable drop by one and ${pod} be flagged;`;
}

/** The same for a DRA device: a device a pod's claim holds, faulted with a NoExecute taint. */
function draFaultHint(cluster: DemoCluster, url: string): string | null {
  for (const node of cluster.nodes) {
    const dra = node.gateway.model.snapshot().dra;
    const held = Object.values(dra?.devices ?? {}).find(
      (d) => d.sourceId !== null && d.allocations.some((a) => a.pods.length > 0),
    );
    if (!held) continue;
    const body = JSON.stringify({
      resource: held.driver,
      deviceId: held.sourceId,
      reason: 'ECC errors',
      taint: 'NoExecute',
    });
    return (
      `a DRA device: curl -X POST ${url}/api/nodes/${node.name}/faults -H 'content-type: application/json' -d '${body}'` +
      ` evicts ${held.allocations[0]!.pods.join(', ')} (kubectl${cluster.kind === 'sim' ? ` --context ${node.name}` : ''} get pods,resourceclaims -A)`
    );
  }
  return null;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      scenario: { type: 'string' },
      demo: { type: 'string' },
      'state-dir': { type: 'string' },
      cluster: { type: 'string', default: 'sim' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const kind = values.cluster;
  if (kind !== 'sim' && kind !== 'real')
    throw new DemoError('config', `--cluster: expected sim or real, got "${kind}"`);
  const started = Date.now();
  const port = Number(process.env.PORT ?? 3000);
  const host = process.env.HOST ?? '127.0.0.1';
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new DemoError('config', `PORT: must be 0..65535, got "${process.env.PORT}"`);

  if (kind === 'real') {
    // Before anything is built or started: a clear message naming what is missing.
    try {
      assertCanRunCluster();
    } catch (err) {
      throw new DemoError('config', `--cluster real: ${(err as Error).message}`, { cause: err });
    }
  }
  const demo = loadDemo(resolve(process.cwd(), values.demo ?? join(repoRoot, 'examples/demo.yaml')));
  const scenario = values.scenario ? loadScenario(resolve(process.cwd(), values.scenario)) : null;
  if (port !== 0 && !(await portFree(host, port))) {
    throw new DemoError(
      'port-in-use',
      `port ${port} on ${host} is in use: start the demo on another port, e.g. PORT=${port + 1} npm start`,
    );
  }

  const ownStateDir = values['state-dir'] === undefined;
  const stateDir = ownStateDir
    ? mkdtempSync(join(tmpdir(), 'plugboard-demo-'))
    : resolve(values['state-dir']!);
  const logFile = join(stateDir, 'demo.log');
  writeFileSync(logFile, '');
  say(`state directory ${stateDir} (component logs: ${logFile})`);
  const logger = pino({ level: 'info' }, pino.destination({ dest: logFile, sync: false }));

  let cluster: DemoCluster | null = null;
  let web: WebServer | null = null;
  let playback: ScenarioPlayback | null = null;
  let stopping: Promise<void> | null = null;
  const building = new AbortController();
  const shutdown = (signal: string): Promise<void> => {
    stopping ??= (async () => {
      say(`${signal}: stopping…`);
      // A real cluster stops its kubelets, control plane and etcd one by one.
      const graceMs = kind === 'real' ? 60_000 : 4500;
      const force = setTimeout(() => {
        say(`components did not stop within ${graceMs / 1000} s; exiting anyway`);
        process.exit(1);
      }, graceMs);
      force.unref();
      building.abort();
      await playback?.stop().catch(() => {});
      await web?.stop().catch(() => {});
      await cluster?.stop();
      logger.flush();
      if (ownStateDir) rmSync(stateDir, { recursive: true, force: true });
      say('stopped');
    })();
    return stopping;
  };
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      void shutdown(sig).then(() => process.exit(0));
    });
  }

  try {
    await ensureWebBuild(join(repoRoot, 'apps/web'), join(stateDir, 'web-build.log'), say, building.signal);
    if (kind === 'real') {
      let lastLine = 0;
      cluster = await startRealDemoCluster({
        demo,
        stateDir,
        logger,
        onProgress: say,
        onBuildProgress: (p) => {
          if (Date.now() - lastLine < 10_000) return;
          lastLine = Date.now();
          say(
            `building Kubernetes from source (first time only): ${p.done}/${p.total} packages, ${Math.round(p.elapsedMs / 1000)} s`,
          );
        },
      });
    } else {
      cluster = await startDemoCluster({ demo, stateDir, logger, onProgress: say });
    }
    const gateways = cluster.nodes.map((n) => `${n.name}=${n.gateway.url}`).join(',');
    const webConfig = loadWebConfig({
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: host,
      PLUGBOARD_GATEWAYS: gateways,
      PLUGBOARD_LOG_LEVEL: 'warn',
    });
    web = await startWebServer(webConfig).catch((err: unknown) => {
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'EADDRINUSE') {
        throw new DemoError(
          'port-in-use',
          `port ${port} on ${host} is in use: start the demo on another port, e.g. PORT=${port + 1} npm start`,
        );
      }
      throw new DemoError('start', `the dashboard failed to start: ${e.message}`, { cause: err });
    });
    say(`dashboard: ${web.url}`);
    if (scenario) {
      playback = await playScenario(cluster, scenario, say);
      say(
        `scenario ${scenario.document.name}: ${scenario.document.steps.length} step(s) scheduled on every gateway`,
      );
    }
    say(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s — open ${web.url}`);
    say(`try: ${firstFaultHint(cluster, web.url)}`);
    if (cluster.kind === 'real') {
      const real = cluster as RealDemoCluster;
      say(
        `     or kubectl (v1.37.2, built with the cluster): export KUBECONFIG=${real.kubeconfig}; ${real.kubectl} get nodes,pods -A -o wide`,
      );
    } else {
      const kubeconfig = join(stateDir, 'kubeconfig');
      writeDemoKubeconfig(
        kubeconfig,
        (cluster as DemoCluster<SimDemoNode>).nodes.map((n) => ({
          name: n.name,
          kubeconfigPath: n.sim.kubeconfigPath,
        })),
      );
      say(
        `     or kubectl: export KUBECONFIG=${kubeconfig}; kubectl get pods -o wide; kubectl describe node ${cluster.nodes[0]!.name}`,
      );
      say(
        `     (one context per node: ${cluster.nodes.map((n) => n.name).join(', ')} — kubectl --context ${cluster.nodes.at(-1)!.name} get events)`,
      );
    }
    // The gateways run in this process, not as pods: kubectl plugboard is given them directly (its
    // --gateway mode), as it is for the simulated nodes, each with an API slice of its own.
    say(
      `     or kubectl plugboard: export PATH=${join(repoRoot, 'node_modules/.bin')}:$PATH ` +
        `PLUGBOARD_GATEWAYS=${cluster.nodes.map((n) => n.gateway.url).join(',')}; kubectl plugboard nodes`,
    );
    const dra = draFaultHint(cluster, web.url);
    if (dra) say(`     or ${dra}`);
    say('     or replay a timeline: npm start -- --scenario examples/scenarios/numa-outage.yaml');
    say('stop with Ctrl-C');
  } catch (err) {
    await shutdown('start-up failure');
    throw err;
  }
}

main().catch((err: unknown) => {
  const e = DemoError.from(err);
  process.stderr.write(`[plugboard] demo failed to start (${e.code}): ${e.message}\n`);
  process.exit(1);
});
