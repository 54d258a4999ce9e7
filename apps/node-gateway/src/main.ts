// Wiring only: builds the gateway from its config — plugins, PodResources poller, Kubernetes
// informers, fault store, scenario runner, node model, stream hub, metrics and the HTTP server — and
// returns a handle that stops all of it in reverse order.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import { startPlugins, type PluginRuntime } from '@plugboard/plugin';
import type { KubeConfig } from '@kubernetes/client-node';
import type { GatewayConfig } from './config.js';
import { GatewayError } from './errors.js';
import { NodeModel } from './model/node-model.js';
import { readiness } from './model/readiness.js';
import type { FaultRecord, GatewayInfo, NodeEvent, SourceState, SourcesState } from '@plugboard/api';
import { FaultStore, type FaultClearCause } from './faults/fault-store.js';
import { ScenarioRunner } from './faults/scenarios.js';
import { PodResourcesPoller } from './sources/pod-resources.js';
import type { KubeSource } from './sources/kube.js';
import { attachPlugins, pluginActuator } from './sources/plugins.js';
import { KubeletControl } from './sources/kubelet-control.js';
import { readSysfsTopology } from './sources/sysfs-topology.js';
import { newAdmissionRejections, type TopologyInput } from './model/topology.js';
import { checkExposure, createAuthorizer, readTokenFile } from './http/auth.js';
import { createMetrics } from './http/metrics.js';
import { StreamHub } from './http/stream.js';
import { attachHistory } from './http/history-feed.js';
import { createHandlers } from './http/routes.js';
import { GATEWAY_VERSION } from './version.js';

/** Preferred-allocation answers kept for "why here?" (newest win; older ones are forgotten). */
const MAX_PREFERRED_RECORDS = 256;

export interface GatewayDeps {
  logger?: Logger;
  /** Already-started plugins to serve instead of starting `config.plugins` (the caller stops them). */
  plugins?: Pick<PluginRuntime, 'resources'>;
  /** Kubernetes client config to use instead of loading one from `config.kube`. */
  kubeConfig?: KubeConfig;
  now?: () => Date;
}

export interface Gateway {
  /** http://host:port */
  url: string;
  model: NodeModel;
  faults: FaultStore;
  scenarios: ScenarioRunner;
  stop(): Promise<void>;
}

