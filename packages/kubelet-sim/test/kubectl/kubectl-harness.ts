// The real kubectl (v1.35, taken by deploy/scripts/fetch-tools.mjs from the same npm package as helm)
// against kubelet-sim: one-shot commands through execFile with a deadline, `get -w` streamed through
// spawn and read line by line, each call with its own HOME and discovery cache so that nothing
// leaks between tests; and parsers for what an operator reads (tables, describe sections).

import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(fileURLToPath(import.meta.url), '../../../../..');

let binary: Promise<string> | undefined;

/** Path of the cached kubectl binary (downloaded through npm on first use). */
export function kubectlBinary(): Promise<string> {
  binary ??= new Promise((resolvePath, reject) => {
    execFile(
      process.execPath,
      [join(repoRoot, 'deploy/scripts/fetch-tools.mjs'), 'kubectl'],
      { timeout: 120_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`fetch-tools kubectl failed: ${stderr || err.message}`, { cause: err }));
        else resolvePath(stdout.trim());
      },
    );
  });
  return binary;
}

export interface KubectlResult {
  args: readonly string[];
  /** The process's exit code. */
  code: number;
  stdout: string;
  stderr: string;
}

export interface KubectlOptions {
  /** Passed as `--kubeconfig` before the command (plugins take it after their name: use env). */
  kubeconfig?: string;
  /** Added to the environment kubectl sees (PATH, HOME and KUBECACHEDIR are set already). */
  env?: Record<string, string>;
}

/** Runs kubectl; every call gets a fresh HOME and KUBECACHEDIR under one temporary root. */
export class Kubectl {
  private readonly root = mkdtempSync(join(tmpdir(), 'pb-kubectl-'));
  private readonly watches = new Set<KubectlWatch>();
  private calls = 0;

  constructor(
    readonly binary: string,
    private readonly o: KubectlOptions = {},
  ) {}

  private argv(args: readonly string[]): string[] {
    return this.o.kubeconfig ? ['--kubeconfig', this.o.kubeconfig, ...args] : [...args];
  }

  private env(): NodeJS.ProcessEnv {
    const home = join(this.root, `call-${++this.calls}`);
    return {
      PATH: [dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: home,
      KUBECACHEDIR: join(home, 'cache'),
      ...this.o.env,
    };
  }

  /** Runs one command to completion; rejects when it outlives `timeoutMs` (default 20 s). */
  run(args: readonly string[], o: { timeoutMs?: number } = {}): Promise<KubectlResult> {
    const timeoutMs = o.timeoutMs ?? 20_000;
    return new Promise((resolveResult, reject) => {
      execFile(
        this.binary,
        this.argv(args),
        { env: this.env(), timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) => {
          if (err && (err.killed || typeof err.code !== 'number')) {
            reject(
              new Error(
                `kubectl ${args.join(' ')} did not finish within ${timeoutMs} ms (${err.message})\nstdout: ${stdout}\nstderr: ${stderr}`,
                { cause: err },
              ),
            );
            return;
          }
          resolveResult({ args, code: err ? Number(err.code) : 0, stdout, stderr });
        },
      );
    });
  }

  /** Starts a streaming command (`get pods -w`); stop it with `stop()` or `close()`. */
  watch(args: readonly string[]): KubectlWatch {
    const child = spawn(this.binary, this.argv(args), { env: this.env(), stdio: ['pipe', 'pipe', 'pipe'] });
    const w = new KubectlWatch(args, child);
    this.watches.add(w);
    return w;
  }

  async close(): Promise<void> {
    await Promise.all([...this.watches].map((w) => w.stop()));
    this.watches.clear();
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** A running kubectl whose stdout is read line by line as it arrives. */
export class KubectlWatch {
  readonly lines: string[] = [];
  stderr = '';
  /** Null while running. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private readonly changes = new EventEmitter();
  private partial = '';
  /** Index of the first line `next` has not consumed yet. */
  private cursor = 0;
  private readonly exited: Promise<void>;

  constructor(
    readonly args: readonly string[],
    private readonly child: ChildProcessWithoutNullStreams,
  ) {
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const parts = (this.partial + chunk).split('\n');
      this.partial = parts.pop() ?? '';
      if (parts.length === 0) return;
      this.lines.push(...parts);
      this.changes.emit('change');
    });
    child.stderr.on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolveExit) => {
      child.on('close', (code, signal) => {
        this.exit = { code, signal };
        this.changes.emit('change');
        resolveExit();
      });
    });
  }

  /**
   * Resolves with the first line after the previously matched one that satisfies `predicate`;
   * rejects when the deadline passes or kubectl exits first, showing what it printed.
   */
  next(predicate: (line: string) => boolean, what: string, timeoutMs = 15_000): Promise<string> {
    return new Promise((resolveLine, reject) => {
      const check = (): void => {
        for (let i = this.cursor; i < this.lines.length; i++) {
          const line = this.lines[i]!;
          if (!predicate(line)) continue;
          this.cursor = i + 1;
          done();
          resolveLine(line);
          return;
        }
        if (this.exit) {
          done();
          reject(
            new Error(
              `kubectl ${this.args.join(' ')} exited (${this.describeExit()}) before ${what}${this.transcript()}`,
            ),
          );
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}${this.transcript()}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.changes.off('change', check);
      };
      this.changes.on('change', check);
      check();
    });
  }

  private describeExit(): string {
    return this.exit?.signal ? `signal ${this.exit.signal}` : `code ${String(this.exit?.code)}`;
  }

  private transcript(): string {
    return `\nkubectl ${this.args.join(' ')} printed:\n${this.lines.join('\n')}\nstderr: ${this.stderr}`;
  }

  async stop(): Promise<void> {
    if (!this.exit) this.child.kill('SIGTERM');
    await this.exited;
  }
}

