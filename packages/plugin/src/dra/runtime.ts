// Turns the `dra:` sections of a parsed config into running DRA drivers (one DraDriver and one fault
// directory each), the way runtime.ts does for device plugins. If one fails to start, the ones
// already started are stopped again.
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { routeConnection } from '@plugboard/grpc-authority';
import { KUBELET_PLUGINS_PATH, type WatchFactory } from '@plugboard/proto';
import { compileTemplate } from '../allocation/template.js';
import { DRA_ATTRIBUTE_VARIABLES, type DraDriverConfig, type PluginConfig } from '../config.js';
import { PluginError } from '../errors.js';
import { deviceSourceFromSections } from '../runtime.js';
import type { DeviceSource, PluginDevice } from '../types.js';
import type { DeviceAttribute, DeviceCapacity } from './api-types.js';
import { DraDriver } from './driver.js';
import { FAULT_DIR_NAME, FaultDir } from './fault-dir.js';
import type { DraKubeApi } from './kube-api.js';
import { draDeviceName, evenPartitions, type PartitionOptions } from './slice-devices.js';

export interface StartDraDriversOptions {
  nodeName: string;
  kube: DraKubeApi;
  /** Default /var/lib/kubelet/plugins. */
  pluginsDir?: string;
  /** Default /var/lib/kubelet/plugins_registry. */
  pluginsRegistryDir?: string;
  /** Default /var/run/cdi. */
  cdiDir?: string;
  logger?: Logger;
  restartPollIntervalMs?: number;
  /** Polling fallback of the fault directories (default 1000 ms). */
  faultDirPollMs?: number;
  /** The directory watches (sockets, fault directories, scanned devices): fs.watch unless a test injects a failing one. */
  watch?: WatchFactory;
  /** Let faults carry a taint of their own (DraDriverOptions.faultTaints; the gateway's fault API). */
  faultTaints?: boolean;
  /**
   * Serve a kubelet that dials with the raw socket path as `:authority` (kubelets < 1.26; Node's
   * HTTP/2 layer refuses it): @plugboard/grpc-authority on the driver's sockets. Default false.
   */
  acceptRawPathAuthority?: boolean;
}

export interface DraRuntime {
  drivers: Map<string, DraDriver>;
  /** The device source behind each driver (e.g. a SimulatedSource to flap devices). */
  sources: Map<string, DeviceSource>;
  /** The fault directory of each driver. */
  faultDirs: Map<string, FaultDir>;
  /** Stops every driver: stops serving, removes the sockets, leaves the ResourceSlices. */
  stop(): Promise<void>;
}

/** "gpu.example.com" → "gpu": the default ID prefix of a simulated DRA source. */
export function draIdPrefix(driverName: string): string {
  return driverName.split('.')[0] || 'dev';
}

/** The attributes of the config, with {{id}}, {{name}} and {{numaNode}} filled in per device. */
function attributesFromConfig(
  config: DraDriverConfig,
): ((d: PluginDevice) => Record<string, DeviceAttribute>) | undefined {
  const entries = Object.entries(config.attributes);
  if (entries.length === 0) return undefined;
  const compiled = entries.map(([name, value]) => {
    if (value.string !== undefined) {
      const template = compileTemplate(value.string, DRA_ATTRIBUTE_VARIABLES);
      return [
        name,
        (d: PluginDevice): DeviceAttribute => ({
          string: template({ id: d.id, name: draDeviceName(d.id), numaNode: String(d.numaNodes[0] ?? '') }),
        }),
      ] as const;
    }
    const fixed = Object.fromEntries(
      Object.entries(value).filter(([, v]) => v !== undefined),
    ) as DeviceAttribute;
    return [name, (): DeviceAttribute => fixed] as const;
  });
  return (d) => Object.fromEntries(compiled.map(([name, f]) => [name, f(d)]));
}

/** The capacity of the config, each with its `sharing.requestPolicy` if it has one. */
function capacityFromConfig(config: DraDriverConfig): Record<string, string | DeviceCapacity> | null {
  const entries = Object.entries(config.capacity);
  if (entries.length === 0) return null;
  const policies = config.sharing?.requestPolicy ?? {};
  return Object.fromEntries(
    entries.map(([name, value]) => {
      const requestPolicy = policies[name];
      return [name, requestPolicy ? { value, requestPolicy } : value];
    }),
  );
}

