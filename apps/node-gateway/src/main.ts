// Wiring only: builds the gateway from its config — plugins, PodResources poller, Kubernetes
// informers, kubelet topology source, fault store, scenario runner, node model, stream hub, metrics
// and the HTTP server — and returns a handle that stops all of it in reverse order. What each part
// does with the others' events lives in its own module (events/, sources/source-status.ts, …).
import { pino, type Logger } from 'pino';
import { startPlugins, type PluginRuntime } from '@plugboard/plugin';
import type { DraDrivers } from './sources/dra-drivers.js';
import type { KubeConfig } from '@kubernetes/client-node';
import type { GatewayConfig } from './config.js';
import { GatewayError } from './errors.js';
import { NodeModel } from './model/node-model.js';
import { readiness } from './model/readiness.js';
import { isOwnResource } from './model/observed.js';
import { TopologyState } from './model/topology-state.js';
import { FaultStore } from './faults/fault-store.js';
import { ScenarioRunner, scenarioDevices } from './faults/scenarios.js';
import { TaintRuleFaults } from './faults/taint-rules.js';
import { restorePersistedFaults } from './faults/restore.js';
import { createGatewayEvents } from './events/gateway-events.js';
import { faultStoreEvents } from './events/fault-events.js';
import { pluginEventHooks } from './events/plugin-events.js';
import { admissionRejectionEvents } from './events/admission-events.js';
import { attachDraModelEvents, draDriverEventHooks } from './events/dra-events.js';
import { attachObservedEvents } from './events/observed-events.js';
import { PodResourcesPoller } from './sources/pod-resources.js';
import type { KubeSource } from './sources/kube.js';
import { loadKubeClient } from './sources/kube-client.js';
import { attachPlugins, pluginActuator, predictionResources } from './sources/plugins.js';
import {
  attachDraDrivers,
  draActuator,
  routeFaults,
  startConfiguredDraDrivers,
} from './sources/dra-drivers.js';
import { KUBELET_SIM_CHECKING, kubeletSimSource } from './sources/kubelet-control.js';
import { NO_KUBELET_CONTROL, type KubeletTopologySource } from './sources/kubelet-topology.js';
import { CONFIGZ_CHECKING, KubeletConfigz } from './sources/kubelet-configz.js';
import { createPlacement } from './model/placement.js';
import { initialSources, sourceStatus } from './sources/source-status.js';
import { securityPosture } from './http/security-posture.js';
import { createMetrics } from './http/metrics.js';
import { createStreamFeed, publishModelChanges } from './http/stream-feed.js';
import { attachHistory } from './http/history-feed.js';
import { createHandlers } from './http/routes.js';
import { listenHttp } from './http/server.js';
import { GATEWAY_VERSION } from './version.js';
import { Cleanups } from './cleanups.js';