// --- reading what kubectl prints --------------------------------------------------------------

export interface Table {
  /** Column headers as printed (`NOMINATED NODE` is one header). */
  header: string[];
  rows: Record<string, string>[];
}

/**
 * Parses one kubectl table. Columns start where their header starts (kubectl's tabwriter pads
 * every cell to the column width, so a cell may hold single spaces: `1 (5s ago)`, `NOMINATED NODE`).
 */
export function parseTable(text: string): Table {
  const lines = text.split('\n').filter((l) => l.trim() !== '' && !/^\s*-+(\s+-+)*\s*$/.test(l));
  const [headerLine, ...rowLines] = lines;
  if (headerLine === undefined) return { header: [], rows: [] };
  const starts: number[] = [];
  const header: string[] = [];
  for (const m of headerLine.matchAll(/\S+(?: \S+)*/g)) {
    starts.push(m.index);
    header.push(m[0]);
  }
  const rows = rowLines.map((line) =>
    Object.fromEntries(
      header.map((h, i) => [
        h,
        line.slice(starts[i], i + 1 < starts.length ? starts[i + 1] : undefined).trim(),
      ]),
    ),
  );
  return { header, rows };
}

/** `kubectl get` of several kinds (`get all`) prints one table per kind, separated by a blank line. */
export function parseTables(text: string): Table[] {
  return text
    .split(/\n\s*\n/)
    .filter((block) => block.trim() !== '')
    .map(parseTable);
}

/** The cells of one line of `get -w` (each watch event is flushed on its own, so widths differ per line). */
export function watchCells(line: string): string[] {
  return line.trim().split(/\s{3,}/);
}

/**
 * The lines of one top-level `describe` section (`Capacity:`, `Events:`), without their indent:
 * from the line after the title to the next line that is not indented.
 */
export function describeSection(text: string, title: string): string[] | null {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`${title}:`));
  if (start < 0) return null;
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line !== '' && !/^\s/.test(line)) break;
    out.push(line.replace(/^ {2}/, ''));
  }
  return out;
}

/** What follows `title:` on its own line (`Lease:\tFailed to get lease: …`, `Events:\t<none>`). */
export function describeLine(text: string, title: string): string | null {
  const line = text.split('\n').find((l) => l.startsWith(`${title}:`));
  return line === undefined ? null : line.slice(title.length + 1).trim();
}

/** `key: value` lines of a describe section (`cpu:  8`) as a map. */
export function describeValues(lines: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    lines
      .map((l) => /^(\S[^:]*):\s+(.*)$/.exec(l.trim()))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1]!, m[2]!.trim()]),
  );
}

/** kubectl's ages and intervals (duration.HumanDuration): `5s`, `2m5s`, `10m`, `3h4m`, `2d`. */
export const AGE = /^\d+(ms|s|m|h|d|y)(\d+(s|m|h|d))?$/;
