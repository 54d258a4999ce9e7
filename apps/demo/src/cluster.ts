// A simulated cluster in one process: per node a kubelet-sim and a gateway running real device
// plugins over real Unix sockets under a private state directory, with workloads admitted through
// the kubelet-sim (so the plugin's GetPreferredAllocation and Allocate really decide). Used by
// `npm start`, the demo's tests and the dashboard's browser tests.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { startKubeletSim, type KubeletSim } from '@plugboard/kubelet-sim';
import type { NodeSnapshot } from '@plugboard/api';
import { parseGatewayConfig, startGateway, type Gateway } from '@plugboard/node-gateway';
import { DemoError } from './errors.js';
import { podFor, type LoadedDemo, type DemoNodeSpec } from './demo-config.js';

export interface DemoNode {
  name: string;
  sim: KubeletSim;
  gateway: Gateway;
  /** Root of this node's files: device-plugins/, kubelet/, gateway/, dev/. */
  dir: string;
}

export interface DemoCluster {
  nodes: DemoNode[];
  node(name: string): DemoNode;
  stop(): Promise<void>;
}

export interface StartClusterOptions {
  demo: LoadedDemo;
  stateDir: string;
  logger: Logger;
  /** Called once per component as it comes up, for progress lines. */
  onProgress?: (message: string) => void;
  /** Admit the demo's workloads (default true). */
  workloads?: boolean;
  /** How long each node may take to register its plugins and show its pods. */
  readyTimeoutMs?: number;
}

