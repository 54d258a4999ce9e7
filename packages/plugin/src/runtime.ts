// Turns a parsed config into running ResourcePlugins: one source, socket and registration per
// resource. If any resource fails to start, the ones already started are stopped again.
import { execFile } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { pino, type Logger } from 'pino';
import { routeConnection } from '@plugboard/grpc-authority';
import type { DirectoryWatchLogger, WatchFactory } from '@plugboard/proto';
import type { PluginConfig, ResourceConfig } from './config.js';
import { PluginError } from './errors.js';
import { ResourcePlugin } from './resource-plugin.js';
import { PathsSource } from './sources/paths.js';
import { SimulatedSource } from './sources/simulated.js';
import { SysfsPciSource } from './sources/sysfs-pci.js';
import type { DeviceSource, RegistrationMode } from './types.js';

export interface StartPluginsOptions {
  devicePluginDir: string;
  logger?: Logger;
  /** Default <devicePluginDir>/kubelet.sock. */
  kubeletSocket?: string;
  registrationMode?: RegistrationMode;
  pluginsRegistryDir?: string;
  /** CDI spec directory for resources that enable CDI without their own specDir. */
  cdiDir?: string;
  restartPollIntervalMs?: number;
  registrationRetry?: { initialMs?: number; maxMs?: number };
  /**
   * Serve a kubelet that dials with the raw socket path as `:authority` (kubelets < 1.26; Node's
   * HTTP/2 layer refuses it): @plugboard/grpc-authority on the plugins' sockets. Default false.
   */
  acceptRawPathAuthority?: boolean;
  /** The directory watches (socket directory, scanned device directories): fs.watch unless a test injects a failing one. */
  watch?: WatchFactory;
}

export interface PluginRuntime {
  resources: Map<string, ResourcePlugin>;
  /** The device source behind each resource (e.g. a SimulatedSource to flap devices). */
  sources: Map<string, DeviceSource>;
  /** Ends streams, closes servers, removes sockets. */
  stop(): Promise<void>;
}

/** "plugboard.example/gpu" → "gpu" */
export function defaultIdPrefix(resourceName: string): string {
  const short = resourceName.slice(resourceName.indexOf('/') + 1).replace(/[^A-Za-z0-9._-]/g, '-');
  return short.replace(/^[^A-Za-z0-9]+/, '') || 'dev';
}

/** The device source of a config section (a resource or a DRA driver) with exactly one source key. */
export function deviceSourceFromSections(
  sections: Pick<ResourceConfig, 'simulated' | 'paths' | 'sysfsPci'>,
  owner: string,
  idPrefix: string,
  /** Where a scanning source's directory watch falling back to polling is reported. */
  logger?: DirectoryWatchLogger,
  watch?: WatchFactory,
): DeviceSource {
  if (sections.simulated) {
    const { count, numaNodes, idPrefix: prefix, deviceNodePattern } = sections.simulated;
    return new SimulatedSource({
      count,
      idPrefix: prefix ?? idPrefix,
      ...(numaNodes ? { numaNodes } : {}),
      ...(deviceNodePattern ? { deviceNodePattern } : {}),
    });
  }
  const watchOptions = { ...(logger ? { logger } : {}), ...(watch ? { watch } : {}) };
  if (sections.paths) return new PathsSource({ ...sections.paths, ...watchOptions });
  if (sections.sysfsPci) return new SysfsPciSource({ ...sections.sysfsPci, ...watchOptions });
  throw new PluginError('config-invalid', `${owner}: no device source configured`);
}

export function sourceFromConfig(
  resource: ResourceConfig,
  logger?: DirectoryWatchLogger,
  watch?: WatchFactory,
): DeviceSource {
  return deviceSourceFromSections(resource, resource.name, defaultIdPrefix(resource.name), logger, watch);
}

/** The PreStartContainer hook of a resource: run a command and/or wait (a simulated reset). */
export function preStartHook(resource: ResourceConfig): ((deviceIds: string[]) => Promise<void>) | undefined {
  const preStart = resource.preStart;
  if (!preStart) return undefined;
  return async (deviceIds) => {
    if (preStart.delayMs) await delay(preStart.delayMs);
    const command = preStart.command;
    if (!command) return;
    await new Promise<void>((resolve, reject) => {
      execFile(
        command[0]!,
        command.slice(1),
        {
          timeout: preStart.timeoutMs,
          env: {
            ...process.env,
            PLUGBOARD_RESOURCE: resource.name,
            PLUGBOARD_DEVICE_IDS: deviceIds.join(','),
          },
        },
        (err, _stdout, stderr) =>
          err
            ? reject(
                new PluginError(
                  'pre-start-failed',
                  `pre-start hook for ${deviceIds.join(', ')} failed: ${stderr.trim() || err.message}`,
                  { cause: err },
                ),
              )
            : resolve(),
      );
    });
  };
}

export function resourcePluginFromConfig(
  resource: ResourceConfig,
  options: StartPluginsOptions,
  source = sourceFromConfig(resource),
): ResourcePlugin {
  const cdi = resource.allocate?.cdi;
  const preStart = preStartHook(resource);
  return new ResourcePlugin({
    resourceName: resource.name,
    source,
    devicePluginDir: options.devicePluginDir,
    ...(resource.socketName ? { socketName: resource.socketName } : {}),
    ...(options.kubeletSocket ? { kubeletSocket: options.kubeletSocket } : {}),
    exclude: resource.exclude,
    replicas: resource.replicas,
    failRequestsGreaterThanOne: resource.failRequestsGreaterThanOne,
    preferredAllocation: resource.preferredAllocation,
    ...(resource.allocate
      ? {
          allocate: {
            ...resource.allocate,
            ...(cdi ? { cdi: { ...cdi, specDir: cdi.specDir ?? options.cdiDir } } : {}),
          },
        }
      : {}),
    ...(preStart ? { preStart } : {}),
    registrationMode: options.registrationMode ?? 'kubelet',
    ...(options.pluginsRegistryDir ? { pluginsRegistryDir: options.pluginsRegistryDir } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.restartPollIntervalMs ? { restartPollIntervalMs: options.restartPollIntervalMs } : {}),
    ...(options.registrationRetry ? { registrationRetry: options.registrationRetry } : {}),
    ...(options.acceptRawPathAuthority ? { routeConnection } : {}),
    ...(options.watch ? { watch: options.watch } : {}),
  });
}

export async function startPlugins(
  config: PluginConfig,
  options: StartPluginsOptions,
): Promise<PluginRuntime> {
  const logger = options.logger ?? pino({ level: 'silent' });
  const resources = new Map<string, ResourcePlugin>();
  const sources = new Map<string, DeviceSource>();
  for (const resource of config.resources) {
    const source = sourceFromConfig(resource, logger.child({ resource: resource.name }), options.watch);
    sources.set(resource.name, source);
    resources.set(resource.name, resourcePluginFromConfig(resource, { ...options, logger }, source));
  }
  const stop = async (): Promise<void> => {
    await Promise.all([...resources.values()].map((r) => r.stop()));
  };
  try {
    for (const plugin of resources.values()) await plugin.start();
  } catch (err) {
    await stop();
    throw PluginError.from(err);
  }
  return { resources, sources, stop };
}
