// startKubeletSim, the simulator's pkg/kubelet/kubelet.go: wires the container manager's parts
// (cm/: device, CPU, Memory and Topology Managers), the plugin manager, the pod manager, the
// PodResources server and the API-server slice into one simulated node, keeps the Node object in
// step with the device manager, and writes `<stateDir>/kubeconfig` so Kubernetes clients can
// point at it. Public types are in types.ts.

import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { DEVICE_PLUGIN_TYPE, DRA_PLUGIN_TYPE } from '@plugboard/proto';
import { DEFAULT_POD_RESOURCES_RATE_LIMIT } from './apis/podresources/grpc/ratelimit.js';
import { PodResourcesServer } from './apis/podresources/server.js';
import { ensureNamespace, kubernetesService, SYSTEM_NAMESPACES } from './apiserver/bootstrap.js';
import { EventRecorder } from './apiserver/events.js';
import { ObjectStore, ResourceVersionClock } from './apiserver/object-store.js';
import { ApiServer, storeKey } from './apiserver/server.js';
import { resourceStrategies } from './apiserver/registry/resource.js';
import { compileSelector } from './scheduler/index.js';
import { NodeLeaseController } from './nodelease/lease-controller.js';
import { NodeStatusReporter } from './nodestatus/status-reporter.js';
import { CpuManager, MAX_ALIGNABLE_NUMA_NODES, MemoryManager, TopologyAdmission } from '@plugboard/topology';
import { DeviceManager } from './cm/devicemanager/manager.js';
import { DraManager } from './cm/dra/manager.js';
import {
  DeviceTaintEvictionController,
  DISRUPTION_MESSAGE,
  DISRUPTION_REASON,
} from './controlplane/device-taint-eviction.js';
import { ResourceClaimController } from './controlplane/resourceclaim-controller.js';
import { DraScheduler } from './controlplane/scheduler.js';
import { DEFAULT_GRACE_PERIOD_MS } from './cm/devicemanager/types.js';
import { configz } from './configz.js';
import { fromTopology, KubeletSimError } from './errors.js';
import {
  buildNodeShape,
  totalCpus,
  totalHugepages,
  totalMemoryBytes,
  type NodeShape,
} from './machine/node-shape.js';
import { writeSysfs } from './machine/sysfs.js';
import { PluginWatcher } from './pluginmanager/plugin-watcher.js';
import { PodManager } from './pods/pod-manager.js';
import { DEFAULT_BACKOFF } from './pods/runtime.js';
import type { KubeObject } from './apiserver/object-store.js';
import type { DeviceManagerState, KubeletSim, KubeletSimOptions } from './types.js';

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

  const clock = new ResourceVersionClock();
  const historySize = opts.watchHistorySize ?? 1000;
  const nodes = new ObjectStore('Node', 'NodeList', false, clock, historySize);
  const podStore = new ObjectStore('Pod', 'PodList', true, clock, historySize);
  // Events expire in a real cluster (1 h TTL); here the oldest go beyond maxEvents.
  const eventStore = new ObjectStore('Event', 'EventList', true, clock, historySize, opts.maxEvents ?? 1000);
  const recorder = new EventRecorder(eventStore, nodeName);
  const namespaces = new ObjectStore('Namespace', 'NamespaceList', false, clock, historySize);
  const services = new ObjectStore('Service', 'ServiceList', true, clock, historySize);
  const leases = new ObjectStore(
    'Lease',
    'LeaseList',
    true,
    clock,
    historySize,
    Infinity,
    'coordination.k8s.io/v1',
  );
  // resource.k8s.io/v1: what DRA drivers, operators and the simulated scheduler write.
  const draStore = (kind: string, namespaced: boolean) =>
    new ObjectStore(kind, `${kind}List`, namespaced, clock, historySize, Infinity, 'resource.k8s.io/v1');
  const deviceClasses = draStore('DeviceClass', false);
  const deviceTaintRules = draStore('DeviceTaintRule', false);
  const resourceClaims = draStore('ResourceClaim', true);
  const resourceClaimTemplates = draStore('ResourceClaimTemplate', true);
  const resourceSlices = draStore('ResourceSlice', false);
  for (const ns of SYSTEM_NAMESPACES) ensureNamespace(namespaces, ns);
  // A namespace a pod names exists from then on (the slice has no namespace writes).
  podStore.watch(
    null,
    () => true,
    (e) => {
      if (e.type === 'ADDED')
        ensureNamespace(namespaces, (e.object as KubeObject).metadata.namespace ?? 'default');
    },
  );

  // Dynamic Resource Allocation: the kubelet's DRA manager and, around the node, the control
  // plane's parts (scheduler, ResourceClaim controller, device taint eviction).
  const podsRef: { current: PodManager | null } = { current: null };
  const dra = new DraManager({
    nodeName,
    stateDir,
    claims: resourceClaims,
    slices: resourceSlices,
    ...(opts.draWipingDelayMs !== undefined ? { wipingDelayMs: opts.draWipingDelayMs } : {}),
    logger,
    onPodsHealthChanged: (uids) => podsRef.current?.onDraHealth(uids),
  });
  const claimController = new ResourceClaimController({
    claims: resourceClaims,
    templates: resourceClaimTemplates,
    events: recorder,
    logger,
  });
  const draScheduler = new DraScheduler({
    nodeName,
    nodes,
    claims: resourceClaims,
    slices: resourceSlices,
    classes: deviceClasses,
    templates: resourceClaimTemplates,
    taintRules: deviceTaintRules,
    clock,
    logger,
  });

  const deviceManager = new DeviceManager({
    devicePluginDir,
    gracePeriodMs: opts.gracePeriodMs ?? DEFAULT_GRACE_PERIOD_MS,
    ...(opts.dialTimeoutMs !== undefined ? { dialTimeoutMs: opts.dialTimeoutMs } : {}),
    logger,
  });
  const cpuManager = fromTopology(
    () => new CpuManager(shape, opts.cpuManagerPolicy ?? 'static', opts.reservedCpus ?? []),
  );
  const memoryManager = new MemoryManager(shape, opts.memoryManagerPolicy ?? 'Static');
  const topology = new TopologyAdmission({
    policy: topologyPolicy,
    scope: opts.topologyManagerScope ?? 'container',
    numaIds: shape.numaNodes.map((n) => n.id),
    deviceManager,
    cpuManager,
    memoryManager,
  });
  const hostIp = LOOPBACK.has(host) || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const pods = new PodManager({
    nodeName,
    hostIp,
    deviceManager,
    cpuManager,
    memoryManager,
    topology,
    store: podStore,
    events: recorder,
    backoff: { ...DEFAULT_BACKOFF, ...(opts.crashLoopBackOff ?? {}) },
    dra: { manager: dra, claimController, scheduler: draScheduler },
    syncFrequencyMs: opts.syncFrequencyMs ?? 60_000,
    nodeAllocatable: () => {
      const { allocatable } = deviceManager.nodeResources();
      return new Map([
        ...allocatable,
        ['cpu', (totalCpus(shape) - cpuManager.reservedCpus().length) * 1000],
        ['memory', totalMemoryBytes(shape)],
        ['hugepages-2Mi', totalHugepages(shape, 'hugepages-2Mi')],
        ['hugepages-1Gi', totalHugepages(shape, 'hugepages-1Gi')],
        ['pods', shape.maxPods],
      ]);
    },
    logger,
  });
  podsRef.current = pods;
  const evictions = new DeviceTaintEvictionController({
    claims: resourceClaims,
    slices: resourceSlices,
    taintRules: deviceTaintRules,
    clock,
    events: recorder,
    pods: () => pods.evictionCandidates(),
    evict: (namespace, name, uid) => pods.evict(namespace, name, uid, DISRUPTION_REASON, DISRUPTION_MESSAGE),
    logger,
  });
  const podResources = new PodResourcesServer({
    socketPath: resolve(opts.podResourcesSocket ?? join(stateDir, 'pod-resources', 'kubelet.sock')),
    deviceManager,
    cpuManager,
    memoryManager,
    pods,
    dra,
    rateLimit:
      opts.podResourcesRateLimit === undefined
        ? DEFAULT_POD_RESOURCES_RATE_LIMIT
        : opts.podResourcesRateLimit,
    logger,
  });

  const pluginWatcher = opts.pluginsRegistryDir
    ? new PluginWatcher({
        dir: resolve(opts.pluginsRegistryDir),
        handlers: new Map([
          [DEVICE_PLUGIN_TYPE, deviceManager.getWatcherHandler()],
          [DRA_PLUGIN_TYPE, dra.watcherHandler()],
        ]),
        timeoutMs: opts.dialTimeoutMs ?? 10_000,
        logger,
        onRejected: (e) => emitter.emit('registration-rejected', e),
        ...(opts.pluginsRegistryWatch ? { watch: opts.pluginsRegistryWatch } : {}),
      })
    : null;

  const nodeUid = randomUUID();
  const createdAt = new Date();
  let api: ApiServer | null = null;
  const nodeStatus = new NodeStatusReporter({
    store: nodes,
    events: recorder,
    compute: () => {
      const { capacity, allocatable } = deviceManager.nodeResources();
      return {
        name: nodeName,
        uid: nodeUid,
        createdAt,
        readySince: createdAt,
        hostIp,
        port: api?.port ?? 0,
        shape,
        reservedCpus: cpuManager.reservedCpus().length,
        capacity,
        allocatable,
      };
    },
    onWrite: (node) => emitter.emit('node', node),
    ...(opts.nodeStatusReportFrequencyMs !== undefined
      ? { reportFrequencyMs: opts.nodeStatusReportFrequencyMs }
      : {}),
  });
  const nodeLease = new NodeLeaseController({
    store: leases,
    nodeName,
    nodeUid,
    ...(opts.nodeLeaseRenewIntervalMs !== undefined
      ? { renewIntervalMs: opts.nodeLeaseRenewIntervalMs }
      : {}),
  });
  let registered = false;
  const publishNode = () => {
    if (registered) nodeStatus.update();
  };

  deviceManager.on('changed', publishNode);
  deviceManager.on('registered', (e) => emitter.emit('registered', e));
  deviceManager.on('registration-rejected', (e) => emitter.emit('registration-rejected', e));
  deviceManager.on('devices', (e) => emitter.emit('devices', e));
  deviceManager.on('disconnected', (e) => emitter.emit('disconnected', e));
  deviceManager.on('resource-removed', (e) => emitter.emit('resource-removed', e));

  const state = (): DeviceManagerState => ({
    node: {
      name: nodeName,
      numaNodes: shape.numaNodes.map((n) => ({
        id: n.id,
        cpus: [...n.cpus],
        memoryBytes: n.memoryBytes,
        hugepages: { ...n.hugepages },
        memory: Object.fromEntries(
          memoryManager
            .perNuma()
            .filter((m) => m.numaNode === n.id)
            .map((m) => [m.type, { allocatable: m.allocatable, free: m.free }]),
        ),
      })),
      cpus: shape.cpus.map((c) => ({ ...c, siblings: [...c.siblings] })),
      threadsPerCore: shape.threadsPerCore,
      reservedCpus: cpuManager.reservedCpus(),
      sharedCpus: cpuManager.sharedPool(),
      cpuManagerPolicy: cpuManager.policy,
      memoryManagerPolicy: memoryManager.policy,
      topologyManagerPolicy: topology.policy,
      topologyManagerScope: topology.scope,
      sysfsRoot,
    },
    resources: Object.fromEntries(deviceManager.resources().map((r) => [r.name, r])),
    pods: pods.allPods().map((p) => {
      const obj = pods.render(p);
      const status = obj['status'] as { phase: string; reason?: string };
      return {
        namespace: p.spec.namespace,
        name: p.spec.name,
        uid: p.spec.uid,
        phase: status.phase,
        reason: status.reason ?? null,
        containers: [...p.spec.initContainers, ...p.spec.containers].map((c) => {
          const allocations = deviceManager.containerAllocations(p.spec.uid, c.name);
          const runtime = [...p.init, ...p.app].find((r) => r.spec === c);
          return {
            name: c.name,
            init: c.init,
            state: runtime
              ? runtime.state.kind === 'waiting'
                ? runtime.state.reason
                : runtime.state.kind
              : 'unknown',
            restartCount: runtime?.restartCount ?? 0,
            devices: Object.fromEntries(allocations.map((a) => [a.resource, [...a.deviceIds]])),
            cpuIds: cpuManager.cpusOf(p.spec.uid, c.name),
            memory: memoryManager.blocksOf(p.spec.uid, c.name),
            allocateResponses: Object.fromEntries(allocations.map((a) => [a.resource, a.response])),
            claims: c.claims.map((x) => ({ ...x })),
            cdiDevices: pods.cdiDevicesOf(p, c),
          };
        }),
        admission: p.admission,
        resourceClaimStatuses: p.resourceClaimStatuses.map((x) => ({ ...x })),
        unschedulable: p.unschedulable ? { ...p.unschedulable } : null,
      };
    }),
    dra: dra.state(),
  });

  let stopped = false;
  let restarting: Promise<void> | null = null;
  const restart = async (): Promise<void> => {
    if (stopped) throw new KubeletSimError('Stopped', 'the kubelet simulator is stopped');
    if (restarting) return restarting;
    restarting = (async () => {
      logger.info(
        { component: 'kubelet' },
        'kubelet restarting: deleting device-plugin sockets, keeping the checkpoint',
      );
      await podResources.stop();
      // The DRA manager forgets its plugins, reads its checkpoint back and wipes this node's
      // ResourceSlices; the drivers register again through the plugin watcher.
      await dra.restart();
      await deviceManager.restart();
      pluginWatcher?.rescan();
      pods.reconcileAllocations();
      void pods.reconcileDra();
      await podResources.start();
      nodeStatus.restarted();
      emitter.emit('restarted');
    })().finally(() => {
      restarting = null;
    });
    return restarting;
  };

  const sim: KubeletSim = {
    url: '',
    kubeconfigPath: join(stateDir, 'kubeconfig'),
    podResourcesSocket: podResources.socketPath,
    devicePluginDir,
    nodeName,
    sysfsRoot,
    admitPod: async (pod) => {
      const admitted = await pods.admit(pod);
      return admitted;
    },
    dryRunPod: (pod, override) => pods.dryRun(pod, override),
    deletePod: (namespace, name) => pods.delete(namespace, name),
    restart,
    state,
    pluginWatchMode: () => pluginWatcher?.watchMode ?? null,
    on(event, listener) {
      emitter.on(event, listener);
      return sim;
    },
    off(event, listener) {
      emitter.off(event, listener);
      return sim;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      pods.stop();
      evictions.stop();
      dra.stop();
      nodeLease.stop();
      nodeStatus.stop();
      pluginWatcher?.stop();
      await api?.stop();
      await podResources.stop();
      await deviceManager.stop();
    },
  };

  podStore.watch(
    null,
    () => true,
    (e) => {
      if (e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED')
        emitter.emit('pod', e.object, e.type);
    },
  );

  try {
    await deviceManager.start();
    await dra.start();
    evictions.start();
    pluginWatcher?.start();
    pods.reconcileAllocations();
    await podResources.start();
    api = new ApiServer({
      host,
      port,
      token: opts.controlToken,
      podProxyTargets: opts.podProxyTargets,
      ...(opts.controlApi === false ? { controlApi: false } : {}),
      ...(opts.bookmarkIntervalMs !== undefined ? { bookmarkIntervalMs: opts.bookmarkIntervalMs } : {}),
      logger,
      backend: {
        stores: new Map([
          [storeKey('', 'namespaces'), namespaces],
          [storeKey('', 'nodes'), nodes],
          [storeKey('', 'pods'), podStore],
          [storeKey('', 'events'), eventStore],
          [storeKey('', 'services'), services],
          [storeKey('coordination.k8s.io', 'leases'), leases],
          [storeKey('resource.k8s.io', 'deviceclasses'), deviceClasses],
          [storeKey('resource.k8s.io', 'devicetaintrules'), deviceTaintRules],
          [storeKey('resource.k8s.io', 'resourceclaims'), resourceClaims],
          [storeKey('resource.k8s.io', 'resourceclaimtemplates'), resourceClaimTemplates],
          [storeKey('resource.k8s.io', 'resourceslices'), resourceSlices],
        ]),
        strategies: resourceStrategies((expression) => {
          const compiled = compileSelector(expression);
          return compiled.ok ? null : compiled.error.detail;
        }),
        containersOf: (namespace, name) => pods.containersOf(namespace, name),
        admitPod: (pod) => pods.admit(pod),
        dryRunPod: (pod, override) => pods.dryRun(pod, override),
        deletePod: (namespace, name) => pods.delete(namespace, name),
        restart,
        state,
        configz: () =>
          configz({
            maxPods: shape.maxPods,
            cpuManagerPolicy: cpuManager.policy,
            memoryManagerPolicy: memoryManager.policy,
            topologyManagerPolicy: topology.policy,
            topologyManagerScope: topology.scope,
            reservedCpus: cpuManager.reservedCpus(),
          }),
        // Read straight from the managers: what a gateway polls every second, without rendering
        // every pod and the whole node as state() does.
        admissions: () => ({
          node: {
            topologyManagerPolicy: topology.policy,
            topologyManagerScope: topology.scope,
            cpuManagerPolicy: cpuManager.policy,
            memoryManagerPolicy: memoryManager.policy,
            reservedCpus: cpuManager.reservedCpus(),
          },
          pods: pods.allPods().map((p) => ({
            namespace: p.spec.namespace,
            name: p.spec.name,
            admission: p.admission,
          })),
        }),
      },
    });
    sim.url = await api.start();
  } catch (err) {
    await sim.stop().catch(() => undefined);
    throw err instanceof KubeletSimError
      ? err
      : new KubeletSimError('Internal', `failed to start the kubelet simulator: ${String(err)}`, {
          cause: err,
        });
  }
  services.upsert(kubernetesService(api.port, createdAt));
  nodeStatus.register();
  registered = true;
  nodeLease.start();
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
