// The cluster's processes: started detached (they outlive `plugboard-cluster up`), their output in
// a log file each, their pids kept in the cluster's state file; stopped by pid, after checking that
// the pid still runs the program it was started as (a pid can be reused).
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { LocalClusterError } from './errors.js';

export interface ProcessRecord {
  /** What it is: "etcd", "kube-apiserver", "kubelet node-1", … */
  name: string;
  pid: number;
  /** The process's start time (/proc/<pid>/stat, clock ticks since boot): tells a reused pid apart. */
  startTime: string | null;
  argv: string[];
  log: string;
}

/** Processes this process started and has not stopped, in start order (for an interrupted `up`). */
const startedHere: ProcessRecord[] = [];

/** Stops, newest first, every process this process started and has not stopped yet. */
export async function stopStartedHere(): Promise<void> {
  for (const rec of [...startedHere].reverse()) await stopProcess(rec);
}

/** Starts argv detached, stdout and stderr appended to log. */
export function startDaemon(
  name: string,
  argv: readonly string[],
  log: string,
  env?: NodeJS.ProcessEnv,
): ProcessRecord {
  const fd = openSync(log, 'a');
  try {
    const child = spawn(argv[0]!, argv.slice(1), {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { ...process.env, ...env },
    });
    if (child.pid === undefined) {
      throw new LocalClusterError('component-exited', `${name}: could not start ${argv[0]}`);
    }
    // Reaped by libuv when it exits; the cluster's state, not this handle, keeps track of it.
    child.on('error', () => undefined);
    child.unref();
    const rec = { name, pid: child.pid, startTime: startTimeOf(child.pid), argv: [...argv], log };
    startedHere.push(rec);
    return rec;
  } finally {
    closeSync(fd);
  }
}

function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: split after it.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

function startTimeOf(pid: number): string | null {
  // Field 22 (starttime); fields after the name start at field 3.
  return statFields(pid)?.[22 - 3] ?? null;
}

/** Whether pid runs and is not a zombie. */
export function pidAlive(pid: number): boolean {
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** Whether the record's process still runs: the same pid, started at the same time (not a reused pid). */
export function recordAlive(rec: ProcessRecord): boolean {
  if (!pidAlive(rec.pid)) return false;
  return (rec.startTime ?? null) === null || startTimeOf(rec.pid) === rec.startTime;
}

/** The last lines of a log file (for a crash report). */
export function tailLog(log: string, lines = 20): string {
  try {
    const text = readFileSync(log, 'utf8').trimEnd().split('\n');
    return text.slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** SIGTERM, then SIGKILL after graceMs; resolves once the process is gone. */
export async function stopProcess(rec: ProcessRecord, graceMs = 10_000): Promise<void> {
  const i = startedHere.findIndex((r) => r.pid === rec.pid);
  if (i >= 0) startedHere.splice(i, 1);
  if (!recordAlive(rec)) return;
  try {
    process.kill(rec.pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (pidAlive(rec.pid) && Date.now() < deadline) await sleep(50);
  if (pidAlive(rec.pid)) {
    try {
      process.kill(rec.pid, 'SIGKILL');
    } catch {
      return;
    }
    while (pidAlive(rec.pid)) await sleep(20);
  }
}

/**
 * Polls check() until it returns a value, failing early, with the component's name and the end of
 * its log, if one of the watched processes exits meanwhile.
 */
export async function waitUntil<T>(
  what: string,
  check: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  opts: { timeoutMs: number; watch: readonly ProcessRecord[]; intervalMs?: number },
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    for (const rec of opts.watch) {
      if (!pidAlive(rec.pid)) {
        throw new LocalClusterError(
          'component-exited',
          `${rec.name} exited while waiting for ${what}; the end of its log (${rec.log}):\n${tailLog(rec.log)}`,
        );
      }
    }
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const logs = opts.watch.map((r) => `--- ${r.name} (${r.log}):\n${tailLog(r.log, 10)}`).join('\n');
      throw new LocalClusterError(
        'timeout',
        `timed out after ${Math.round(opts.timeoutMs / 1000)} s waiting for ${what}` +
          (lastError ? ` (last error: ${String((lastError as Error).message ?? lastError)})` : '') +
          (logs ? `\n${logs}` : ''),
      );
    }
    await sleep(opts.intervalMs ?? 200);
  }
}
