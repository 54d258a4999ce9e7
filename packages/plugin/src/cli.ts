#!/usr/bin/env node
// plugboard-plugin: runs every resource of a config file as a device plugin and every `dra:`
// section as a DRA driver, side by side, until SIGTERM/SIGINT; `plugboard-plugin fault|heal`
// faults or heals one device of a running DRA driver through its fault directory.
// Flags and environment are read here, once; everything else gets plain values.
import { EventEmitter, once } from 'node:events';
import { readFile, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import {
  DEVICE_PLUGIN_PATH,
  KUBELET_PLUGINS_PATH,
  PLUGINS_REGISTRY_PATH,
  watchDirectory,
  type WatchFactory,
} from '@plugboard/proto';
import { writeFileAtomic } from './atomic-file.js';
import { loadPluginConfig } from './config.js';
import { DEFAULT_CDI_SPEC_DIR } from './cdi.js';
import { FAULT_STATUS_FILE, type FaultDirStatus } from './dra/fault-dir.js';
import { kubeApiFromKubeConfig, type KubeAccess } from './dra/kube-api.js';
import { driverNameProblem } from './dra/names.js';
import { faultDirOf, startDraDrivers, type DraRuntime } from './dra/runtime.js';
import { PluginError } from './errors.js';
import { createLogger, flushLogger, type LogLevel } from './logger.js';
import { startPlugins, type PluginRuntime, type StartPluginsOptions } from './runtime.js';
import type { RegistrationMode } from './types.js';

const dir = (path: string): string => path.replace(/\/$/, '');

export const HELP = `Usage: plugboard-plugin --config FILE [options]
       plugboard-plugin fault --driver NAME --device ID [--reason TEXT] [fault options]
       plugboard-plugin heal  --driver NAME --device ID [fault options]

Runs every resource in FILE as a Kubernetes device plugin (API v1beta1) and every dra: section
as a DRA driver (resource.k8s.io/v1), side by side, until SIGTERM/SIGINT; then stops streams,
closes servers, removes its sockets (a DRA driver leaves its ResourceSlices) and exits 0.

Options:
  -c, --config FILE              plugin config (YAML, see docs/CONFIG.md)      env PLUGBOARD_CONFIG
  -d, --device-plugin-dir DIR    kubelet device-plugin directory               env PLUGBOARD_DEVICE_PLUGIN_DIR
                                 (default ${dir(DEVICE_PLUGIN_PATH)})
      --kubelet-socket PATH      kubelet Registration socket (default DIR/kubelet.sock)
      --registration-mode MODE   kubelet (Register on kubelet.sock, default) or plugin-watcher
      --plugins-registry-dir DIR plugin-watcher socket directory (DRA drivers, and device plugins in
                                 plugin-watcher mode)                          env PLUGBOARD_PLUGINS_REGISTRY_DIR
                                 (default ${dir(PLUGINS_REGISTRY_PATH)})
      --plugins-dir DIR          DRA drivers serve DIR/<driver>/dra.sock       env PLUGBOARD_PLUGINS_DIR
                                 (default ${KUBELET_PLUGINS_PATH})
      --cdi-dir DIR              CDI spec directory (DRA drivers, resources with allocate.cdi)
                                 (default ${DEFAULT_CDI_SPEC_DIR})                         env PLUGBOARD_CDI_DIR
      --kubeconfig FILE          API server access for DRA drivers             env PLUGBOARD_KUBECONFIG
                                 (else KUBECONFIG, else the pod's service account)
      --node-name NAME           this node (DRA ResourceSlices, every log line) env PLUGBOARD_NODE_NAME
                                 (else NODE_NAME, else the host name)
      --log-level LEVEL          fatal|error|warn|info|debug|trace|silent        env PLUGBOARD_LOG_LEVEL (default info)
      --accept-raw-path-authority
                                 serve a kubelet < 1.26 that dials the plugins' and drivers' sockets
                                 with the socket path as :authority (Node's HTTP/2 refuses it; off
                                 by default)                  env PLUGBOARD_ACCEPT_RAW_PATH_AUTHORITY=true
  -h, --help                     show this help

Fault options (fault/heal write or remove <fault dir>/<device>; a running driver applies it):
      --driver NAME              the DRA driver (its dra: section's driver)
      --device ID                a device ID or its ResourceSlice name
      --reason TEXT              why (fault only; default "fault injected by plugboard-plugin fault")
      --plugins-dir DIR          as above; the fault dir is DIR/<driver>/faults
      --fault-dir DIR            the driver's faultDir, if its config sets one
      --timeout-ms N             wait this long for the driver to apply it (default 5000)
      --no-wait                  do not wait

Exit codes: 0 after a clean stop (fault/heal: applied), 1 on a bad config, a failed start or a
fault the driver did not apply, 2 on bad flags.
`;

export interface DraCliOptions {
  pluginsDir: string;
  pluginsRegistryDir: string;
  cdiDir: string;
  /** Where the API server is; null when no flag, variable or in-cluster account says. */
  kube: KubeAccess | null;
  /** As StartPluginsOptions.acceptRawPathAuthority, for the drivers' sockets. */
  acceptRawPathAuthority: boolean;
}

export interface CliOptions {
  configFile: string;
  nodeName: string;
  logLevel: LogLevel;
  start: StartPluginsOptions;
  dra: DraCliOptions;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const MODES = ['kubelet', 'plugin-watcher'] as const;

class UsageError extends Error {}

/** Flags + environment → options. Returns 'help' for --help. */
export function parseCliArgs(argv: string[], env: NodeJS.ProcessEnv): CliOptions | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: 'string', short: 'c' },
        'device-plugin-dir': { type: 'string', short: 'd' },
        'kubelet-socket': { type: 'string' },
        'registration-mode': { type: 'string' },
        'plugins-registry-dir': { type: 'string' },
        'cdi-dir': { type: 'string' },
        'plugins-dir': { type: 'string' },
        kubeconfig: { type: 'string' },
        'log-level': { type: 'string' },
        'node-name': { type: 'string' },
        'accept-raw-path-authority': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) return 'help';
  const configFile = values.config ?? env.PLUGBOARD_CONFIG;
  if (!configFile) throw new UsageError('--config FILE (or PLUGBOARD_CONFIG) is required');
  const mode = values['registration-mode'] ?? 'kubelet';
  if (!(MODES as readonly string[]).includes(mode))
    throw new UsageError(`--registration-mode must be one of ${MODES.join(', ')}, got "${mode}"`);
  const logLevel = values['log-level'] ?? env.PLUGBOARD_LOG_LEVEL ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel))
    throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  const rawPathEnv = env.PLUGBOARD_ACCEPT_RAW_PATH_AUTHORITY ?? '';
  if (!['', 'true', 'false'].includes(rawPathEnv))
    throw new UsageError(`PLUGBOARD_ACCEPT_RAW_PATH_AUTHORITY must be true or false, got "${rawPathEnv}"`);
  const acceptRawPathAuthority = values['accept-raw-path-authority'] ?? rawPathEnv === 'true';
  const pluginsRegistryDir = values['plugins-registry-dir'] ?? env.PLUGBOARD_PLUGINS_REGISTRY_DIR;
  const cdiDir = values['cdi-dir'] ?? env.PLUGBOARD_CDI_DIR;
  const start: StartPluginsOptions = {
    devicePluginDir:
      values['device-plugin-dir'] ?? env.PLUGBOARD_DEVICE_PLUGIN_DIR ?? dir(DEVICE_PLUGIN_PATH),
    registrationMode: mode as RegistrationMode,
    ...(values['kubelet-socket'] ? { kubeletSocket: values['kubelet-socket'] } : {}),
    ...(pluginsRegistryDir ? { pluginsRegistryDir } : {}),
    ...(cdiDir ? { cdiDir } : {}),
    ...(acceptRawPathAuthority ? { acceptRawPathAuthority } : {}),
  };
  // The kubelet's default node name is the host name, lower-cased.
  const nodeName =
    values['node-name'] ?? env.PLUGBOARD_NODE_NAME ?? env.NODE_NAME ?? hostname().toLowerCase();
  const kubeconfig = values.kubeconfig ?? env.PLUGBOARD_KUBECONFIG ?? env.KUBECONFIG;
  const dra: DraCliOptions = {
    pluginsDir: values['plugins-dir'] ?? env.PLUGBOARD_PLUGINS_DIR ?? KUBELET_PLUGINS_PATH,
    pluginsRegistryDir: pluginsRegistryDir ?? dir(PLUGINS_REGISTRY_PATH),
    cdiDir: cdiDir ?? DEFAULT_CDI_SPEC_DIR,
    kube: kubeconfig
      ? { kubeconfig: kubeconfig.split(':')[0]! }
      : env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT
        ? { inCluster: true }
        : null,
    acceptRawPathAuthority,
  };
  return { configFile, nodeName, logLevel: logLevel as LogLevel, start, dra };
}

