// plugboard-gateway: parse flags/env/config, start the gateway, stop it cleanly on SIGINT/SIGTERM.
// Configuration errors name the file, field and reason and exit with status 2.
import { pino } from 'pino';
import { GATEWAY_USAGE, loadGatewayConfig } from './config.js';
import { GatewayError } from './errors.js';
import { startGateway } from './main.js';

async function main(): Promise<number> {
  let loaded;
  try {
    loaded = loadGatewayConfig(process.argv.slice(2), process.env);
  } catch (err) {
    process.stderr.write(`plugboard-gateway: ${(err as Error).message}\n`);
    return 2;
  }
  if (loaded.help) {
    process.stdout.write(`${GATEWAY_USAGE}\n`);
    return 0;
  }
  const logger = pino({ level: loaded.config.logLevel });
  let gateway;
  try {
    gateway = await startGateway(loaded.config, { logger });
  } catch (err) {
    const e = GatewayError.from(err);
    logger.fatal({ code: e.code, err: e.cause ?? e }, e.message);
    process.stderr.write(`plugboard-gateway: ${e.message}\n`);
    return e.code === 'config-invalid' ? 2 : 1;
  }
  await new Promise<void>((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      logger.info({ signal }, 'stopping');
      resolve();
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
  const force = setTimeout(() => {
    logger.error('shutdown took longer than 5 s; exiting');
    process.exit(1);
  }, 5000);
  force.unref();
  await gateway.stop();
  return 0;
}

process.exitCode = await main();