export interface GatewayDeps {
  logger?: Logger;
  /** Already-started plugins to serve instead of starting `config.plugins` (the caller stops them). */
  plugins?: Pick<PluginRuntime, 'resources'>;
  /** Already-started DRA drivers to serve instead of starting `config.plugins.dra` (the caller stops them). */
  draDrivers?: DraDrivers;
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

/** The sources, set once they start; hooks built before them look them up here. */
interface LiveSources {
  poller: PodResourcesPoller | null;
  kube: KubeSource | null;
  configz: KubeletConfigz | null;
}

/** What the start phases share. */
type Parts = Awaited<ReturnType<typeof startCore>>;

export async function startGateway(config: GatewayConfig, deps: GatewayDeps = {}): Promise<Gateway> {
  const now = deps.now ?? (() => new Date());
  const rootLogger = (deps.logger ?? pino({ level: config.logLevel })).child({ node: config.nodeName });
  const logger = rootLogger.child({ component: 'gateway' });
  const cleanups = new Cleanups(logger);

  try {
    const parts = await startCore(deps, { config, now, rootLogger, logger, cleanups });
    const { runtime, scenarios } = await startPluginsAndFaults(parts, deps);
    const kubeletTopology = startSources(parts);
    const url = await startHttp(parts, scenarios, runtime, kubeletTopology);
    logger.info(
      {
        url,
        resources: [...runtime.resources.keys()],
        draDrivers: Object.keys(parts.model.snapshot().dra?.drivers ?? {}),
        auth: parts.authorizer.mode,
        faults: config.faults.enabled,
        persistence: parts.faults.persistence,
        podResources: config.podResources.socket,
        kube: config.kube.mode,
      },
      'gateway listening',
    );
    parts.model.flush();
    return { url, model: parts.model, faults: parts.faults, scenarios, stop: cleanups.stopAll };
  } catch (err) {
    await cleanups.stopAll();
    throw GatewayError.from(err);
  }
}

/** Security posture (decided before anything listens), model, events, topology, faults, stream. */
async function startCore(
  deps: GatewayDeps,
  base: { config: GatewayConfig; now: () => Date; rootLogger: Logger; logger: Logger; cleanups: Cleanups },
) {
  const { config, now, logger, cleanups } = base;
  const kubeClient = await loadKubeClient(config, deps.kubeConfig);
  const authorizer = securityPosture(config, kubeClient, logger);

  const live: LiveSources = { poller: null, kube: null, configz: null };
  const model = new NodeModel({
    nodeName: config.nodeName,
    eventRingSize: config.events.ringSize,
    sources: initialSources(config),
    now,
    gateway: {
      version: GATEWAY_VERSION,
      startedAt: now().toISOString(),
      faultsEnabled: config.faults.enabled,
      authRequired: authorizer.required,
      persistence: { enabled: false, reason: 'starting' },
    },
  });
  cleanups.push(() => model.close());
  const events = createGatewayEvents(model, () => (config.kube.emitEvents ? live.kube : null));
  const metrics = createMetrics(() => model.snapshot());
  const topology = new TopologyState(model, {
    sysfsRoot: config.topology.sysfsRoot,
    configzReason:
      config.kube.mode === 'disabled'
        ? "the Kubernetes API is off (kube.mode: disabled): the kubelet's configz is read through the API server"
        : !config.topology.configz.enabled
          ? "reading the kubelet's configz is turned off (topology.configz.enabled: false; the chart's gateway.rbac.nodesProxy)"
          : CONFIGZ_CHECKING,
    controlReason: config.kube.mode === 'kubeconfig' ? KUBELET_SIM_CHECKING : NO_KUBELET_CONTROL,
    predictionBlocked: config.podResources.socket
      ? null
      : 'PodResources is off (podResources.socket: null): the prediction starts from what is allocated',
    logger,
  });

  const faults = new FaultStore({
    stateDir: config.stateDir,
    maxActive: config.faults.maxActive,
    now,
    ...faultStoreEvents({ events, metrics, model, logger }),
  });
  cleanups.push(() => faults.close());
  // Faults on other drivers' DRA devices: DeviceTaintRules, written once the API connection exists.
  const taintRules = new TaintRuleFaults({
    nodeName: config.nodeName,
    onError: (rule, error) => logger.warn({ rule, error }, 'DeviceTaintRule write failed; retrying'),
  });
  cleanups.push(() => taintRules.close());
  model.setGateway({ persistence: faults.persistence });
  if (!faults.persistence.enabled && config.stateDir) {
    logger.warn(
      { reason: faults.persistence.reason },
      'fault persistence is off: active faults live in memory only',
    );
  }

  const stream = createStreamFeed({ config, model, metrics, logger, now });
  cleanups.push(stream.close);
  const history = config.history.enabled
    ? attachHistory(model, stream.hub, {
        nodeName: config.nodeName,
        ...config.history,
        now: () => now().getTime(),
      })
    : null;
  if (history) cleanups.push(() => history.stop());
  publishModelChanges(model, stream.hub, metrics);
  return {
    ...base,
    kubeClient,
    authorizer,
    model,
    events,
    metrics,
    topology,
    faults,
    taintRules,
    stream,
    history,
    live,
  };
}

/** The plugins (started here unless given), their events, the faults they carry, the scenario runner. */
async function startPluginsAndFaults(
  parts: Parts,
  deps: GatewayDeps,
): Promise<{ runtime: Pick<PluginRuntime, 'resources'>; scenarios: ScenarioRunner }> {
  const { config, rootLogger, logger, cleanups, model, faults, live } = parts;
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
  let drivers: DraDrivers = deps.draDrivers ?? { drivers: new Map() };
  if (!deps.draDrivers) {
    const started = await startConfiguredDraDrivers(config, parts.kubeClient?.kc ?? null, rootLogger);
    if (started) {
      cleanups.push(() => started.stop());
      drivers = started;
    }
  }
  const pollSoon = (delayMs?: number): void => live.poller?.pollSoon(delayMs);
  const hooks = pluginEventHooks({ ...parts, pollSoon, kubeletRestarted: () => live.configz?.pollSoon() });
  cleanups.push(attachPlugins(runtime, model, hooks));
  cleanups.push(attachDraDrivers(drivers, model, draDriverEventHooks({ ...parts, pollSoon })));
  cleanups.push(attachDraModelEvents(model, parts.events));
  cleanups.push(attachObservedEvents(model, parts.events));

  restorePersistedFaults(
    faults,
    routeFaults(pluginActuator(runtime), draActuator(drivers), parts.taintRules),
    logger,
  );
  const scenarios = new ScenarioRunner({
    nodeName: config.nodeName,
    faults,
    now: parts.now,
    devices: () => scenarioDevices(model.snapshot()),
    onStep: (s, step) =>
      logger.info(
        { scenario: s.id, action: step.action, status: step.status, detail: step.detail },
        'scenario step',
      ),
  });
  cleanups.push(() => scenarios.close());
  return { runtime, scenarios };
}

/** PodResources poller, kubelet topology source, Kubernetes informers; answers the topology source. */
function startSources(parts: Parts): KubeletTopologySource | null {
  const { config, now, rootLogger, logger, cleanups, model, metrics, topology, kubeClient, live } = parts;
  const reportState = sourceStatus(parts);
  if (config.podResources.socket) {
    const poller = new PodResourcesPoller({
      socket: config.podResources.socket,
      intervalMs: config.podResources.pollIntervalMs,
      timeoutMs: config.podResources.timeoutMs,
      maxBackoffMs: config.podResources.maxBackoffMs,
      now,
      onData: (data) => model.setPodResources(data),
      onState: reportState('podResources'),
      onError: (method, code) => metrics.podResourcesErrors.inc({ method, code }),
      onPoll: (s) => metrics.podResourcesDuration.observe(s),
    });
    live.poller = poller;
    poller.start();
    cleanups.push(() => poller.stop());
  }
  if (!kubeClient) return null;

  // The one place the kubelet topology sources are chosen (sources/kubelet-topology.ts): the
  // kubelet's configz through the API server's node proxy on any cluster (unless turned off), and
  // kubelet-sim's control API behind a kubeconfig as extra detail. One API-server connection for both.
  const request = kubeClient.module.createApiServerRequest(kubeClient.kc);
  cleanups.push(() => request.close());
  parts.taintRules.connect(request);
  if (config.topology.configz.enabled) {
    const configz = new KubeletConfigz({
      nodeName: config.nodeName,
      request,
      intervalMs: config.topology.configz.intervalMs,
      timeoutMs: config.podResources.timeoutMs,
      maxBackoffMs: config.kube.maxBackoffMs,
      logger: rootLogger.child({ component: 'kubelet-configz' }),
      onState: (settings, reason) => topology.setConfigz(settings, reason),
    });
    live.configz = configz;
    configz.start();
    cleanups.push(() => configz.stop());
  }
  const kubeletTopology = kubeletSimSource(kubeClient, request, {
    intervalMs: config.topology.pollIntervalMs,
    timeoutMs: config.podResources.timeoutMs,
    logger: rootLogger.child({ component: 'kubelet-control' }),
    onState: (state, reason) => topology.setControl(state, reason),
  });
  if (kubeletTopology) {
    kubeletTopology.start();
    cleanups.push(() => kubeletTopology.stop());
  }

  const admissionRejections = admissionRejectionEvents(parts.events, logger);
  const kube = new kubeClient.module.KubeSource({
    kc: kubeClient.kc,
    request,
    nodeName: config.nodeName,
    maxBackoffMs: config.kube.maxBackoffMs,
    now,
    onChange: (input) => {
      model.setKube(input);
      admissionRejections(input.pods);
      kubeletTopology?.pollSoon();
    },
    onState: reportState('kubernetes'),
    onError: (operation, message) => {
      metrics.kubeErrors.inc({ operation });
      logger.warn({ operation, error: message }, 'Kubernetes API error');
    },
  });
  live.kube = kube;
  kube.start();
  cleanups.push(() => kube.stop());
  return kubeletTopology;
}

/** The REST API and the stream on the configured address; answers the gateway's URL. */
async function startHttp(
  parts: Parts,
  scenarios: ScenarioRunner,
  runtime: Pick<PluginRuntime, 'resources'>,
  kubeletTopology: KubeletTopologySource | null,
): Promise<string> {
  const { config, model, stream, history, topology, live } = parts;
  const placement = createPlacement({
    input: () => ({
      topology: topology.current(),
      ...model.sourceInputs(),
      resources: predictionResources(runtime),
    }),
    refresh: async () => {
      await live.poller?.pollFresh();
    },
    admit: kubeletTopology && ((pod) => kubeletTopology.admit(pod)),
  });
  const handlers = createHandlers({
    ...parts,
    scenarios,
    hub: stream.hub,
    placement,
    history: history?.store ?? null,
    readiness: () => {
      const s = model.snapshot();
      // Only what this gateway serves: an observed device plugin's state is not the gateway's readiness.
      return readiness(Object.values(s.resources).filter(isOwnResource), Object.values(s.dra?.drivers ?? {}));
    },
  });
  const server = await listenHttp(config.listen, handlers);
  parts.cleanups.push(() => server.close(stream.close));
  return server.url;
}
