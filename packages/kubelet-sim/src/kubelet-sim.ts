// startKubeletSim: one simulated node, composed in dependency order — the API server
// (apiserver/kube-apiserver.ts, cmd/kube-apiserver), the control-plane loops a DRA node needs
// (controlplane/control-plane.ts: kube-scheduler's DRA cycle, the ResourceClaim and device taint
// eviction controllers of kube-controller-manager) and the kubelet (kubelet.ts, pkg/kubelet), each
// a client of the ones started before it and stopped in reverse. Also the node's machine (its shape
// and sysfs fixture) and `<stateDir>/kubeconfig`, so Kubernetes clients can point at it. Public
// types are in types.ts.

import { EventEmitter } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { MAX_ALIGNABLE_NUMA_NODES } from '@plugboard/topology';
import { EventRecorder } from './apiserver/events.js';
import { startApiServer, type KubeApiServer } from './apiserver/kube-apiserver.js';
import { startControlPlane } from './controlplane/control-plane.js';
import { KubeletSimError } from './errors.js';
import { startKubelet, type Kubelet } from './kubelet.js';
import { buildNodeShape, type NodeShape } from './machine/node-shape.js';
import { writeSysfs } from './machine/sysfs.js';
import type { KubeletSim, KubeletSimOptions } from './types.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(listen);
  if (!m) throw new KubeletSimError('Config', `listen: expected HOST:PORT, got "${listen}"`);
  const port = Number(m[2]);
  if (port > 65535) throw new KubeletSimError('Config', `listen: port ${port} is out of range`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

export async function startKubeletSim(opts: KubeletSimOptions): Promise<KubeletSim> {
  const nodeName = opts.nodeName ?? 'sim-node';
  const logger = (opts.logger ?? pino({ level: 'silent' })).child({ node: nodeName });
  const { host, port } = parseListen(opts.listen ?? '127.0.0.1:0');
  if (!LOOPBACK.has(host) && !opts.controlToken) {
    throw new KubeletSimError(
      'Config',
      `listen: ${host} is not a loopback address; a control token is required to bind beyond loopback`,
    );
  }
  const devicePluginDir = resolve(opts.devicePluginDir);
  const stateDir = resolve(opts.stateDir);
  mkdirSync(stateDir, { recursive: true });
  const shape: NodeShape = buildNodeShape(opts);
  const topologyPolicy = opts.topologyManagerPolicy ?? 'best-effort';
  if (topologyPolicy !== 'none' && shape.numaNodes.length > MAX_ALIGNABLE_NUMA_NODES) {
    throw new KubeletSimError(
      'Config',
      `topologyManagerPolicy: unsupported on machines with more than ${MAX_ALIGNABLE_NUMA_NODES} NUMA Nodes (this one has ${shape.numaNodes.length})`,
    );
  }
  const sysfsRoot = writeSysfs(stateDir, shape);
  // Typed at the KubeletSim interface; the emitter itself stays untyped to keep generic on/off simple.
  const emitter = new EventEmitter();

  // In dependency order, each a client of the ones before it; stopped in reverse.
  const running: { stop(): Promise<void> | void }[] = [];
  const stopAll = async () => {
    for (const part of running.splice(0).reverse()) await part.stop();
  };
  const compose = async (): Promise<{ api: KubeApiServer; kubelet: Kubelet }> => {
    const api = await startApiServer({
      host,
      port,
      token: opts.controlToken,
      watchHistorySize: opts.watchHistorySize,
      maxEvents: opts.maxEvents,
      bookmarkIntervalMs: opts.bookmarkIntervalMs,
      podProxyTargets: opts.podProxyTargets,
      controlApi: opts.controlApi,
      logger,
    });
    running.push(api);
    const podWatch = api.storage.store('', 'pods').watch(
      null,
      () => true,
      (e) => {
        if (e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED')
          emitter.emit('pod', e.object, e.type);
      },
    );
    if (podWatch.ok) running.push({ stop: podWatch.cancel });
    // One recorder (client-go's, aggregating) for the kubelet's events and the controllers'.
    const events = new EventRecorder(api.storage.store('', 'events'), nodeName);
    const controlPlane = startControlPlane({ nodeName, api, events, logger });
    running.push(controlPlane);
    const kubelet = await startKubelet({
      config: opts,
      nodeName,
      hostIp: LOOPBACK.has(host) || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host,
      devicePluginDir,
      stateDir,
      shape,
      sysfsRoot,
      api,
      controlPlane,
      events,
      emit: (event, ...args) => emitter.emit(event, ...args),
      logger,
    });
    running.push(kubelet);
    return { api, kubelet };
  };
  const { api, kubelet } = await compose().catch(async (err: unknown) => {
    await stopAll().catch(() => undefined);
    throw err instanceof KubeletSimError
      ? err
      : new KubeletSimError('Internal', `failed to start the kubelet simulator: ${String(err)}`, {
          cause: err,
        });
  });

  let stopping: Promise<void> | null = null;
  const sim: KubeletSim = {
    url: api.url,
    kubeconfigPath: join(stateDir, 'kubeconfig'),
    podResourcesSocket: kubelet.podResourcesSocket,
    devicePluginDir,
    nodeName,
    sysfsRoot,
    admitPod: (pod) => kubelet.admitPod(pod),
    dryRunPod: (pod, override) => kubelet.dryRunPod(pod, override),
    deletePod: (namespace, name) => kubelet.deletePod(namespace, name),
    restart: () => kubelet.restart(),
    stopKubelet: () => kubelet.stopKubelet(),
    startKubelet: () => kubelet.startKubelet(),
    state: () => kubelet.state(),
    pluginWatchMode: () => kubelet.pluginWatchMode(),
    on(event, listener) {
      emitter.on(event, listener);
      return sim;
    },
    off(event, listener) {
      emitter.off(event, listener);
      return sim;
    },
    stop() {
      stopping ??= stopAll();
      return stopping;
    },
  };
  writeKubeconfig(sim.kubeconfigPath, sim.url, opts.controlToken);
  logger.info(
    {
      component: 'kubelet',
      url: sim.url,
      kubeconfig: sim.kubeconfigPath,
      podResources: sim.podResourcesSocket,
      devicePluginDir,
    },
    'kubelet simulator started',
  );
  return sim;
}

/**
 * A kubeconfig (JSON is valid YAML) with one cluster, one user and a current context. The server
 * is plain HTTP; @kubernetes/client-node only allows that with insecure-skip-tls-verify set.
 */
function writeKubeconfig(path: string, server: string, token: string | undefined): void {
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'kubelet-sim', cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'kubelet-sim', user: token ? { token } : {} }],
    contexts: [
      { name: 'kubelet-sim', context: { cluster: 'kubelet-sim', user: 'kubelet-sim', namespace: 'default' } },
    ],
    'current-context': 'kubelet-sim',
    preferences: {},
  };
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
}