/** Resolves when `predicate` holds for the gateway's snapshot, re-checking on every model change. */
export function waitForSnapshot(
  gateway: Gateway,
  predicate: (s: NodeSnapshot) => boolean,
  what: string,
  timeoutMs: number,
): Promise<NodeSnapshot> {
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      const snap = gateway.model.snapshot();
      if (!predicate(snap)) return false;
      cleanup();
      resolve(snap);
      return true;
    };
    const onChange = (): void => void check();
    const timer = setTimeout(() => {
      cleanup();
      reject(new DemoError('start', `timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      gateway.model.off('change', onChange);
    };
    gateway.model.on('change', onChange);
    check();
  });
}

function gatewayDocument(
  demo: LoadedDemo,
  spec: DemoNodeSpec,
  dirs: Record<'plugins' | 'gateway' | 'dev', string>,
  sim: KubeletSim,
): unknown {
  const entry = demo.nodeDocuments.get(spec.name)!;
  const doc = structuredClone(entry.document);
  // A `paths` source in the demo reads fake device nodes from the node's private dev/ directory.
  const resources = Array.isArray(doc.resources) ? (doc.resources as Record<string, unknown>[]) : [];
  for (const r of resources) {
    const paths = r.paths as { patterns?: unknown } | undefined;
    if (paths && Array.isArray(paths.patterns)) {
      paths.patterns = (paths.patterns as unknown[]).map((p: unknown) =>
        typeof p === 'string' ? p.replace(/^\/dev\//, `${dirs.dev}/`) : p,
      );
    }
  }
  const gateway = (doc.gateway ?? {}) as Record<string, unknown>;
  doc.gateway = {
    ...gateway,
    nodeName: spec.name,
    listen: '127.0.0.1:0',
    devicePluginDir: dirs.plugins,
    stateDir: dirs.gateway,
    logLevel: 'info',
    podResources: { ...(gateway.podResources as object), socket: sim.podResourcesSocket },
    kube: { ...(gateway.kube as object), mode: 'kubeconfig', kubeconfig: sim.kubeconfigPath },
    // The simulated node's CPU↔NUMA layout, read the way a real gateway reads /sys.
    topology: { ...(gateway.topology as object), sysfsRoot: sim.sysfsRoot },
  };
  return doc;
}

async function startNode(opts: StartClusterOptions, spec: DemoNodeSpec): Promise<DemoNode> {
  const dir = join(opts.stateDir, spec.name);
  const dirs = {
    plugins: join(dir, 'device-plugins'),
    kubelet: join(dir, 'kubelet'),
    gateway: join(dir, 'gateway'),
    dev: join(dir, 'dev'),
  };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  for (const name of spec.deviceNodes) writeFileSync(join(dirs.dev, name), '');
  const logger = opts.logger.child({ node: spec.name });

  const sim = await startKubeletSim({
    devicePluginDir: dirs.plugins,
    stateDir: dirs.kubelet,
    nodeName: spec.name,
    cpus: spec.kubelet.cpus,
    numaNodes: spec.kubelet.numaNodes,
    ...(spec.kubelet.memoryPerNumaGiB
      ? { memoryPerNumaBytes: Math.round(spec.kubelet.memoryPerNumaGiB * 2 ** 30) }
      : {}),
    ...(spec.kubelet.topologyManagerPolicy
      ? { topologyManagerPolicy: spec.kubelet.topologyManagerPolicy }
      : {}),
    ...(spec.kubelet.topologyManagerScope ? { topologyManagerScope: spec.kubelet.topologyManagerScope } : {}),
    ...(spec.kubelet.cpuManagerPolicy ? { cpuManagerPolicy: spec.kubelet.cpuManagerPolicy } : {}),
    ...(spec.kubelet.memoryManagerPolicy ? { memoryManagerPolicy: spec.kubelet.memoryManagerPolicy } : {}),
    ...(spec.kubelet.reservedCpus ? { reservedCpus: spec.kubelet.reservedCpus } : {}),
    logger: logger.child({ component: 'kubelet-sim' }),
  }).catch((err: unknown) => {
    throw new DemoError('start', `kubelet-sim of ${spec.name} failed to start: ${(err as Error).message}`, {
      cause: err,
    });
  });
  let gateway: Gateway;
  try {
    const file = opts.demo.nodeDocuments.get(spec.name)!.file;
    const config = parseGatewayConfig(gatewayDocument(opts.demo, spec, dirs, sim), { source: file });
    gateway = await startGateway(config, { logger });
  } catch (err) {
    await sim.stop();
    throw new DemoError('start', `gateway of ${spec.name} failed to start: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return { name: spec.name, sim, gateway, dir };
}

export async function startDemoCluster(opts: StartClusterOptions): Promise<DemoCluster> {
  const progress = opts.onProgress ?? (() => {});
  const timeout = opts.readyTimeoutMs ?? 30_000;
  const nodes: DemoNode[] = [];
  const stop = async (): Promise<void> => {
    // Gateways first (they stop the plugins and remove their sockets), then the kubelets.
    await Promise.allSettled(nodes.map((n) => n.gateway.stop()));
    await Promise.allSettled(nodes.map((n) => n.sim.stop()));
    nodes.length = 0;
  };
  try {
    for (const spec of opts.demo.spec.nodes) {
      const node = await startNode(opts, spec);
      nodes.push(node);
      const resources =
        (opts.demo.nodeDocuments.get(spec.name)!.document.resources as unknown[] | undefined)?.length ?? 0;
      await waitForSnapshot(
        node.gateway,
        (s) =>
          Object.keys(s.resources).length === resources &&
          Object.values(s.resources).every((r) => r.registration.phase === 'registered'),
        `${spec.name}'s plugins to register with its kubelet`,
        timeout,
      );
      progress(
        `node ${spec.name}: kubelet-sim ${node.sim.url}, gateway ${node.gateway.url}, ${resources} resource(s) registered`,
      );
    }
    if (opts.workloads !== false) {
      for (const w of opts.demo.spec.workloads) {
        const node = nodes.find((n) => n.name === w.node)!;
        try {
          await node.sim.admitPod(podFor(w));
        } catch (err) {
          throw new DemoError(
            'start',
            `admitting pod ${w.namespace}/${w.name} on ${w.node} failed: ${(err as Error).message}`,
            { cause: err },
          );
        }
      }
      for (const node of nodes) {
        const expected = opts.demo.spec.workloads
          .filter((w) => w.node === node.name)
          .map((w) => `${w.namespace}/${w.name}`);
        await waitForSnapshot(
          node.gateway,
          (s) => expected.every((k) => s.pods[k]?.containers.some((c) => Object.keys(c.devices).length > 0)),
          `${node.name}'s gateway to show its ${expected.length} pod(s)`,
          timeout,
        );
      }
      progress(`workloads: ${opts.demo.spec.workloads.length} pods admitted through the kubelet-sims`);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    nodes,
    node(name) {
      const n = nodes.find((x) => x.name === name);
      if (!n) throw new DemoError('scenario', `no node named "${name}" in the demo`);
      return n;
    },
    stop,
  };
}

/** Every Unix socket left under `dir` (used to prove a clean shutdown). */
export function socketsUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isSocket()) out.push(p);
    }
  };
  walk(dir);
  return out;
}
