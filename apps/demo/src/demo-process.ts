// The demo as a user starts it, for the tests that drive it whole (`npm start`, `npm start -- --cluster
// real`): a process group of its own from the repo root (like a terminal's foreground job), waited
// on until it prints its URL; everything it prints is kept for the assertions.
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export interface DemoExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface DemoProcess {
  readonly child: ChildProcess;
  /** Everything it printed so far, stdout and stderr as they came. */
  readonly output: string;
  /** The dashboard's URL, from its "ready in … — open <url>" line. */
  readonly url: string;
  /** Its temporary state directory, from its "state directory <dir>" line. */
  readonly stateDir: string;
  /** Resolves once it printed its URL; rejects if it exits first. */
  readonly ready: Promise<void>;
  readonly exited: Promise<DemoExit>;
  /** Whether any process of its group is still alive. */
  groupAlive(): boolean;
  /** SIGINT to the whole group (what Ctrl-C sends to the foreground group); resolves on its exit. */
  interrupt(): Promise<DemoExit>;
  /** SIGKILL to the group if it still runs (a suite's `after`). */
  kill(): void;
}

export interface StartDemoOptions {
  /** Added to the environment (PORT=0 and no Next telemetry are set already). */
  env?: NodeJS.ProcessEnv;
  /** Ready only once this holds of the output too (besides the ready line). */
  readyWhen?: (output: string) => boolean;
}

/**
 * Starts `command args` from the repo root. The handle comes at once, so that a suite's `after` can
 * kill the group even when `ready` never comes.
 */
export function startDemo(command: string, args: string[], options: StartDemoOptions = {}): DemoProcess {
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: { ...process.env, PORT: '0', NEXT_TELEMETRY_DISABLED: '1', ...options.env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<DemoExit>((res) => child.once('exit', (code, signal) => res({ code, signal })));
  let output = '';
  let url = '';
  let stateDir = '';
  const ready = new Promise<void>((res, rej) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      stateDir ||= /state directory (\S+)/.exec(output)?.[1] ?? '';
      const m = /ready in [\d.]+ s — open (http:\/\/\S+)/.exec(output);
      if (m && (options.readyWhen?.(output) ?? true)) {
        url ||= m[1]!;
        res();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then(({ code, signal }) =>
      rej(
        new Error(
          `${[command, ...args].join(' ')} exited (code ${code}, signal ${signal}) before it was ready:\n${output}`,
        ),
      ),
    );
  });
  const groupAlive = (): boolean => {
    try {
      process.kill(-child.pid!, 0);
      return true;
    } catch {
      return false;
    }
  };
  return {
    child,
    get output() {
      return output;
    },
    get url() {
      return url;
    },
    get stateDir() {
      return stateDir;
    },
    ready,
    exited,
    groupAlive,
    interrupt: () => {
      process.kill(-child.pid!, 'SIGINT');
      return exited;
    },
    kill: () => {
      if (child.exitCode !== null || child.signalCode !== null || !child.pid) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    },
  };
}