/** `partitions:` of the config: the same counters on every device, split evenly. */
function partitionsFromConfig(config: DraDriverConfig): PartitionOptions | null {
  if (!config.partitions) return null;
  const counters = { ...config.partitions.counters };
  return { counters: () => counters, partitions: evenPartitions(counters, config.partitions.even) };
}

export function draDriverFromConfig(
  config: DraDriverConfig,
  options: StartDraDriversOptions,
  source: DeviceSource = deviceSourceFromSections(config, config.driver, draIdPrefix(config.driver)),
): DraDriver {
  const capacity = capacityFromConfig(config);
  const partitions = partitionsFromConfig(config);
  const attributes = attributesFromConfig(config);
  return new DraDriver({
    driverName: config.driver,
    nodeName: options.nodeName,
    source,
    kube: options.kube,
    exclude: config.exclude,
    replicas: config.replicas,
    ...(config.pool ? { poolName: config.pool } : {}),
    ...(attributes ? { attributes } : {}),
    ...(capacity ? { capacity: () => capacity } : {}),
    ...(config.sharing?.allowMultipleAllocations ? { allowMultipleAllocations: true } : {}),
    ...(partitions ? { partitions } : {}),
    ...(config.taints
      ? { taints: { effect: config.taints.effect, ...(config.taints.key ? { key: config.taints.key } : {}) } }
      : {}),
    ...(config.cdi ? { cdi: { ...config.cdi } } : {}),
    ...(config.healthCheckTimeoutSeconds !== undefined
      ? { healthCheckTimeoutSeconds: config.healthCheckTimeoutSeconds }
      : {}),
    ...(config.sysfsPci ? { pciBusIdFromId: true } : {}),
    ...(config.deviceStatus ? { deviceStatus: true } : {}),
    ...(options.pluginsDir ? { pluginsDir: options.pluginsDir } : {}),
    ...(options.pluginsRegistryDir ? { pluginsRegistryDir: options.pluginsRegistryDir } : {}),
    ...(options.cdiDir ? { cdiDir: options.cdiDir } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.restartPollIntervalMs ? { restartPollIntervalMs: options.restartPollIntervalMs } : {}),
    ...(options.faultTaints ? { faultTaints: true } : {}),
    ...(options.acceptRawPathAuthority ? { routeConnection } : {}),
    ...(options.watch ? { watch: options.watch } : {}),
  });
}

/** The fault directory of a driver: its `faultDir`, else <plugins dir>/<driver>/faults. */
export function faultDirOf(
  config: Pick<DraDriverConfig, 'driver' | 'faultDir'>,
  pluginsDir = KUBELET_PLUGINS_PATH,
): string {
  return config.faultDir ?? join(pluginsDir, config.driver, FAULT_DIR_NAME);
}

export async function startDraDrivers(
  config: PluginConfig,
  options: StartDraDriversOptions,
): Promise<DraRuntime> {
  const logger = options.logger ?? pino({ level: 'silent' });
  const drivers = new Map<string, DraDriver>();
  const sources = new Map<string, DeviceSource>();
  const faultDirs = new Map<string, FaultDir>();
  for (const entry of config.dra) {
    const source = deviceSourceFromSections(
      entry,
      entry.driver,
      draIdPrefix(entry.driver),
      logger.child({ driver: entry.driver }),
      options.watch,
    );
    const driver = draDriverFromConfig(entry, { ...options, logger }, source);
    sources.set(entry.driver, source);
    drivers.set(entry.driver, driver);
    faultDirs.set(
      entry.driver,
      new FaultDir(
        driver,
        faultDirOf(entry, options.pluginsDir),
        logger,
        options.faultDirPollMs,
        options.watch,
      ),
    );
  }
  const stop = async (): Promise<void> => {
    await Promise.all([...faultDirs.values()].map((f) => f.stop()));
    await Promise.all([...drivers.values()].map((d) => d.stop()));
  };
  try {
    for (const [name, driver] of drivers) {
      await driver.start();
      await faultDirs.get(name)!.start();
    }
  } catch (err) {
    await stop();
    throw PluginError.from(err);
  }
  return { drivers, sources, faultDirs, stop };
}
