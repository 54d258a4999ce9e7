// Stops the web server, then the cluster fixture, by pid.
import { stopPid } from './processes';

export default async function globalTeardown(): Promise<void> {
  await stopPid(Number(process.env.PLUGBOARD_WEB_PID) || undefined);
  await stopPid(Number(process.env.PLUGBOARD_FIXTURE_PID) || undefined);
}
