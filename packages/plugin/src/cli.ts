#!/usr/bin/env node
// plugboard-plugin: runs every resource of a config file as a device plugin until SIGTERM/SIGINT.
// Flags and environment are read here, once; everything else gets plain values.
import { hostname } from 'node:os';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DEVICE_PLUGIN_PATH, PLUGINS_REGISTRY_PATH } from '@plugboard/proto';
import { loadPluginConfig } from './config.js';
import { PluginError } from './errors.js';
import { createLogger, flushLogger, type LogLevel } from './logger.js';
import { startPlugins, type StartPluginsOptions } from './runtime.js';
import type { RegistrationMode } from './types.js';

export const HELP = `Usage: plugboard-plugin --config FILE [options]

Runs every resource in FILE as a Kubernetes device plugin (API v1beta1) until SIGTERM/SIGINT,
then stops streams, closes servers, removes its sockets and exits 0.

Options:
  -c, --config FILE              plugin config (YAML, see docs/CONFIG.md)      env PLUGBOARD_CONFIG
  -d, --device-plugin-dir DIR    kubelet device-plugin directory               env PLUGBOARD_DEVICE_PLUGIN_DIR
                                 (default ${DEVICE_PLUGIN_PATH.replace(/\/$/, '')})
      --kubelet-socket PATH      kubelet Registration socket (default DIR/kubelet.sock)
      --registration-mode MODE   kubelet (Register on kubelet.sock, default) or plugin-watcher
      --plugins-registry-dir DIR plugin-watcher socket directory (default ${PLUGINS_REGISTRY_PATH.replace(/\/$/, '')})
      --cdi-dir DIR              CDI spec directory for resources with allocate.cdi (default /var/run/cdi)
      --node-name NAME           node name in every log line (default: host name)  env PLUGBOARD_NODE_NAME
      --log-level LEVEL          fatal|error|warn|info|debug|trace|silent        env PLUGBOARD_LOG_LEVEL (default info)
  -h, --help                     show this help

Exit codes: 0 after a clean stop, 1 on a bad config or a failed start, 2 on bad flags.
`;

export interface CliOptions {
  configFile: string;
  nodeName: string;
  logLevel: LogLevel;
  start: StartPluginsOptions;
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
        'log-level': { type: 'string' },
        'node-name': { type: 'string' },
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
  const start: StartPluginsOptions = {
    devicePluginDir:
      values['device-plugin-dir'] ?? env.PLUGBOARD_DEVICE_PLUGIN_DIR ?? DEVICE_PLUGIN_PATH.replace(/\/$/, ''),
    registrationMode: mode as RegistrationMode,
    ...(values['kubelet-socket'] ? { kubeletSocket: values['kubelet-socket'] } : {}),
    ...(values['plugins-registry-dir'] ? { pluginsRegistryDir: values['plugins-registry-dir'] } : {}),
    ...(values['cdi-dir'] ? { cdiDir: values['cdi-dir'] } : {}),
  };
  const nodeName = values['node-name'] ?? env.PLUGBOARD_NODE_NAME ?? hostname();
  return { configFile, nodeName, logLevel: logLevel as LogLevel, start };
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
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
  let runtime;
  try {
    const config = await loadPluginConfig(options.configFile);
    runtime = await startPlugins(config, { ...options.start, logger });
  } catch (err) {
    const e = PluginError.from(err);
    process.stderr.write(`plugboard-plugin: ${e.message}\n`);
    logger.error({ code: e.code, err: e.message }, 'start failed');
    await flushLogger(logger);
    return 1;
  }
  logger.info(
    { resources: [...runtime.resources.keys()], devicePluginDir: options.start.devicePluginDir },
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
  await runtime.stop();
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
