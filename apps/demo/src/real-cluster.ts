// The demo on a real Kubernetes (`npm start -- --cluster real`): @plugboard/local-cluster's
// kube-apiserver, kube-scheduler and kube-controller-manager v1.37.2 built from upstream source, one
// real kubelet per demo node (each in a mount namespace of its own, with upstream's fake container
// runtime), and beside each kubelet the node's gateway in this process with its device plugins and
// DRA drivers, over the kubelet's real sockets. The DRA objects and the workloads go through the real
// API server (the real kubectl), the real scheduler places them, the real kubelet admits them.
//
// What a real kubelet cannot be told: it reports this machine's CPUs, memory and NUMA layout, not
// the demo's simulated ones, so the workloads' cpu and memory requests are left out (they would not
// fit a small machine), and the simulated devices keep their simulated NUMA nodes.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import {
  addNode,
  assertCanRunCluster,
  down,
  ensureBinaries,
  readState,
  restartKubelet,
  runKubectl,
  up,
  type Binaries,
  type BuildProgress,
  type ClusterState,
  type NodeState,
} from '@plugboard/local-cluster';
import {
  nodeDirs,
  nodeReadyLine,
  startNodeGateway,
  workloadsShown,
  type DemoCluster,
  type PendingWorkload,
  type RealDemoNode,
  type StartClusterOptions,
} from './cluster.js';
import { draObjectsFor, podFor, type DemoWorkload } from './demo-config.js';
import { DemoError } from './errors.js';

export interface StartRealClusterOptions extends StartClusterOptions {
  /** Progress of the first build of the Kubernetes binaries. */
  onBuildProgress?: (p: BuildProgress) => void;
}

export interface RealDemoCluster extends DemoCluster<RealDemoNode> {
  /** The cluster admin's kubeconfig (every node is in one cluster). */
  kubeconfig: string;
  /** The real kubectl v1.37.2 built with the cluster. */
  kubectl: string;
}

/** A demo workload as a Pod for the real scheduler: pinned to its node, no cpu or memory requests. */
export function realPodFor(w: DemoWorkload): Record<string, unknown> {
  const pod = podFor(w) as {
    spec: {
      nodeSelector?: Record<string, string>;
      containers: { image: string; resources: { limits?: Record<string, unknown>; requests?: unknown } }[];
    };
  };
  pod.spec.nodeSelector = { 'kubernetes.io/hostname': w.node };
  for (const c of pod.spec.containers) {
    const limits = Object.fromEntries(
      Object.entries(c.resources.limits ?? {}).filter(([name]) => name !== 'cpu' && name !== 'memory'),
    );
    c.resources.limits = limits;
    c.resources.requests = limits;
    // Upstream's fake runtime "pulls" and "runs" any image; this one names what it stands for.
    c.image = 'registry.k8s.io/pause:3.10';
  }
  return pod;
}

interface PodJson {
  status?: { conditions?: { type: string; message?: string }[] };
}

/**
 * Resolves when each of `pods` (namespace/name) is Running (or Succeeded) or the scheduler has marked
 * it Unschedulable, from the real kubectl's watch (one line per change); maps each to which.
 */
