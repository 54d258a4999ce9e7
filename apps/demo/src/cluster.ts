// A simulated cluster in one process: per node a kubelet-sim and a gateway running real device
// plugins and DRA drivers over real Unix sockets under a private state directory, with workloads
// admitted through the kubelet-sim (so the plugin's GetPreferredAllocation and Allocate, or the
// scheduler's allocator over the driver's ResourceSlices and the driver's NodePrepareResources,
// really decide). Used by `npm start`, the demo's tests and the dashboard's browser tests.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { startKubeletSim, type KubeletSim } from '@plugboard/kubelet-sim';
import type { NodeSnapshot } from '@plugboard/api';
import type { NodeState } from '@plugboard/local-cluster';
import { parseGatewayConfig, startGateway, type Gateway } from '@plugboard/node-gateway';
import { DemoError } from './errors.js';
import {
  draExtendedResourceNames,
  draObjectsFor,
  podFor,
  type DemoNodeSpec,
  type DemoWorkload,
  type DraObject,
  type LoadedDemo,
} from './demo-config.js';

interface DemoNodeBase {
  name: string;
  gateway: Gateway;
  /**
   * Root of this node's files: device-plugins/, plugins/ (DRA drivers' sockets, checkpoints and
   * fault directories), plugins_registry/, cdi/, kubelet/, gateway/, dev/.
   */
  dir: string;
  /** Stops the node's kubelet and starts it again (a scenario's `restart-kubelet`). */
  restartKubelet(): Promise<void>;
}

/** A node of the simulated demo: a kubelet-sim (the node and its own API slice) and a gateway. */
export interface SimDemoNode extends DemoNodeBase {
  kind: 'sim';
  sim: KubeletSim;
}

/** A node of the demo on the real local cluster: a real kubelet and a gateway beside it. */
export interface RealDemoNode extends DemoNodeBase {
  kind: 'real';
  /** The real kubelet's record (pid, directories, sockets) in the local cluster's state. */
  kubelet: NodeState;
}

export type DemoNode = SimDemoNode | RealDemoNode;

/** A demo pod the scheduler left Pending (nothing fits its claims): the demo goes on without it. */
export interface PendingWorkload {
  node: string;
  pod: string;
  /** The scheduler's message on the pod's PodScheduled condition. */
  message: string;
}

