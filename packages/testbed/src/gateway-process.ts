// The node gateway as a process of its own, for a test: the `plugboard-gateway` binary (the bin of
// apps/node-gateway, found in the repo's node_modules/.bin or on PATH — a package never imports the
// app) started on a config document written to a YAML file, with a client for what a test asks of
// it: the snapshot, waiting for a condition on the live stream, faults, and a clean stop.
import { spawn, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  createWriteStream,
  existsSync,
  mkdtempSync,
  openSync,
  readSync,
  writeFileSync,
} from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { gatewayClient, type GatewayClient } from './gateway-client.js';
import { mergeSection, type GatewayDocument } from './gateway-document.js';
import type { TestNode } from './test-node.js';

export const GATEWAY_BIN = 'plugboard-gateway';

/**
 * The gateway binary: the nearest `node_modules/.bin/plugboard-gateway` above this module (the
 * repo's workspace link), else the first on PATH.
 */
export function findGatewayBin(env: NodeJS.ProcessEnv = process.env): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ;) {
    const candidate = join(dir, 'node_modules', '.bin', GATEWAY_BIN);
    if (existsSync(candidate)) return candidate;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const candidate = join(dir, GATEWAY_BIN);
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(
    `${GATEWAY_BIN} not found in node_modules/.bin or on PATH: run \`npm install\` at the repo root`,
  );
}

export interface GatewayProcessOptions {
  /** Bearer token for mutations: written to a file the document's `auth.tokenFile` names, and sent. */
  token?: string;
  /** Where the config, token and log go; default a fresh `<node.dir>/gateway-XXXXXX`. */
  dir?: string;
  /** Extra environment (the test's PLUGBOARD_* variables are never inherited: they would override the file). */
  env?: Record<string, string>;
  /** The binary; default findGatewayBin(). */
  bin?: string;
  /** How long the gateway may take to log its URL (it compiles its TypeScript when not built). */
  startTimeoutMs?: number;
  /**
   * Run with these flags and no `--config` (the document is then not written): an observer gateway
   * started from its command line alone.
   */
  flagsOnly?: readonly string[];
}

export interface GatewayProcess extends GatewayClient {
  /** http://127.0.0.1:PORT, from the gateway's "gateway listening" log line. */
  url: string;
  pid: number;
  dir: string;
  configFile: string;
  /** The JSON log lines (and stderr) of the process, all of them. */
  logFile: string;
  /** The last lines of the process's output. */
  logTail(lines?: number): string;
  /** SIGTERM, then waits for the exit; throws (with the log tail) unless it exits 0. */
  stop(): Promise<void>;
}

const TAIL_LINES = 60;

/** The process's environment: the test's, without what would configure the gateway behind our back. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  // A copy of process.env, not a fresh object: its type stays ProcessEnv also where it is augmented
  // with required keys (Next's types require NODE_ENV; the web app's tests use the test bed).
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (key.startsWith('PLUGBOARD_') || key === 'NODE_TEST_CONTEXT' || key === 'KUBERNETES_SERVICE_HOST')
      delete env[key];
  }
  return { ...env, ...extra };
}

/** Whether `bin` is a Node script (then it runs on this Node, whatever PATH's `node` is). */
function isNodeScript(bin: string): boolean {
  if (bin.endsWith('.js') || bin.endsWith('.mjs')) return true;
  const buf = Buffer.alloc(64);
  const fd = openSync(bin, 'r');
  try {
    const n = readSync(fd, buf, 0, buf.length, 0);
    return /^#!.*\bnode\b/.test(buf.subarray(0, n).toString('utf8').split('\n')[0] ?? '');
  } finally {
    closeSync(fd);
  }
}

/** Starts `plugboard-gateway --config <dir>/config.yaml` for `node`; resolves once it listens. */
export async function gatewayProcess(
  node: TestNode,
  document: GatewayDocument,
  options: GatewayProcessOptions = {},
): Promise<GatewayProcess> {
  const dir = options.dir ?? mkdtempSync(join(node.dir, 'gateway-'));
  const token = options.token ?? null;
  let doc = document;
  if (token !== null) {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    const auth = doc.gateway.auth as { tokenFile?: unknown } | undefined;
    if (!auth?.tokenFile) doc = { ...doc, gateway: mergeSection(doc.gateway, { auth: { tokenFile } }) };
  }
  const configFile = join(dir, 'config.yaml');
  if (!options.flagsOnly) writeFileSync(configFile, stringify(doc));
  const logFile = join(dir, 'gateway.log');

  const bin = options.bin ?? findGatewayBin();
  const args = options.flagsOnly ? [...options.flagsOnly] : ['--config', configFile];
  const child: ChildProcess = isNodeScript(bin)
    ? spawn(process.execPath, [bin, ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: childEnv(options.env ?? {}),
      })
    : spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv(options.env ?? {}) });
  // A test process that dies without stopping its gateways must not leave them running.
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const log = createWriteStream(logFile);
  const tail: string[] = [];
  const remember = (line: string): void => {
    tail.push(line);
    if (tail.length > TAIL_LINES) tail.shift();
    log.write(`${line}\n`);
  };
  const logTail = (lines = TAIL_LINES): string => tail.slice(-lines).join('\n');
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      process.off('exit', killOnExit);
      resolve({ code, signal });
    }),
  );
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  void exited.then((e) => (exit = e));

  const listening = new Promise<string>((resolve, reject) => {
    const timeoutMs = options.startTimeoutMs ?? 60_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${node.name}: the gateway did not listen within ${timeoutMs} ms:\n${logTail()}`));
    }, timeoutMs);
    createInterface({ input: child.stderr! }).on('line', remember);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      remember(line);
      let entry: { msg?: unknown; url?: unknown };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        return;
      }
      if (entry.msg === 'gateway listening' && typeof entry.url === 'string') {
        clearTimeout(timer);
        resolve(entry.url);
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(
        new Error(
          `${node.name}: the gateway exited (${signal ?? `code ${code}`}) before listening:\n${logTail()}`,
        ),
      );
    });
  });

  let url: string;
  try {
    url = await listening;
  } catch (err) {
    log.end();
    throw err;
  }

  const died = (): string =>
    exit ? ` (the gateway exited: ${exit.signal ?? `code ${exit.code}`}):\n${logTail()}` : '';

  return {
    pid: child.pid!,
    dir,
    configFile,
    logFile,
    ...gatewayClient(url, { token, name: node.name, whyClosed: died }),
    logTail,
    stop: async () => {
      if (!exit) {
        child.kill('SIGTERM');
        // The gateway gives itself 5 s to stop; past 15 s it is stuck.
        const stuck = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(stuck);
      }
      await new Promise<void>((resolve) => log.end(resolve));
      const { code, signal } = exit ?? (await exited);
      if (code !== 0)
        throw new Error(`${node.name}: the gateway exited ${signal ?? `with code ${code}`}:\n${logTail()}`);
    },
  };
}
