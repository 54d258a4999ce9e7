// plugboard-kubelet-sim: runs the simulator until SIGINT/SIGTERM. Wiring only; flags are parsed
// in config.ts, the simulator lives in kubelet-sim.ts.

import { pino } from 'pino';
import { parseCliConfig, USAGE } from './config.js';
import { KubeletSimError } from './errors.js';
import { startKubeletSim } from './kubelet-sim.js';

async function main(): Promise<void> {
  let config;
  try {
    config = parseCliConfig(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`plugboard-kubelet-sim: ${KubeletSimError.from(err).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (config.help) {
    process.stdout.write(USAGE);
    return;
  }
  const logger = pino({ level: config.logLevel });
  let sim;
  try {
    sim = await startKubeletSim({ ...config.options, logger });
  } catch (err) {
    const e = KubeletSimError.from(err);
    logger.fatal({ err: e.message, code: e.code }, 'cannot start the kubelet simulator');
    process.exit(e.code === 'Config' ? 2 : 1);
  }
  logger.info(
    {
      component: 'cli',
      url: sim.url,
      kubeconfig: sim.kubeconfigPath,
      podResourcesSocket: sim.podResourcesSocket,
      devicePluginDir: sim.devicePluginDir,
      node: sim.nodeName,
    },
    'ready',
  );
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    sim.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err: String(err) }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

await main();