export interface DemoCluster<N extends DemoNode = DemoNode> {
  kind: N['kind'];
  nodes: N[];
  /** Workloads left Pending by the scheduler, with its message. */
  pending: PendingWorkload[];
  node(name: string): N;
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

/** Where a node's gateway finds its kubelet, API server and directories. */
export interface GatewayPaths {
  devicePlugins: string;
  plugins: string;
  pluginsRegistry: string;
  cdi: string;
  gateway: string;
  /** The node's fake device nodes, for a `paths` source. */
  dev: string;
  podResourcesSocket: string;
  kubeconfig: string;
  /** A simulated CPU↔NUMA layout to read instead of /sys (null: the machine's own). */
  sysfsRoot: string | null;
}

/** The gateway config of a demo node: its document from the demo, pointed at the node's paths. */
export function gatewayDocument(demo: LoadedDemo, spec: DemoNodeSpec, paths: GatewayPaths): unknown {
  const entry = demo.nodeDocuments.get(spec.name)!;
  const doc = structuredClone(entry.document);
  // A `paths` source in the demo reads fake device nodes from the node's private dev/ directory.
  const resources = Array.isArray(doc.resources) ? (doc.resources as Record<string, unknown>[]) : [];
  for (const r of resources) {
    const sourcePaths = r.paths as { patterns?: unknown } | undefined;
    if (sourcePaths && Array.isArray(sourcePaths.patterns)) {
      sourcePaths.patterns = (sourcePaths.patterns as unknown[]).map((p: unknown) =>
        typeof p === 'string' ? p.replace(/^\/dev\//, `${paths.dev}/`) : p,
      );
    }
  }
  const gateway = (doc.gateway ?? {}) as Record<string, unknown>;
  doc.gateway = {
    ...gateway,
    nodeName: spec.name,
    listen: '127.0.0.1:0',
    devicePluginDir: paths.devicePlugins,
    // The config's `dra:` drivers run in the gateway: their sockets where this node's kubelet
    // looks for them (its plugin watcher), their CDI specs beside them.
    pluginsDir: paths.plugins,
    pluginsRegistryDir: paths.pluginsRegistry,
    cdiDir: paths.cdi,
    stateDir: paths.gateway,
    logLevel: 'info',
    podResources: { ...(gateway.podResources as object), socket: paths.podResourcesSocket },
    kube: { ...(gateway.kube as object), mode: 'kubeconfig', kubeconfig: paths.kubeconfig },
    // A simulated node's CPU↔NUMA layout, read the way a real gateway reads /sys.
    ...(paths.sysfsRoot ? { topology: { ...(gateway.topology as object), sysfsRoot: paths.sysfsRoot } } : {}),
  };
  return doc;
}

/** The gateway of a demo node, started in this process; `cleanup` runs when it fails to start. */
export async function startNodeGateway(
  opts: StartClusterOptions,
  spec: DemoNodeSpec,
  paths: GatewayPaths,
  cleanup: () => Promise<void>,
): Promise<Gateway> {
  try {
    const file = opts.demo.nodeDocuments.get(spec.name)!.file;
    const config = parseGatewayConfig(gatewayDocument(opts.demo, spec, paths), { source: file });
    return await startGateway(config, { logger: opts.logger.child({ node: spec.name }) });
  } catch (err) {
    await cleanup();
    throw new DemoError('start', `gateway of ${spec.name} failed to start: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** A node's private directories under the demo's state directory. */
export function nodeDirs(
  stateDir: string,
  name: string,
): Record<'devicePlugins' | 'plugins' | 'pluginsRegistry' | 'cdi' | 'kubelet' | 'gateway' | 'dev', string> {
  const dir = join(stateDir, name);
  return {
    devicePlugins: join(dir, 'device-plugins'),
    plugins: join(dir, 'plugins'),
    pluginsRegistry: join(dir, 'plugins_registry'),
    cdi: join(dir, 'cdi'),
    kubelet: join(dir, 'kubelet'),
    gateway: join(dir, 'gateway'),
    dev: join(dir, 'dev'),
  };
}

/** POST one resource.k8s.io/v1 object to the kubelet-sim's API, as `kubectl create` would. */
async function createDraObject(sim: KubeletSim, object: DraObject): Promise<void> {
  const path = object.namespace
    ? `/apis/resource.k8s.io/v1/namespaces/${object.namespace}/${object.plural}`
    : `/apis/resource.k8s.io/v1/${object.plural}`;
  const res = await fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(object.body),
  });
  const status = (await res.json().catch(() => ({}))) as { message?: string };
  if (!res.ok) {
    const name = `${object.namespace ? `${object.namespace}/` : ''}${String(object.body.metadata.name)}`;
    throw new DemoError(
      'start',
      `creating ${object.body.kind} ${name} failed: HTTP ${res.status}: ${status.message ?? res.statusText}`,
    );
  }
}

async function startNode(opts: StartClusterOptions, spec: DemoNodeSpec): Promise<SimDemoNode> {
  const dir = join(opts.stateDir, spec.name);
  const dirs = nodeDirs(opts.stateDir, spec.name);
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  for (const name of spec.deviceNodes) writeFileSync(join(dirs.dev, name), '');
  const logger = opts.logger.child({ node: spec.name });

  const sim = await startKubeletSim({
    devicePluginDir: dirs.devicePlugins,
    stateDir: dirs.kubelet,
    // The kubelet's plugin watcher: how DRA drivers register (as on a real node, it is always on).
    pluginsRegistryDir: dirs.pluginsRegistry,
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
  try {
    // What an operator (or a driver's chart) installs: DeviceClasses, and the claims and templates
    // of this node's workloads, through the node's own API.
    for (const object of draObjectsFor(opts.demo.spec, spec.name)) await createDraObject(sim, object);
  } catch (err) {
    await sim.stop();
    throw new DemoError('start', `${spec.name}: ${(err as Error).message}`, { cause: err });
  }
  const gateway = await startNodeGateway(
    opts,
    spec,
    {
      ...dirs,
      podResourcesSocket: sim.podResourcesSocket,
      kubeconfig: sim.kubeconfigPath,
      sysfsRoot: sim.sysfsRoot,
    },
    () => sim.stop(),
  );
  return { kind: 'sim', name: spec.name, sim, gateway, dir, restartKubelet: () => sim.restart() };
}

/** The `dra:` drivers of a node's config (the gateway runs them). */
function draDriversOf(demo: LoadedDemo, node: string): string[] {
  const dra = demo.nodeDocuments.get(node)!.document.dra;
  return Array.isArray(dra) ? dra.map((d) => String((d as { driver?: unknown }).driver)) : [];
}

/**
 * A node is ready when its device plugins are registered with its kubelet and its DRA drivers are
 * registered and have published their ResourceSlices (the scheduler allocates claims from them).
 */
function nodeReady(s: NodeSnapshot, resources: number, drivers: string[]): boolean {
  const plugins =
    Object.keys(s.resources).length === resources &&
    Object.values(s.resources).every((r) => r.registration.phase === 'registered');
  return (
    plugins &&
    drivers.every((name) => {
      const d = s.dra?.drivers[name];
      return (
        d?.registration?.phase === 'registered' &&
        d.publication?.lastPublishedAt != null &&
        d.publication.error === null &&
        d.counts.published > 0
      );
    })
  );
}

/** The claim a workload's `resourceClaims` entry resolved to, as its node's gateway shows it. */
function claimShown(s: NodeSnapshot, w: DemoWorkload, rc: DemoWorkload['resourceClaims'][number]) {
  if ('resourceClaimName' in rc) return s.dra?.claims[`${w.namespace}/${rc.resourceClaimName}`];
  const pod = `${w.namespace}/${w.name}`;
  return Object.values(s.dra?.claims ?? {}).find(
    (c) => c.owner?.pod === pod && c.owner.podClaimName === rc.name,
  );
}

/**
 * A workload shows on its gateway: a pod with its device-plugin devices, or with each of its claims
 * prepared by the kubelet (the driver's NodePrepareResources answered); a pod the scheduler left
 * Pending with its claims (a pending one with the scheduler's message).
 */
function workloadShown(s: NodeSnapshot, w: DemoWorkload, pending: boolean): boolean {
  const key = `${w.namespace}/${w.name}`;
  if (pending) {
    return w.resourceClaims.every((rc) => {
      const claim = claimShown(s, w, rc);
      return claim !== undefined && (claim.phase !== 'pending' || claim.pendingReason !== null);
    });
  }
  const pod = s.pods[key];
  if (!pod) return false;
  // No claims of its own: devices from a device plugin, or from a driver through the special claim
  // the scheduler made for an extended resource a DeviceClass maps (PodResources dynamic_resources).
  if (w.resourceClaims.length === 0)
    return pod.containers.some(
      (c) => Object.keys(c.devices).length > 0 || c.dynamicResources.some((r) => r.devices.length > 0),
    );
  return w.resourceClaims.every((rc) => claimShown(s, w, rc)?.phase === 'prepared');
}

/**
 * Waits until the node's plugins are registered with its kubelet and its DRA drivers have published;
 * returns what the progress line says about them.
 */
export async function nodeReadyLine(
  opts: StartClusterOptions,
  node: DemoNode,
  timeoutMs: number,
): Promise<string> {
  const resources =
    (opts.demo.nodeDocuments.get(node.name)!.document.resources as unknown[] | undefined)?.length ?? 0;
  const drivers = draDriversOf(opts.demo, node.name);
  const ready = await waitForSnapshot(
    node.gateway,
    (s) => nodeReady(s, resources, drivers),
    drivers.length > 0
      ? `${node.name}'s plugins to register and its DRA drivers to register and publish their devices`
      : `${node.name}'s plugins to register with its kubelet`,
    timeoutMs,
  );
  const dra = drivers.map((d) => `${d} (${ready.dra!.drivers[d]!.counts.published} devices published)`);
  return (
    `gateway ${node.gateway.url}, ${resources} resource(s) registered` +
    (dra.length > 0 ? `, DRA driver ${dra.join(', ')} registered` : '')
  );
}

/** Waits until every node's gateway shows its workloads (the pending ones with their claims). */
export async function workloadsShown(
  opts: StartClusterOptions,
  nodes: readonly DemoNode[],
  pending: readonly PendingWorkload[],
  timeoutMs: number,
): Promise<void> {
  for (const node of nodes) {
    const expected = opts.demo.spec.workloads
      .filter((w) => w.node === node.name)
      .map((w) => ({
        w,
        pending: pending.some((p) => p.node === w.node && p.pod === `${w.namespace}/${w.name}`),
      }));
    await waitForSnapshot(
      node.gateway,
      (s) => expected.every(({ w, pending }) => workloadShown(s, w, pending)),
      `${node.name}'s gateway to show its ${expected.length} pod(s)`,
      timeoutMs,
    );
  }
}

export async function startDemoCluster(opts: StartClusterOptions): Promise<DemoCluster<SimDemoNode>> {
  const progress = opts.onProgress ?? (() => {});
  const timeout = opts.readyTimeoutMs ?? 30_000;
  const nodes: SimDemoNode[] = [];
  const pending: PendingWorkload[] = [];
  const stop = async (): Promise<void> => {
    // Gateways first (they stop the plugins and drivers and remove their sockets), then the kubelets.
    await Promise.allSettled(nodes.map((n) => n.gateway.stop()));
    await Promise.allSettled(nodes.map((n) => n.sim.stop()));
    nodes.length = 0;
  };
  try {
    for (const spec of opts.demo.spec.nodes) {
      const node = await startNode(opts, spec);
      nodes.push(node);
      progress(`node ${spec.name}: kubelet-sim ${node.sim.url}, ${await nodeReadyLine(opts, node, timeout)}`);
    }
    if (opts.workloads !== false) {
      const draNames = draExtendedResourceNames(opts.demo.spec);
      for (const w of opts.demo.spec.workloads) {
        const node = nodes.find((n) => n.name === w.node)!;
        try {
          await node.sim.admitPod(podFor(w, draNames));
        } catch (err) {
          throw new DemoError(
            'start',
            `admitting pod ${w.namespace}/${w.name} on ${w.node} failed: ${(err as Error).message}`,
            { cause: err },
          );
        }
        // A pod whose claims nothing can satisfy stays Pending with the scheduler's message, as in
        // a cluster; it is part of the demo, not a failure.
        const unschedulable = node.sim
          .state()
          .pods.find((p) => p.namespace === w.namespace && p.name === w.name)?.unschedulable;
        if (unschedulable)
          pending.push({ node: w.node, pod: `${w.namespace}/${w.name}`, message: unschedulable.message });
      }
      await workloadsShown(opts, nodes, pending, timeout);
      const admitted = opts.demo.spec.workloads.length - pending.length;
      progress(`workloads: ${admitted} pods admitted through the kubelet-sims`);
      for (const p of pending) progress(`workloads: ${p.pod} on ${p.node} stays Pending: ${p.message}`);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    kind: 'sim',
    nodes,
    pending,
    node(name) {
      const n = nodes.find((x) => x.name === name);
      if (!n) throw new DemoError('scenario', `no node named "${name}" in the demo`);
      return n;
    },
    stop,
  };
}
