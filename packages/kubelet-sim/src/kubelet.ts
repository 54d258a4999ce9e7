// startKubelet, the simulator's pkg/kubelet/kubelet.go (NewMainKubelet, then Run): builds the
// container manager's parts (cm/: the device and DRA managers, and the CPU, Memory and Topology
// Managers of @plugboard/topology), the pod manager and workers, the PodResources server, the plugin
// manager's watcher, the node status reporter and the node lease; starts them in the kubelet's
// order; then connects to the API server (pod logs, configz, the control API, evictions reach it
// there) and registers the Node, which it keeps in step with the device manager. It is a client of
// the API server and of the control plane, both started before it.

import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { DEVICE_PLUGIN_TYPE, DRA_PLUGIN_TYPE, type DirectoryWatchMode } from '@plugboard/proto';
import { CpuManager, MemoryManager, TopologyAdmission } from '@plugboard/topology';
import { DEFAULT_POD_RESOURCES_RATE_LIMIT } from './apis/podresources/grpc/ratelimit.js';
import { PodResourcesServer } from './apis/podresources/server.js';
import type { EventRecorder } from './apiserver/events.js';
import type { KubeApiServer } from './apiserver/kube-apiserver.js';
import type { KubeObject } from './apiserver/object-store.js';
import { DeviceManager } from './cm/devicemanager/manager.js';
import { DEFAULT_GRACE_PERIOD_MS } from './cm/devicemanager/types.js';
import { DraManager } from './cm/dra/manager.js';
import type { ControlPlane } from './controlplane/control-plane.js';
import { fromTopology, KubeletSimError } from './errors.js';
import {
  admissionsView,
  kubeletConfigz,
  kubeletState,
  nodeAllocatable,
  type KubeletParts,
} from './kubelet-state.js';
import type { NodeShape } from './machine/node-shape.js';
import { NodeLeaseController } from './nodelease/lease-controller.js';
import { NodeStatusReporter } from './nodestatus/status-reporter.js';
import { PluginWatcher } from './pluginmanager/plugin-watcher.js';
import { PodManager } from './pods/pod-manager.js';
import type { PodSpecInput } from './pods/pod-spec.js';
import { DEFAULT_BACKOFF, type AdmittedPod } from './pods/runtime.js';
import type { AdmissionDecision, TopologyOverride } from '@plugboard/topology';
import type { KubeletSimEvents, KubeletSimOptions, KubeletState } from './types.js';

export interface KubeletOptions {
  /** The kubelet's configuration (the simulator's options; the API server's and paths are used elsewhere). */
  config: KubeletSimOptions;
  nodeName: string;
  /** The Node's InternalIP. */
  hostIp: string;
  devicePluginDir: string;
  stateDir: string;
  shape: NodeShape;
  sysfsRoot: string;
  api: KubeApiServer;
  controlPlane: ControlPlane;
  events: EventRecorder;
  /** The simulator's events (`sim.on(…)`). */
  emit: <E extends keyof KubeletSimEvents>(event: E, ...args: KubeletSimEvents[E]) => void;
  logger: Logger;
}

export interface Kubelet {
  podResourcesSocket: string;
  admitPod(pod: PodSpecInput): Promise<AdmittedPod>;
  dryRunPod(pod: PodSpecInput, override?: TopologyOverride): Promise<AdmissionDecision>;
  deletePod(namespace: string, name: string): Promise<void>;
  /** A kubelet restart: sockets and registrations go, the checkpoints and the pods stay. */
  restart(): Promise<void>;
  /**
   * The first half of a restart, held: the kubelet's sockets (kubelet.sock, PodResources) go and
   * every plugin stream closes, until `startKubelet`. The API server and control plane stay.
   */
  stopKubelet(): Promise<void>;
  /** The second half: the kubelet starts again from its checkpoints; plugins register again. */
  startKubelet(): Promise<void>;
  state(): KubeletState;
  /** How the plugin watcher follows plugins_registry (watch, or poll and why); null without one. */
  pluginWatchMode(): { mode: DirectoryWatchMode; reason: string | null } | null;
  stop(): Promise<void>;
}