function podsSettled(
  kubectlBin: string,
  kubeconfig: string,
  pods: readonly string[],
  timeoutMs: number,
): Promise<Map<string, 'Running' | 'Unschedulable'>> {
  const template =
    '{.metadata.namespace}/{.metadata.name} {.status.phase} ' +
    '{.status.conditions[?(@.type=="PodScheduled")].reason}{"\\n"}';
  const child = spawn(
    kubectlBin,
    ['--kubeconfig', kubeconfig, 'get', 'pods', '-A', '--watch', '-o', `jsonpath=${template}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const wanted = new Set(pods);
  const settled = new Map<string, 'Running' | 'Unschedulable'>();
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    const finish = (err: Error | null): void => {
      clearTimeout(timer);
      child.kill();
      if (err) reject(err);
      else resolve(settled);
    };
    const timer = setTimeout(() => {
      const left = [...wanted].filter((p) => !settled.has(p));
      finish(
        new DemoError(
          'start',
          `after ${timeoutMs} ms these pods are neither Running nor unschedulable: ${left.join(', ')}`,
        ),
      );
    }, timeoutMs);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const [key, phase, reason] = line.trim().split(/\s+/);
      if (!key || !wanted.has(key)) return;
      if (phase === 'Running' || phase === 'Succeeded') settled.set(key, 'Running');
      else if (reason === 'Unschedulable') settled.set(key, 'Unschedulable');
      if (settled.size === wanted.size) finish(null);
    });
    child.once('exit', (code) => {
      if (settled.size < wanted.size)
        finish(new DemoError('start', `kubectl get pods --watch exited (${code}): ${stderr.trim()}`));
    });
  });
}

export async function startRealDemoCluster(opts: StartRealClusterOptions): Promise<RealDemoCluster> {
  const progress = opts.onProgress ?? (() => {});
  const timeout = opts.readyTimeoutMs ?? 120_000;
  const asDemoError = (err: unknown): DemoError =>
    err instanceof DemoError
      ? err
      : new DemoError('start', `the real cluster: ${(err as Error).message}`, { cause: err });
  // Root and the tools first (Go when the binaries are built): a clear message before anything starts.
  try {
    assertCanRunCluster();
  } catch (err) {
    throw asDemoError(err);
  }
  let bins: Binaries;
  try {
    bins = await ensureBinaries(opts.onBuildProgress ? { onProgress: opts.onBuildProgress } : {});
  } catch (err) {
    throw new DemoError('build', (err as Error).message, { cause: err });
  }
  const clusterDir = join(opts.stateDir, 'cluster');
  const nodes: RealDemoNode[] = [];
  let state: ClusterState | null = null;
  const stop = async (): Promise<void> => {
    await Promise.allSettled(nodes.map((n) => n.gateway.stop()));
    nodes.length = 0;
    if (state) await down(clusterDir).catch(() => undefined);
    state = null;
  };
  const kubectl = async (args: string[], input?: string): Promise<string> => {
    try {
      return (await runKubectl(bins.kubectl, state!.kubeconfig, args, { input })).stdout;
    } catch (err) {
      throw new DemoError('start', (err as Error).message, { cause: err });
    }
  };
  const apply = (items: unknown[]): Promise<string> =>
    kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));

  try {
    try {
      await up(bins, {
        dir: clusterDir,
        nodes: 0,
        apiserverPort: 0,
        timeoutMs: timeout,
        log: (line) => opts.logger.info({ component: 'local-cluster' }, line),
      });
    } catch (err) {
      throw asDemoError(err);
    }
    state = readState(clusterDir);
    progress(`real control plane v${state.version.replace(/^v/, '')}: kube-apiserver ${state.server}`);
    // The namespaces the demo's objects and workloads live in (kubelet-sim makes them on first use).
    const namespaces = new Set([
      ...opts.demo.spec.workloads.map((w) => w.namespace),
      ...opts.demo.spec.resourceClaimTemplates.map((t) => t.namespace),
      ...opts.demo.spec.resourceClaims.map((c) => c.namespace),
    ]);
    await apply([...namespaces].map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })));
    for (const spec of opts.demo.spec.nodes) {
      let kubelet: NodeState;
      try {
        kubelet = await addNode(
          bins,
          state,
          {
            name: spec.name,
            isolated: true,
            ...(spec.kubelet.topologyManagerPolicy
              ? { topologyManagerPolicy: spec.kubelet.topologyManagerPolicy }
              : {}),
            // Node status every second (upstream: 10 s), so a fault shows in the Node at once.
            nodeStatusUpdateFrequency: '1s',
          },
          { timeoutMs: timeout },
        );
      } catch (err) {
        throw asDemoError(err);
      }
      const dirs = nodeDirs(opts.stateDir, spec.name);
      for (const d of [dirs.gateway, dirs.dev]) mkdirSync(d, { recursive: true });
      for (const name of spec.deviceNodes) writeFileSync(join(dirs.dev, name), '');
      // What an operator (or a driver's chart) installs, through the real API server.
      const objects = draObjectsFor(opts.demo.spec, spec.name);
      if (objects.length > 0) await apply(objects.map((o) => o.body));
      const gateway = await startNodeGateway(
        opts,
        spec,
        {
          devicePlugins: kubelet.devicePluginDir,
          plugins: kubelet.pluginsDir,
          pluginsRegistry: kubelet.pluginsRegistryDir,
          cdi: join(kubelet.dir, 'cdi'),
          gateway: dirs.gateway,
          dev: dirs.dev,
          podResourcesSocket: kubelet.podResourcesSocket,
          // The cluster admin's identity stands in for the chart's ServiceAccount here.
          kubeconfig: state.kubeconfig,
          sysfsRoot: null,
        },
        () => Promise.resolve(),
      );
      const st = state;
      const node: RealDemoNode = {
        kind: 'real',
        name: spec.name,
        gateway,
        dir: kubelet.dir,
        kubelet,
        restartKubelet: async () => {
          await restartKubelet(bins, st, spec.name);
        },
      };
      nodes.push(node);
      progress(
        `node ${spec.name}: real kubelet (pid ${kubelet.kubelet.pid}), ${await nodeReadyLine(opts, node, timeout)}`,
      );
    }

    const pending: PendingWorkload[] = [];
    if (opts.workloads !== false) {
      await apply(opts.demo.spec.workloads.map(realPodFor));
      // Each pod Running, or left Pending by the scheduler with its reason (part of the demo).
      const settled = await podsSettled(
        bins.kubectl,
        state.kubeconfig,
        opts.demo.spec.workloads.map((w) => `${w.namespace}/${w.name}`),
        timeout,
      );
      for (const w of opts.demo.spec.workloads) {
        const key = `${w.namespace}/${w.name}`;
        if (settled.get(key) !== 'Unschedulable') continue;
        const pod = JSON.parse(
          await kubectl(['get', 'pod', '-n', w.namespace, w.name, '-o', 'json']),
        ) as PodJson;
        const message = pod.status?.conditions?.find((c) => c.type === 'PodScheduled')?.message ?? '';
        pending.push({ node: w.node, pod: key, message });
      }
      await workloadsShown(opts, nodes, pending, timeout);
      const admitted = opts.demo.spec.workloads.length - pending.length;
      progress(`workloads: ${admitted} pods placed by kube-scheduler and admitted by the real kubelets`);
      for (const p of pending) progress(`workloads: ${p.pod} on ${p.node} stays Pending: ${p.message}`);
    }
    return {
      kind: 'real',
      nodes,
      pending,
      kubeconfig: state.kubeconfig,
      kubectl: bins.kubectl,
      node(name) {
        const n = nodes.find((x) => x.name === name);
        if (!n) throw new DemoError('scenario', `no node named "${name}" in the demo`);
        return n;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
