// The kubelet's registry of DRA driver plugins (pkg/kubelet/cm/dra/plugin dra_plugin_manager.go and
// registration, 1.37), the plugin watcher's handler for `DRAPlugin` sockets:
// - ValidatePlugin/RegisterPlugin pick the DRAPlugin service: the first entry of the plugin's
//   supported versions the kubelet serves (`v1.DRAPlugin`, `v1beta1.DRAPlugin`), else
//   `invalid supported gRPC versions of DRA driver plugin <name> at endpoint <ep>: …`; and the
//   health service: `v1.DRAResourceHealth` if listed, else `v1alpha1.DRAResourceHealth`, else none.
// - Registration does not dial: the channel connects in the background (grpc.NewClient). A driver
//   may have several plugins; calls go to the newest connected one, else the newest.
// - The health stream runs for the driver's newest plugin when it advertises a health service,
//   restarted 5 s after it ends, given up on Unimplemented.
// - When no plugin of a driver is connected, its ResourceSlices on this node are deleted after the
//   wiping delay (30 s) unless it comes back; at start-up every ResourceSlice of the node is deleted
//   (no driver is known yet).

import { connectivityState, status, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import {
  DRA_PLUGIN_SERVICE_V1,
  DRA_PLUGIN_SERVICE_V1BETA1,
  DRA_RESOURCE_HEALTH_SERVICE_V1,
  DRA_RESOURCE_HEALTH_SERVICE_V1ALPHA1,
} from '@plugboard/proto';
import { KubeletSimError } from '../../../errors.js';
import type { PluginHandler } from '../../../pluginmanager/plugin-watcher.js';
import { goGrpcErrorText } from '../../../util/grpc-errors.js';
import { DRAPlugin, type HealthResponse } from './dra-plugin.js';

/** servicesSupportedByKubelet: most recent first. */
export const SERVICES_SUPPORTED_BY_KUBELET = [DRA_PLUGIN_SERVICE_V1, DRA_PLUGIN_SERVICE_V1BETA1];
/** healthServicesSupportedByKubelet: most recent first. */
export const HEALTH_SERVICES_SUPPORTED_BY_KUBELET = [
  DRA_RESOURCE_HEALTH_SERVICE_V1,
  DRA_RESOURCE_HEALTH_SERVICE_V1ALPHA1,
];
/** defaultWipingDelay. */
export const DEFAULT_WIPING_DELAY_MS = 30_000;
/** wait.UntilWithContext period of the health stream loop. */
export const HEALTH_STREAM_RETRY_MS = 5_000;

/** Go's %q of a []string: `["a" "b"]`. */
const goQuoteList = (xs: string[]) => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;

/** validateSupportedServices. */
export function chooseService(supportedServices: string[]): string {
  if (supportedServices.length === 0)
    throw new Error('empty list of supported gRPC services (aka supported versions)');
  const chosen = supportedServices.find((s) => SERVICES_SUPPORTED_BY_KUBELET.includes(s));
  if (!chosen)
    throw new Error(
      `none of services supported by the plugin (${goQuoteList(supportedServices)}) are supported by the kubelet (${goQuoteList(SERVICES_SUPPORTED_BY_KUBELET)})`,
    );
  return chosen;
}

/** pickHealthService: the kubelet's preference, whatever the plugin's order. */
export function pickHealthService(supportedServices: string[]): string | null {
  return HEALTH_SERVICES_SUPPORTED_BY_KUBELET.find((s) => supportedServices.includes(s)) ?? null;
}

/** What the DRA manager does with a health stream (StreamHandler). */
export interface HealthStreamHandler {
  onHealth(driver: string, response: HealthResponse): void;
  /** The stream ended (or the driver lost its plugin with a health service). */
  onHealthStreamEnded(driver: string): void;
}

export interface DRAPluginManagerOptions {
  nodeName: string;
  /** Deletes this node's ResourceSlices, of one driver or (null) all; answers how many. */
  wipeResourceSlices: (driver: string | null) => number;
  streamHandler: HealthStreamHandler;
  wipingDelayMs: number;
  healthStreamRetryMs?: number;
  logger: Logger;
  onChange?: () => void;
}

interface MonitoredPlugin {
  plugin: DRAPlugin;
  connected: boolean;
  registeredAt: Date;
  closed: boolean;
}

interface HealthStream {
  plugin: DRAPlugin;
  call: ClientReadableStream<HealthResponse> | null;
  retry: NodeJS.Timeout | null;
}

export interface DriverView {
  name: string;
  plugins: {
    endpoint: string;
    service: string;
    healthService: string | null;
    connected: boolean;
    registeredAt: string;
  }[];
  /** When this node's ResourceSlices of the driver are deleted unless a plugin connects (ISO time). */
  wipeAt: string | null;
}

export class DRAPluginManager implements PluginHandler {
  /** driver → plugins in registration order. */
  private readonly store = new Map<string, MonitoredPlugin[]>();
  private readonly healthStreams = new Map<string, HealthStream>();
  private readonly pendingWipes = new Map<string, { timer: NodeJS.Timeout; at: Date }>();
  private readonly log: Logger;
  private stopped = false;

  constructor(private readonly o: DRAPluginManagerOptions) {
    this.log = o.logger.child({ component: 'dra-plugins' });
  }

  /** NewDRAPluginManager's start-up wipe: no driver is usable until it registers again. */
  start(): void {
    const n = this.o.wipeResourceSlices(null);
    if (n > 0) this.log.info({ deleted: n }, 'deleted ResourceSlices of this node at start-up');
  }

  // --- cache.PluginHandler ---------------------------------------------------------------------

  validatePlugin(name: string, endpoint: string, versions: string[]): void {
    this.validate(name, endpoint, versions);
  }

  private validate(name: string, endpoint: string, versions: string[]): string {
    try {
      return chooseService(versions);
    } catch (err) {
      throw new KubeletSimError(
        'RegistrationRejected',
        `invalid supported gRPC versions of DRA driver plugin ${name} at endpoint ${endpoint}: ${(err as Error).message}`,
      );
    }
  }

  registerPlugin(name: string, endpoint: string, versions: string[]): Promise<void> {
    const chosen = this.validate(name, endpoint, versions);
    const plugins = this.store.get(name) ?? [];
    if (plugins.some((p) => p.plugin.endpoint === endpoint))
      return Promise.reject(
        new KubeletSimError(
          'RegistrationRejected',
          `endpoint ${endpoint} already registered for DRA driver plugin ${name}`,
        ),
      );
    const plugin = new DRAPlugin(name, endpoint, chosen, pickHealthService(versions));
    const mp: MonitoredPlugin = { plugin, connected: false, registeredAt: new Date(), closed: false };
    plugins.push(mp);
    this.store.set(name, plugins);
    this.monitor(mp);
    this.log.info(
      {
        driver: name,
        endpoint,
        chosenService: chosen,
        healthService: plugin.healthService,
        plugins: plugins.length,
      },
      'registered DRA plugin',
    );
    this.syncHealthStream(name);
    this.sync(name);
    this.o.onChange?.();
    return Promise.resolve();
  }

  deRegisterPlugin(name: string, endpoint: string): void {
    const plugins = this.store.get(name) ?? [];
    const i = plugins.findIndex((p) => p.plugin.endpoint === endpoint);
    if (i < 0) return;
    const [mp] = plugins.splice(i, 1);
    if (plugins.length === 0) this.store.delete(name);
    mp!.closed = true;
    mp!.plugin.close();
    this.log.info({ driver: name, endpoint, plugins: plugins.length }, 'unregistered DRA plugin');
    this.syncHealthStream(name);
    this.sync(name);
    this.o.onChange?.();
  }

  // --- lookups ---------------------------------------------------------------------------------

  /** GetPlugin: the newest connected plugin, else the newest; the kubelet's error otherwise. */
  getPlugin(driver: string): DRAPlugin {
    if (!driver) throw new Error('DRA driver name is empty');
    const plugins = this.store.get(driver) ?? [];
    if (plugins.length === 0) throw new Error(`DRA driver ${driver} is not registered`);
    for (let i = plugins.length - 1; i >= 0; i--) if (plugins[i]!.connected) return plugins[i]!.plugin;
    return plugins[plugins.length - 1]!.plugin;
  }

  drivers(): DriverView[] {
    const names = new Set([...this.store.keys(), ...this.pendingWipes.keys()]);
    return [...names].sort().map((name) => ({
      name,
      plugins: (this.store.get(name) ?? []).map((p) => ({
        endpoint: p.plugin.endpoint,
        service: p.plugin.chosenService,
        healthService: p.plugin.healthService,
        connected: p.connected,
        registeredAt: p.registeredAt.toISOString(),
      })),
      wipeAt: this.pendingWipes.get(name)?.at.toISOString() ?? null,
    }));
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.pendingWipes.values()) clearTimeout(w.timer);
    this.pendingWipes.clear();
    for (const name of [...this.healthStreams.keys()]) this.endHealthStream(name, false);
    for (const plugins of this.store.values())
      for (const p of plugins) {
        p.closed = true;
        p.plugin.close();
      }
    this.store.clear();
  }

  // --- connection monitoring (monitoredPlugin.HandleConn) ----------------------------------------

  private monitor(mp: MonitoredPlugin): void {
    const channel = mp.plugin.client.getChannel();
    const watch = (): void => {
      if (mp.closed || this.stopped) return;
      // Asking for the state with tryToConnect makes an idle channel connect again, as
      // HandleConn's conn.Connect() after ConnEnd does.
      const state = channel.getConnectivityState(true);
      const connected = state === connectivityState.READY;
      if (connected !== mp.connected) {
        mp.connected = connected;
        this.log.info(
          { driver: mp.plugin.driverName, endpoint: mp.plugin.endpoint, connected },
          'DRA plugin connection changed',
        );
        this.sync(mp.plugin.driverName);
        this.o.onChange?.();
      }
      try {
        channel.watchConnectivityState(state, Infinity, () => watch());
      } catch {
        // The channel was shut down (the plugin was closed) in the meantime.
      }
    };
    watch();
  }

  /** sync: a usable driver cancels a pending wipe; an unusable one gets one (if none is pending). */
  private sync(driver: string): void {
    if (this.stopped) return;
    const usable = (this.store.get(driver) ?? []).some((p) => p.connected);
    const pending = this.pendingWipes.get(driver);
    if (usable) {
      if (pending) {
        clearTimeout(pending.timer);
        this.pendingWipes.delete(driver);
        this.log.info({ driver }, 'DRA driver usable again; ResourceSlice wiping canceled');
      }
      return;
    }
    if (pending) return;
    const at = new Date(Date.now() + this.o.wipingDelayMs);
    const timer = setTimeout(() => {
      this.pendingWipes.delete(driver);
      const n = this.o.wipeResourceSlices(driver);
      this.log.info(
        { driver, deleted: n },
        'DRA driver gone too long; deleted its ResourceSlices on this node',
      );
      this.o.onChange?.();
    }, this.o.wipingDelayMs);
    timer.unref();
    this.pendingWipes.set(driver, { timer, at });
  }

  // --- health stream ---------------------------------------------------------------------------

  /** The stream follows the newest plugin of the driver; none if that one serves no health. */
  private syncHealthStream(driver: string): void {
    const plugins = this.store.get(driver) ?? [];
    const newest = plugins[plugins.length - 1]?.plugin ?? null;
    const current = this.healthStreams.get(driver);
    if (current && current.plugin === newest) return;
    const hadStream = current !== undefined;
    if (current) this.endHealthStream(driver, false);
    if (!newest?.healthService) {
      if (hadStream) this.o.streamHandler.onHealthStreamEnded(driver);
      return;
    }
    const hs: HealthStream = { plugin: newest, call: null, retry: null };
    this.healthStreams.set(driver, hs);
    this.openHealthStream(driver, hs);
  }

  private openHealthStream(driver: string, hs: HealthStream): void {
    if (this.stopped || this.healthStreams.get(driver) !== hs) return;
    const call = hs.plugin.nodeWatchResources();
    if (!call) return;
    hs.call = call;
    this.log.info(
      { driver, endpoint: hs.plugin.endpoint, service: hs.plugin.healthService },
      'NodeWatchResources stream started',
    );
    let ended = false;
    const end = (err?: ServiceError) => {
      if (ended) return;
      ended = true;
      if (hs.call === call) hs.call = null;
      if (this.healthStreams.get(driver) !== hs) return;
      this.o.streamHandler.onHealthStreamEnded(driver);
      if (err?.code === status.UNIMPLEMENTED) {
        this.log.warn(
          { driver, err: goGrpcErrorText(err) },
          'driver does not implement NodeWatchResources; not retrying',
        );
        return;
      }
      if (err?.code === status.CANCELLED) return;
      this.log.info(
        { driver, err: err ? goGrpcErrorText(err) : 'EOF' },
        'NodeWatchResources stream ended; retrying',
      );
      hs.retry = setTimeout(() => {
        hs.retry = null;
        this.openHealthStream(driver, hs);
      }, this.o.healthStreamRetryMs ?? HEALTH_STREAM_RETRY_MS);
      hs.retry.unref();
    };
    call.on('data', (res: HealthResponse) => this.o.streamHandler.onHealth(driver, res));
    call.on('error', (err: ServiceError) => end(err));
    call.on('end', () => end());
  }

  private endHealthStream(driver: string, notify: boolean): void {
    const hs = this.healthStreams.get(driver);
    if (!hs) return;
    this.healthStreams.delete(driver);
    if (hs.retry) clearTimeout(hs.retry);
    hs.call?.cancel();
    if (notify) this.o.streamHandler.onHealthStreamEnded(driver);
  }
}
