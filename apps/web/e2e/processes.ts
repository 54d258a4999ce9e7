// Child processes of the browser tests and the benchmark: the cluster fixture and the web server,
// each one pid, started with the line they print when ready and stopped by pid.
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const WEB_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_ROOT = resolve(WEB_DIR, '../..');

export interface Started {
  child: ChildProcess;
  value: string;
}

/**
 * Spawns `node args…` and resolves with the value of the first `PREFIX=value` line on stdout. It
 * fails when the child exits first, or prints nothing at all for `idleTimeoutMs`: a start-up that
 * reports progress (the fixture prints a line per node) may take as long as the machine's load makes
 * it; one that hangs is caught.
 */
export function startWithReadyLine(
  args: string[],
  prefix: string,
  env: Record<string, string | undefined>,
  idleTimeoutMs = 60_000,
): Promise<Started> {
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolvePromise, reject) => {
    let out = '';
    let err = '';
    const started = Date.now();
    const idle = (): NodeJS.Timeout =>
      setTimeout(() => {
        child.kill('SIGKILL');
        reject(
          new Error(
            `${args.join(' ')}: no ${prefix} line after ${Date.now() - started} ms, and no output for the last ${idleTimeoutMs} ms\n${err}`,
          ),
        );
      }, idleTimeoutMs);
    let timer = idle();
    const progressed = (): void => {
      clearTimeout(timer);
      timer = idle();
    };
    child.stderr.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-4000);
      progressed();
    });
    child.stdout.on('data', (d: Buffer) => {
      progressed();
      out += d.toString();
      const m = new RegExp(`^${prefix}=(.*)$`, 'm').exec(out);
      if (m) {
        clearTimeout(timer);
        // Keep draining so the child never blocks on a full pipe.
        child.stdout.removeAllListeners('data');
        child.stdout.resume();
        resolvePromise({ child, value: m[1]!.trim() });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${code} before it was ready\n${err}`));
    });
  });
}

export async function stopPid(pid: number | undefined, timeoutMs = 8000): Promise<void> {
  if (!pid) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

export function startFixture(env: Record<string, string | undefined> = process.env): Promise<Started> {
  return startWithReadyLine(
    ['--conditions=@plugboard/source', '--import', 'tsx', 'apps/web/e2e/cluster-fixture.ts'],
    'PLUGBOARD_FIXTURE',
    env,
    90_000,
  );
}

export function startWebServer(gateways: string, extraEnv: Record<string, string> = {}): Promise<Started> {
  return startWithReadyLine(
    ['--conditions=@plugboard/source', '--import', 'tsx', 'apps/web/server.ts'],
    'PLUGBOARD_WEB_URL',
    {
      ...process.env,
      NODE_ENV: 'production',
      NEXT_TELEMETRY_DISABLED: '1',
      PORT: '0',
      HOST: '127.0.0.1',
      PLUGBOARD_GATEWAYS: gateways,
      PLUGBOARD_LOG_LEVEL: 'warn',
      ...extraEnv,
    },
  );
}