export interface FaultCommand {
  action: 'fault' | 'heal';
  driver: string;
  device: string;
  reason: string;
  faultDir: string;
  wait: boolean;
  timeoutMs: number;
}

/** `fault`/`heal` flags + environment → the command. */
export function parseFaultArgs(
  action: 'fault' | 'heal',
  argv: string[],
  env: NodeJS.ProcessEnv,
): FaultCommand {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        driver: { type: 'string' },
        device: { type: 'string' },
        reason: { type: 'string' },
        'plugins-dir': { type: 'string' },
        'fault-dir': { type: 'string' },
        'timeout-ms': { type: 'string' },
        'no-wait': { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const driver = values.driver;
  if (!driver) throw new UsageError(`${action}: --driver NAME is required`);
  const problem = driverNameProblem(driver);
  if (problem) throw new UsageError(`${action}: --driver "${driver}" ${problem}`);
  const device = values.device;
  if (!device) throw new UsageError(`${action}: --device ID is required`);
  if (device.includes('/') || device.startsWith('.')) {
    throw new UsageError(`${action}: --device "${device}" must not contain "/" or start with "."`);
  }
  if (action === 'heal' && values.reason !== undefined)
    throw new UsageError('heal: --reason applies to fault only');
  const timeoutMs = values['timeout-ms'] === undefined ? 5000 : Number(values['timeout-ms']);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 0) {
    throw new UsageError(
      `${action}: --timeout-ms must be a whole number of milliseconds, got "${values['timeout-ms']}"`,
    );
  }
  const pluginsDir = values['plugins-dir'] ?? env.PLUGBOARD_PLUGINS_DIR ?? KUBELET_PLUGINS_PATH;
  return {
    action,
    driver,
    device,
    reason: (values.reason ?? 'fault injected by plugboard-plugin fault').split('\n')[0]!,
    faultDir: faultDirOf(
      { driver, ...(values['fault-dir'] ? { faultDir: values['fault-dir'] } : {}) },
      pluginsDir,
    ),
    wait: !values['no-wait'],
    timeoutMs,
  };
}