export async function startKubelet(o: KubeletOptions): Promise<Kubelet> {
  const { config, nodeName, shape, api, logger } = o;
  const resourceStore = (name: string) => api.storage.store('resource.k8s.io', name);

  const dra = new DraManager({
    nodeName,
    stateDir: o.stateDir,
    claims: resourceStore('resourceclaims'),
    slices: resourceStore('resourceslices'),
    ...(config.draWipingDelayMs !== undefined ? { wipingDelayMs: config.draWipingDelayMs } : {}),
    logger,
  });
  const deviceManager = new DeviceManager({
    devicePluginDir: o.devicePluginDir,
    gracePeriodMs: config.gracePeriodMs ?? DEFAULT_GRACE_PERIOD_MS,
    ...(config.dialTimeoutMs !== undefined ? { dialTimeoutMs: config.dialTimeoutMs } : {}),
    logger,
  });
  const cpuManager = fromTopology(
    () => new CpuManager(shape, config.cpuManagerPolicy ?? 'static', config.reservedCpus ?? []),
  );
  const memoryManager = new MemoryManager(shape, config.memoryManagerPolicy ?? 'Static');
  const topology = new TopologyAdmission({
    policy: config.topologyManagerPolicy ?? 'best-effort',
    scope: config.topologyManagerScope ?? 'container',
    numaIds: shape.numaNodes.map((n) => n.id),
    deviceManager,
    cpuManager,
    memoryManager,
  });
  const pods = new PodManager({
    nodeName,
    hostIp: o.hostIp,
    deviceManager,
    cpuManager,
    memoryManager,
    topology,
    store: api.storage.store('', 'pods'),
    events: o.events,
    backoff: { ...DEFAULT_BACKOFF, ...(config.crashLoopBackOff ?? {}) },
    dra: {
      manager: dra,
      claimController: o.controlPlane.claimController,
      scheduler: o.controlPlane.scheduler,
    },
    syncFrequencyMs: config.syncFrequencyMs ?? 60_000,
    nodeAllocatable: () => nodeAllocatable(shape, deviceManager, cpuManager),
    logger,
  });
  const podResources = new PodResourcesServer({
    socketPath: resolve(config.podResourcesSocket ?? join(o.stateDir, 'pod-resources', 'kubelet.sock')),
    deviceManager,
    cpuManager,
    memoryManager,
    pods,
    dra,
    rateLimit:
      config.podResourcesRateLimit === undefined
        ? DEFAULT_POD_RESOURCES_RATE_LIMIT
        : config.podResourcesRateLimit,
    logger,
  });
  const pluginWatcher = config.pluginsRegistryDir
    ? new PluginWatcher({
        dir: resolve(config.pluginsRegistryDir),
        handlers: new Map([
          [DEVICE_PLUGIN_TYPE, deviceManager.getWatcherHandler()],
          [DRA_PLUGIN_TYPE, dra.watcherHandler()],
        ]),
        timeoutMs: config.dialTimeoutMs ?? 10_000,
        logger,
        onRejected: (e) => o.emit('registration-rejected', e),
        ...(config.pluginsRegistryWatch ? { watch: config.pluginsRegistryWatch } : {}),
      })
    : null;

  const nodeUid = randomUUID();
  const createdAt = new Date();
  const nodeStatus = new NodeStatusReporter({
    store: api.storage.store('', 'nodes'),
    events: o.events,
    compute: () => {
      const { capacity, allocatable } = deviceManager.nodeResources();
      return {
        name: nodeName,
        uid: nodeUid,
        createdAt,
        readySince: createdAt,
        hostIp: o.hostIp,
        // The kubelet's server (configz, pod logs) is the API server's listener.
        port: api.port,
        shape,
        reservedCpus: cpuManager.reservedCpus().length,
        capacity,
        allocatable,
      };
    },
    onWrite: (node: KubeObject) => o.emit('node', node),
    ...(config.nodeStatusReportFrequencyMs !== undefined
      ? { reportFrequencyMs: config.nodeStatusReportFrequencyMs }
      : {}),
  });
  const nodeLease = new NodeLeaseController({
    store: api.storage.store('coordination.k8s.io', 'leases'),
    nodeName,
    nodeUid,
    ...(config.nodeLeaseRenewIntervalMs !== undefined
      ? { renewIntervalMs: config.nodeLeaseRenewIntervalMs }
      : {}),
  });

  deviceManager.on('registered', (e) => o.emit('registered', e));
  deviceManager.on('registration-rejected', (e) => o.emit('registration-rejected', e));
  deviceManager.on('devices', (e) => o.emit('devices', e));
  deviceManager.on('disconnected', (e) => o.emit('disconnected', e));
  deviceManager.on('resource-removed', (e) => o.emit('resource-removed', e));

  const parts: KubeletParts = {
    nodeName,
    shape,
    sysfsRoot: o.sysfsRoot,
    deviceManager,
    cpuManager,
    memoryManager,
    topology,
    pods,
    dra,
  };
  let stopped = false;
  // The kubelet process is down (between stopKubelet and startKubelet).
  let down = false;
  let restarting: Promise<void> | null = null;
  const goDown = async (): Promise<void> => {
    down = true;
    await podResources.stop();
    await deviceManager.stop();
  };
  const comeUp = async (): Promise<void> => {
    // The DRA manager forgets its plugins, reads its checkpoint back and wipes this node's
    // ResourceSlices; the drivers register again through the plugin watcher.
    await dra.restart();
    await deviceManager.startAfterStop();
    pluginWatcher?.rescan();
    pods.reconcileAllocations();
    void pods.reconcileDra();
    await podResources.start();
    down = false;
    nodeStatus.restarted();
    o.emit('restarted');
  };
  /** One restart step at a time (restart, stop, start), each refused once the simulator is stopped. */
  const step = (what: string, run: () => Promise<void>): Promise<void> => {
    if (stopped) throw new KubeletSimError('Stopped', 'the kubelet simulator is stopped');
    if (restarting) return restarting.then(() => step(what, run));
    logger.info({ component: 'kubelet' }, what);
    restarting = run().finally(() => {
      restarting = null;
    });
    return restarting;
  };
  const restart = (): Promise<void> =>
    step('kubelet restarting: deleting device-plugin sockets, keeping the checkpoint', async () => {
      if (!down) await goDown();
      await comeUp();
    });
  const stopKubelet = (): Promise<void> =>
    step('kubelet stopping: deleting device-plugin sockets, keeping the checkpoint', async () => {
      if (!down) await goDown();
    });
  const startKubelet = (): Promise<void> =>
    step('kubelet starting from its checkpoint', async () => {
      if (down) await comeUp();
    });
  const state = () => kubeletState(parts);
  const disconnect: (() => void)[] = [];

  const kubelet: Kubelet = {
    podResourcesSocket: podResources.socketPath,
    admitPod: (pod) => pods.admit(pod),
    dryRunPod: (pod, override) => pods.dryRun(pod, override),
    deletePod: (namespace, name) => pods.delete(namespace, name),
    restart,
    stopKubelet,
    startKubelet,
    state,
    pluginWatchMode: () => pluginWatcher?.watchMode ?? null,
    async stop() {
      if (stopped) return;
      stopped = true;
      await restarting?.catch(() => undefined);
      for (const d of disconnect.splice(0)) d();
      pods.stop();
      dra.stop();
      nodeLease.stop();
      nodeStatus.stop();
      pluginWatcher?.stop();
      if (!down) {
        await podResources.stop();
        await deviceManager.stop();
      }
    },
  };

  try {
    await deviceManager.start();
    await dra.start();
    pluginWatcher?.start();
    pods.reconcileAllocations();
    await podResources.start();
  } catch (err) {
    await kubelet.stop().catch(() => undefined);
    throw err;
  }
  disconnect.push(
    api.kubelet.connect({
      containersOf: (namespace, name) => pods.containersOf(namespace, name),
      configz: () => kubeletConfigz(parts),
      admitPod: (pod) => pods.admit(pod),
      dryRunPod: (pod, override) => pods.dryRun(pod, override),
      deletePod: (namespace, name) => pods.delete(namespace, name),
      restart,
      state,
      admissions: () => admissionsView(parts),
      evictionCandidates: () => pods.evictionCandidates(),
      evict: (namespace, name, uid, reason, message) => pods.evict(namespace, name, uid, reason, message),
    }),
  );
  nodeStatus.register();
  // From registration on, the Node follows the device manager.
  deviceManager.on('changed', () => nodeStatus.update());
  nodeLease.start();
  return kubelet;
}