export async function startGateway(config: GatewayConfig, deps: GatewayDeps = {}): Promise<Gateway> {
  const now = deps.now ?? (() => new Date());
  const rootLogger = (deps.logger ?? pino({ level: config.logLevel })).child({ node: config.nodeName });
  const logger = rootLogger.child({ component: 'gateway' });
  const cleanups: (() => Promise<void> | void)[] = [];
  const stopAll = async (): Promise<void> => {
    for (const fn of cleanups.splice(0).reverse()) {
      try {
        await fn();
      } catch (err) {
        logger.warn({ err }, 'error while stopping');
      }
    }
  };

  try {
    // --- security posture, decided before anything listens
    const kubeMode = config.kube.mode;
    // @kubernetes/client-node costs ~70 MB of RSS once loaded: load it only when the API is used.
    const kubeModule = kubeMode === 'disabled' ? null : await import('./sources/kube.js');
    const kc =
      kubeModule &&
      (deps.kubeConfig ??
        kubeModule.loadKubeConfig(kubeMode as 'in-cluster' | 'kubeconfig', config.kube.kubeconfig));
    const token = config.auth.tokenFile ? readTokenFile(config.auth.tokenFile) : null;
    const reviewer =
      config.auth.kubernetes.enabled && kc && kubeModule
        ? kubeModule.createKubeReviewer(kc, { ...config.auth.kubernetes, nodeName: config.nodeName })
        : null;
    const authorizer = createAuthorizer({ token, reviewer });
    const exposure = checkExposure({
      host: config.listen.host,
      authRequired: authorizer.required,
      insecureAllowUnauthenticated: config.auth.insecureAllowUnauthenticated,
    });
    if (exposure === 'loopback-unauthenticated') {
      logger.warn(
        { listen: config.listen.host },
        'mutations need no token: listening on loopback without --auth-token-file',
      );
    } else if (exposure === 'insecure-unauthenticated') {
      logger.warn(
        { listen: config.listen.host },
        'INSECURE: anyone who can reach this address can inject faults (--insecure-allow-unauthenticated)',
      );
    }

    // --- model, faults, metrics, stream
    const sources: SourcesState = {
      podResources: config.podResources.socket
        ? { status: 'connecting', lastSuccess: null, reason: null }
        : {
            status: 'disabled',
            lastSuccess: null,
            reason: 'PodResources polling disabled (no socket configured)',
          },
      kubernetes:
        kubeMode === 'disabled'
          ? {
              status: 'disabled',
              lastSuccess: null,
              reason: 'Kubernetes API disabled (--no-kube or no in-cluster config)',
            }
          : { status: 'connecting', lastSuccess: null, reason: null },
    };
    let kube: KubeSource | null = null;
    const nodeEvent = (type: 'Normal' | 'Warning', reason: string, message: string): void => {
      if (kube && config.kube.emitEvents) void kube.postNodeEvent({ type, reason, message });
    };
    const model: NodeModel = new NodeModel({
      nodeName: config.nodeName,
      eventRingSize: config.events.ringSize,
      sources,
      now,
      gateway: {
        version: GATEWAY_VERSION,
        startedAt: now().toISOString(),
        faultsEnabled: config.faults.enabled,
        authRequired: authorizer.required,
        persistence: { enabled: false, reason: 'starting' },
      } satisfies GatewayInfo,
    });
    cleanups.push(() => model.close());
    const addEvent = (
      e: Omit<NodeEvent, 'seq' | 'at' | 'pod' | 'deviceIds' | 'resource'> & Partial<NodeEvent>,
    ): void => {
      model.addEvent({ resource: null, deviceIds: [], pod: null, ...e });
    };
    const metrics = createMetrics(() => model.snapshot());

    // --- NUMA placement: the host layout once from sysfs; kubelet settings from kubelet-sim if any
    const sysfs = readSysfsTopology(config.topology.sysfsRoot);
    if (sysfs.reason) {
      logger.warn(
        { sysfsRoot: config.topology.sysfsRoot, reason: sysfs.reason },
        'NUMA layout unknown: exclusive CPUs cannot be placed on NUMA nodes',
      );
    }
    let topology: TopologyInput = {
      sysfsRoot: config.topology.sysfsRoot,
      host: sysfs.topology,
      hostReason: sysfs.reason,
      kubelet: null,
      kubeletReason:
        kubeMode === 'kubeconfig'
          ? 'checking the kubeconfig server for a kubelet-sim control API'
          : 'a real kubelet does not report its Topology Manager settings (only kubelet-sim does, behind a kubeconfig)',
      preferred: [],
    };
    const setTopology = (patch: Partial<TopologyInput>): void => {
      topology = { ...topology, ...patch };
      model.setTopology(topology);
    };
    model.setTopology(topology);

    const faultEvent = (f: FaultRecord, injected: boolean, cause?: FaultClearCause): void => {
      const device = `${f.resource}/${f.deviceId}`;
      const message = !injected
        ? `simulated fault on ${device} cleared (${cause})`
        : f.failure
          ? `simulated fault on ${device} ${f.failure}`
          : `simulated fault on ${device}: ${f.reason}${f.expiresAt ? ` (until ${f.expiresAt})` : ''}`;
      addEvent({
        kind: injected ? 'fault-injected' : 'fault-cleared',
        resource: f.resource,
        deviceIds: [f.deviceId],
        message,
      });
      nodeEvent(
        injected ? 'Warning' : 'Normal',
        injected ? 'PlugboardFaultInjected' : 'PlugboardFaultCleared',
        message,
      );
      if (injected && !f.failure) metrics.faultsInjected.inc({ resource: f.resource });
    };
    const faults = new FaultStore({
      stateDir: config.stateDir,
      maxActive: config.faults.maxActive,
      now,
      onInjected: (f) => faultEvent(f, true),
      onCleared: (f, cause) => faultEvent(f, false, cause),
      onChange: (list) => model.setFaults(list),
      onActuatorError: (f, message) =>
        logger.warn(
          { fault: f.id, resource: f.resource, device: f.deviceId, error: message },
          'fault release failed',
        ),
      onPersistenceChange: (p) => {
        model.setGateway({ persistence: p });
        if (!p.enabled) logger.warn({ reason: p.reason }, 'fault persistence is off');
      },
    });
    cleanups.push(() => faults.close());
    model.setGateway({ persistence: faults.persistence });
    if (!faults.persistence.enabled && config.stateDir) {
      logger.warn(
        { reason: faults.persistence.reason },
        'fault persistence is off: active faults live in memory only',
      );
    }

    const hub = new StreamHub(
      {
        ...config.stream,
        now,
        initialSeq: now().getTime() * 1000,
        onClientChange: (view, delta) => metrics.streamClients.inc({ view }, delta),
        onDrop: (view, reason) => {
          metrics.streamDropped.inc({ view, reason });
          logger.warn({ view, reason }, 'stream client closed by the gateway');
        },
        onBroadcast: (view) => metrics.streamPatches.inc({ view }),
      },
      { full: model.snapshot(), summary: model.summary() },
    );
    let hubClosed = false;
    const closeHub = async (): Promise<void> => {
      if (hubClosed) return;
      hubClosed = true;
      await hub.closeAll();
    };
    cleanups.push(closeHub);
    const history = config.history.enabled
      ? attachHistory(model, hub, {
          nodeName: config.nodeName,
          ...config.history,
          now: () => now().getTime(),
        })
      : null;
    if (history) cleanups.push(() => history.stop());
    model.on('change', (c) => {
      hub.channels.full.publish(c.snapshot, c.ops);
      hub.channels.summary.publish(c.summary, c.summaryOps);
      metrics.modelUpdateDuration.observe((performance.now() - c.startedAt) / 1000);
    });

    // --- plugins
    let runtime: Pick<PluginRuntime, 'resources'>;
    if (deps.plugins) {
      runtime = deps.plugins;
    } else {
      const started = await startPlugins(config.plugins, {
        devicePluginDir: config.devicePluginDir,
        logger: rootLogger,
      });
      cleanups.push(() => started.stop());
      runtime = started;
    }
    let poller: PodResourcesPoller | null = null;
    /** Resources the kubelet let go of, until they register again. */
    const waitingForKubelet = new Set<string>();
    const detach = attachPlugins(runtime, model, {
      health: (resource, e) => {
        const message = `${resource}/${e.deviceId} is ${e.health}${e.reason ? `: ${e.reason}` : ''}`;
        const alloc = model.snapshot().devices[`${resource}/${e.deviceId}`]?.allocation ?? null;
        addEvent({
          kind: 'health',
          resource,
          deviceIds: [e.deviceId],
          pod: alloc && { namespace: alloc.namespace, name: alloc.pod, container: alloc.container },
          message,
          at: e.at,
        });
        nodeEvent(
          e.health === 'Healthy' ? 'Normal' : 'Warning',
          e.health === 'Healthy' ? 'DeviceHealthy' : 'DeviceUnhealthy',
          message,
        );
        // Allocatable changes in the kubelet right after ListAndWatch; look soon rather than in a second.
        poller?.pollSoon(10);
      },
      allocate: (resource, e) => {
        metrics.allocateDuration.observe(
          { resource, result: e.ok ? 'success' : 'error' },
          e.durationMs / 1000,
        );
        addEvent({
          kind: 'allocation',
          resource,
          deviceIds: e.deviceIds.flat(),
          message: e.ok
            ? `Allocate ${e.deviceIds.map((c) => `[${c.join(', ')}]`).join(' ')} (${e.durationMs.toFixed(1)} ms)`
            : `Allocate ${e.deviceIds.flat().join(', ')} failed: ${e.error ?? 'unknown error'}`,
        });
        poller?.pollSoon();
      },
      preferredAllocation: (resource, d) => {
        // Kept for "why here?": the plugin's reason behind the devices a pod got.
        setTopology({
          preferred: [
            ...topology.preferred.slice(-(MAX_PREFERRED_RECORDS - 1)),
            { resource, chosen: [...d.chosen], reason: d.reason, at: d.at },
          ],
        });
        metrics.preferredAllocationDuration.observe({ resource }, d.durationMs / 1000);
        addEvent({
          kind: 'preferred-allocation',
          resource,
          deviceIds: d.chosen,
          message: `preferred ${d.chosen.join(', ')} of ${d.available.length} available: ${d.reason}`,
          at: d.at,
        });
      },
      registered: (resource, e) => {
        metrics.registrations.inc({ resource });
        const back = waitingForKubelet.delete(resource);
        const message = `${resource} registered with the kubelet${back ? ' again' : ''} (attempt ${e.attempt})`;
        addEvent({ kind: 'registration', resource, message, at: e.at });
        // Pairs the Warning below, so the Node's events show when the kubelet took the plugin back.
        if (back) nodeEvent('Normal', 'DevicePluginRegistered', message);
        logger.info({ resource }, 'plugin registered');
      },
      waitingForKubelet: (resource, e) => {
        waitingForKubelet.add(resource);
        const message = `${resource} is no longer held by the kubelet (${e.reason}); it registers again when the kubelet is back`;
        addEvent({ kind: 'registration', resource, message, at: e.at });
        nodeEvent('Warning', 'DevicePluginWaitingForKubelet', message);
        logger.warn({ resource, cause: e.cause, reason: e.reason }, 'plugin waiting for the kubelet');
      },
      kubeletRestart: (resource, e) => {
        metrics.kubeletRestarts.inc({ resource });
        addEvent({
          kind: 'kubelet-restart',
          resource,
          message: `kubelet restart detected by ${resource} (${e.detectedBy})`,
          at: e.at,
        });
        nodeEvent(
          'Normal',
          'KubeletRestartDetected',
          `${resource} detected a kubelet restart (${e.detectedBy}) and re-registers`,
        );
        poller?.pollSoon(50);
      },
      registrationError: (resource, e) => {
        metrics.registrationErrors.inc({ resource });
        // The plugin logs each attempt itself; keep the gateway's copy for debugging.
        logger.debug({ resource, error: e.error, attempt: e.attempt }, 'plugin registration failed');
      },
    });
    cleanups.push(detach);

    // --- faults: restore what a previous run left active (TTL respected)
    const persisted = faults.loadPersisted();
    if (persisted.error) logger.warn({ error: persisted.error }, 'cannot restore persisted faults');
    faults.attach(pluginActuator(runtime), persisted.restored, persisted.expired);
    if (persisted.restored.length || persisted.expired.length) {
      logger.info(
        { restored: persisted.restored.length, expired: persisted.expired.length },
        'persisted faults restored',
      );
    }
    const scenarios = new ScenarioRunner({
      nodeName: config.nodeName,
      faults,
      now,
      devices: () => Object.values(model.snapshot().devices),
      onStep: (s, step) =>
        logger.info(
          { scenario: s.id, action: step.action, status: step.status, detail: step.detail },
          'scenario step',
        ),
    });
    cleanups.push(() => scenarios.close());

    // --- sources
    const sourceEvent = (name: keyof SourcesState, label: string, state: SourceState): void => {
      const prev = model.source(name);
      model.setSource(name, state);
      if (prev.status !== state.status) {
        addEvent({
          kind: 'source',
          message: `${label} is ${state.status}${state.reason ? `: ${state.reason}` : ''}`,
        });
        const level = state.status === 'stale' ? 'warn' : 'info';
        logger[level]({ source: name, status: state.status, reason: state.reason }, 'source status changed');
      }
    };
    if (config.podResources.socket) {
      poller = new PodResourcesPoller({
        socket: config.podResources.socket,
        intervalMs: config.podResources.pollIntervalMs,
        timeoutMs: config.podResources.timeoutMs,
        maxBackoffMs: config.podResources.maxBackoffMs,
        now,
        onData: (data) => model.setPodResources(data),
        onState: (state) => sourceEvent('podResources', 'PodResources', state),
        onError: (method, code) => metrics.podResourcesErrors.inc({ method, code }),
        onPoll: (s) => metrics.podResourcesDuration.observe(s),
      });
      poller.start();
      const p = poller;
      cleanups.push(() => p.stop());
    }
    let kubeletControl: KubeletControl | null = null;
    const apiServer = kubeMode === 'kubeconfig' ? kc?.getCurrentCluster()?.server : undefined;
    if (kc && apiServer && kubeModule) {
      const apiRequest = kubeModule.createApiServerRequest(kc);
      cleanups.push(() => apiRequest.close());
      kubeletControl = new KubeletControl({
        server: apiServer,
        request: apiRequest,
        intervalMs: config.topology.pollIntervalMs,
        timeoutMs: config.podResources.timeoutMs,
        logger: rootLogger.child({ component: 'kubelet-control' }),
        onState: (state, reason) => setTopology({ kubelet: state, kubeletReason: reason }),
      });
      kubeletControl.start();
      const control = kubeletControl;
      cleanups.push(() => control.stop());
    }
    const rejectionsSeen = new Set<string>();
    if (kc && kubeModule) {
      kube = new kubeModule.KubeSource({
        kc,
        nodeName: config.nodeName,
        maxBackoffMs: config.kube.maxBackoffMs,
        now,
        onChange: (input) => {
          model.setKube(input);
          // The kubelet refuses a pod at admission by failing it with "Pod was rejected: …".
          for (const r of newAdmissionRejections(input.pods, rejectionsSeen)) {
            addEvent({
              kind: 'admission-rejected',
              pod: { namespace: r.namespace, name: r.name, container: null },
              message: `${r.reason}: ${r.message}`,
            });
            logger.info({ pod: `${r.namespace}/${r.name}`, reason: r.reason }, 'pod rejected at admission');
          }
          kubeletControl?.pollSoon();
        },
        onState: (state) => sourceEvent('kubernetes', 'Kubernetes API', state),
        onError: (operation, message) => {
          metrics.kubeErrors.inc({ operation });
          logger.warn({ operation, error: message }, 'Kubernetes API error');
        },
      });
      kube.start();
      const k = kube;
      cleanups.push(() => k.stop());
    }

    // --- HTTP
    const handlers = createHandlers({
      config,
      model,
      faults,
      scenarios,
      authorizer,
      hub,
      metrics,
      logger,
      placement: kubeletControl,
      history: history?.store ?? null,
      readiness: () => readiness(Object.values(model.snapshot().resources)),
    });
    const server: Server = createServer(
      { requestTimeout: 30_000, headersTimeout: 10_000 },
      (req, res) => void handlers.request(req, res),
    );
    server.on('upgrade', (req, socket, head) => handlers.upgrade(req, socket, head));
    server.on('clientError', (_err, socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) =>
        reject(
          new GatewayError(
            'unavailable',
            `cannot listen on ${config.listen.host}:${config.listen.port}: ${err.code ?? err.message}`,
            { cause: err },
          ),
        ),
      );
      server.listen(config.listen.port, config.listen.host, () => resolve());
    });
    cleanups.push(async () => {
      // WebSocket sockets count as server connections: close them first, then the server.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await closeHub();
      server.closeAllConnections();
      await closed;
    });
    const addr = server.address() as AddressInfo;
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    const url = `http://${host}:${addr.port}`;
    logger.info(
      {
        url,
        resources: [...runtime.resources.keys()],
        auth: authorizer.mode,
        faults: config.faults.enabled,
        persistence: faults.persistence,
        podResources: config.podResources.socket,
        kube: kubeMode,
      },
      'gateway listening',
    );
    model.flush();
    return { url, model, faults, scenarios, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw GatewayError.from(err);
  }
}