async function readStatus(path: string): Promise<FaultDirStatus | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as FaultDirStatus;
  } catch {
    return null;
  }
}

export interface FaultWaitOptions {
  /** fs.watch unless a test injects a failing one. */
  watch?: WatchFactory;
  /** How often the status is read again where the fault directory cannot be watched (default 100 ms). */
  pollMs?: number;
  /** Where the fallback to polling is told (default stderr). */
  warn?: (line: string) => void;
}

/**
 * Writes or removes the fault file, then waits until the driver's status shows it in effect: on
 * fs.watch events, or by polling (said on stderr) where the directory cannot be watched.
 */
export async function runFaultCommand(
  cmd: FaultCommand,
  options: FaultWaitOptions = {},
): Promise<{ code: number; message: string }> {
  const file = join(cmd.faultDir, cmd.device);
  const statusPath = join(cmd.faultDir, FAULT_STATUS_FILE);
  try {
    if (cmd.action === 'fault') await writeFileAtomic(file, `${cmd.reason}\n`);
    else await rm(file, { force: true });
  } catch (err) {
    return {
      code: 1,
      message: `cannot ${cmd.action === 'fault' ? 'write' : 'remove'} ${file}: ${(err as Error).message} (is --plugins-dir or --fault-dir right?)`,
    };
  }
  const done = cmd.action === 'fault' ? `${cmd.device}: faulted (${cmd.reason})` : `${cmd.device}: healed`;
  if (!cmd.wait) return { code: 0, message: `${file}: ${cmd.action === 'fault' ? 'written' : 'removed'}` };
  const matches = (status: FaultDirStatus): 'yes' | 'no' | 'unknown' => {
    if (cmd.action === 'fault' && status.unknown.includes(cmd.device)) return 'unknown';
    const fault = Object.entries(status.faults).find(([id, f]) => id === cmd.device || f.name === cmd.device);
    if (cmd.action === 'heal') return fault ? 'no' : 'yes';
    return fault?.[1].reason === cmd.reason ? 'yes' : 'no';
  };
  const signal = AbortSignal.timeout(cmd.timeoutMs);
  const changed = new EventEmitter<{ change: [] }>();
  const warn = options.warn ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const watcher = watchDirectory(cmd.faultDir, () => changed.emit('change'), {
    pollMs: options.pollMs ?? 100,
    // The timeout's timer does not keep the process alive; the wait must.
    persistent: true,
    ...(options.watch ? { watch: options.watch } : {}),
    logger: {
      warn: (fields) =>
        warn(
          `plugboard-plugin: ${cmd.faultDir} cannot be watched, polling it every ${options.pollMs ?? 100} ms: ${(fields as { reason?: string }).reason ?? ''}`,
        ),
    },
  });
  try {
    for (;;) {
      // Listen before reading: a status written between the read and the wait is not missed.
      const next = once(changed, 'change', { signal });
      next.catch(() => undefined);
      const status = await readStatus(statusPath);
      const state = status ? matches(status) : 'no';
      if (state === 'yes') return { code: 0, message: done };
      if (state === 'unknown') {
        await rm(file, { force: true });
        return {
          code: 1,
          message: `driver ${cmd.driver} has no device "${cmd.device}" (fault file removed again)`,
        };
      }
      await next;
    }
  } catch {
    return {
      code: 1,
      message: `driver ${cmd.driver} did not apply the ${cmd.action} within ${cmd.timeoutMs} ms (is it running, with this fault directory ${cmd.faultDir}?)`,
    };
  } finally {
    watcher.close();
  }
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const action = argv[0];
  if (action === 'fault' || action === 'heal') {
    let cmd: FaultCommand;
    try {
      cmd = parseFaultArgs(action, argv.slice(1), env);
    } catch (err) {
      process.stderr.write(`plugboard-plugin: ${(err as Error).message}\n\n${HELP}`);
      return 2;
    }
    const { code, message } = await runFaultCommand(cmd);
    (code === 0 ? process.stdout : process.stderr).write(
      `${code === 0 ? '' : 'plugboard-plugin: '}${message}\n`,
    );
    return code;
  }
  let options: CliOptions | 'help';
  try {
    options = parseCliArgs(argv, env);
  } catch (err) {
    process.stderr.write(`plugboard-plugin: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  const logger = createLogger(options.logLevel, { node: options.nodeName });
  // Listen before starting: a SIGTERM that arrives while we start must still end in a clean stop.
  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  let runtime: PluginRuntime | null = null;
  let dra: DraRuntime | null = null;
  try {
    const config = await loadPluginConfig(options.configFile);
    if (config.dra.length > 0 && options.dra.kube === null) {
      throw new PluginError(
        'config-invalid',
        `${options.configFile}: dra[0].driver ${config.dra[0]!.driver}: DRA drivers need the Kubernetes API: ` +
          'pass --kubeconfig FILE (or set PLUGBOARD_KUBECONFIG or KUBECONFIG), or run in a pod with a service account',
      );
    }
    // Loading the API client takes a while: let it overlap the device plugins' start.
    const kube = config.dra.length > 0 ? kubeApiFromKubeConfig(options.dra.kube!) : null;
    kube?.catch(() => undefined);
    runtime = await startPlugins(config, { ...options.start, logger });
    if (kube) {
      dra = await startDraDrivers(config, {
        nodeName: options.nodeName,
        kube: await kube,
        pluginsDir: options.dra.pluginsDir,
        pluginsRegistryDir: options.dra.pluginsRegistryDir,
        cdiDir: options.dra.cdiDir,
        acceptRawPathAuthority: options.dra.acceptRawPathAuthority,
        logger,
      });
    }
  } catch (err) {
    await runtime?.stop();
    const e = PluginError.from(err);
    process.stderr.write(`plugboard-plugin: ${e.message}\n`);
    logger.error({ code: e.code, err: e.message }, 'start failed');
    await flushLogger(logger);
    return 1;
  }
  logger.info(
    {
      resources: [...runtime.resources.keys()],
      devicePluginDir: options.start.devicePluginDir,
      draDrivers: [...(dra?.drivers.keys() ?? [])],
      ...(dra
        ? { pluginsDir: options.dra.pluginsDir, pluginsRegistryDir: options.dra.pluginsRegistryDir }
        : {}),
    },
    'running',
  );
  const signal = await signalled;
  logger.info({ signal }, 'stopping');
  // The kubelet gives plugins little time; never hang past the 5 s budget.
  const guard = setTimeout(() => {
    logger.error('stop took longer than 4 s; exiting');
    logger.flush();
    process.exit(1);
  }, 4000);
  guard.unref();
  await Promise.all([runtime.stop(), dra?.stop()]);
  clearTimeout(guard);
  logger.info('stopped');
  await flushLogger(logger);
  return 0;
}

/** Entry point of the bin shim and of `node src/cli.ts`. */
export async function run(): Promise<void> {
  const code = await main(process.argv.slice(2), process.env);
  // Exit explicitly: a client library's idle timer must not keep a stopped plugin alive.
  process.exit(code);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
