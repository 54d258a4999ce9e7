// Running the image tools (buildah, mmdebstrap, skopeo, npm, tar): one place that spawns them, says
// what failed with the tool's own last words, and keeps their output on stderr so that a caller's
// stdout (a report, node:test's protocol) stays its own.
import { spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(fileURLToPath(import.meta.url), '../../..');

export class ImageToolError extends Error {
  constructor(
    readonly command: string,
    readonly status: number | null,
    readonly stderrTail: string,
  ) {
    super(`${command} failed (exit ${status ?? 'signal'})${stderrTail ? `:\n${stderrTail}` : ''}`);
  }
}

const describe = (cmd: string, args: readonly string[]) => [cmd, ...args].join(' ');

/** Runs a command to completion and returns its stdout; stderr is kept for the error message. */
export function capture(
  cmd: string,
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string | Buffer } = {},
): string {
  const res = spawnSync(cmd, args, {
    cwd: opts.cwd ?? repoRoot,
    env: opts.env ?? process.env,
    input: opts.input,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (res.error) throw new ImageToolError(describe(cmd, args), null, res.error.message);
  if (res.status !== 0)
    throw new ImageToolError(describe(cmd, args), res.status, res.stderr.trim().slice(-4000));
  return res.stdout;
}

/** Like capture() but true/false for "exit 0 or not" (probes such as `buildah inspect`). */
export function succeeds(cmd: string, args: readonly string[], timeoutMs = 60_000): boolean {
  const res = spawnSync(cmd, args, { cwd: repoRoot, stdio: 'ignore', timeout: timeoutMs });
  return res.status === 0;
}

/**
 * Runs a long command (a build) with its output streamed to our stderr, prefixed, and rejects with
 * the last lines when it fails.
 */
export function stream(
  cmd: string,
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; prefix?: string } = {},
): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd ?? repoRoot,
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tail: string[] = [];
    const prefix = opts.prefix ? `${opts.prefix} ` : '';
    let partial = '';
    const onData = (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        process.stderr.write(`${prefix}${line}\n`);
        tail.push(line);
        if (tail.length > 40) tail.shift();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', (err) => reject(new ImageToolError(describe(cmd, args), null, err.message)));
    child.once('close', (code) => {
      if (partial) onData(Buffer.from('\n'));
      if (code === 0) resolvePromise();
      else reject(new ImageToolError(describe(cmd, args), code, tail.join('\n')));
    });
  });
}

/** Whether a command is on PATH. */
export function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}
