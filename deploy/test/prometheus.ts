// Test harness for a real Prometheus (Debian's `prometheus` and `promtool`, installed by .ci/run):
// start one on a free loopback port with a temporary config and storage, ask its HTTP API, reload
// it, stop it; run promtool; parse the text exposition format; wait on conditions with a deadline.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { waitFor } from '@plugboard/testbed/wait';

/** The path of a binary on PATH; throws saying how to install it when it is missing. */
export function requireBinary(name: 'prometheus' | 'promtool'): string {
  const res = spawnSync(name, ['--version'], { encoding: 'utf8' });
  if (res.error || res.status !== 0) {
    throw new Error(
      `${name} is not installed or does not run (${res.error?.message ?? res.stderr.trim()}): ` +
        `install Debian's prometheus package (apt-get install -y prometheus; .ci/run does it)`,
    );
  }
  return name;
}

/** `promtool <args>` with `input` on stdin; throws with promtool's output when it fails. */
export function promtool(args: string[], input?: string): string {
  const res = spawnSync(requireBinary('promtool'), args, { encoding: 'utf8', input });
  if (res.error) throw res.error;
  const output = `${res.stdout}${res.stderr}`.trim();
  if (res.status !== 0) throw new Error(`promtool ${args.join(' ')} failed (${res.status}):\n${output}`);
  return output;
}

/** Polls until a condition holds (the test bed's waitFor: deadline, last value or error in the failure). */
export const until = waitFor;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return address.port;
}

export type Labels = Record<string, string>;
export interface Sample {
  metric: Labels;
  value: number;
}
export interface Alert {
  labels: Labels;
  annotations: Labels;
  state: 'pending' | 'firing';
  activeAt: string;
  value: string;
}
export interface Target {
  labels: Labels;
  health: 'up' | 'down' | 'unknown';
  lastScrape: string;
  lastError: string;
  scrapeUrl: string;
}

export interface Prometheus {
  url: string;
  /** An instant query; a scalar result is one sample without labels. */
  query(expr: string, time?: number): Promise<Sample[]>;
  labelValues(label: string, match: string): Promise<string[]>;
  alerts(): Promise<Alert[]>;
  targets(): Promise<Target[]>;
  /** Re-reads the config and rule files (`POST /-/reload`). */
  reload(): Promise<void>;
  stop(): Promise<void>;
}

interface ApiAnswer<T> {
  status: 'success' | 'error';
  data: T;
  error?: string;
}

export interface PrometheusOptions {
  /** Working directory: prometheus.yml and the TSDB go here. */
  dir: string;
  /** prometheus.yml as an object (written as JSON, which is YAML). */
  config: Record<string, unknown>;
}

/**
 * Starts Prometheus on a free loopback port and resolves once it logs that it serves web requests.
 * A port taken between picking and binding is retried with another.
 */
export async function startPrometheus(options: PrometheusOptions): Promise<Prometheus> {
  const binary = requireBinary('prometheus');
  const configFile = join(options.dir, 'prometheus.yml');
  writeFileSync(configFile, JSON.stringify(options.config, null, 2));
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn(
      binary,
      [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${join(options.dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--web.enable-lifecycle',
        '--log.level=info',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let log = '';
    const ready = new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        log += chunk.toString('utf8');
        if (log.includes('Server is ready to receive web requests.')) resolve();
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('error', reject);
      child.once('exit', (code, signal) =>
        reject(new Error(`prometheus exited (${code ?? signal}) before it was ready:\n${log.slice(-4000)}`)),
      );
    });
    const timeout = delay(30_000).then(() => {
      throw new Error(`prometheus not ready after 30 s:\n${log.slice(-4000)}`);
    });
    try {
      await Promise.race([ready, timeout]);
    } catch (err) {
      await stopChild(child);
      if (attempt < 3 && log.includes('address already in use')) continue;
      throw err;
    }
    return client(`http://127.0.0.1:${port}`, child, () => log);
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const killed = await Promise.race([exited.then(() => true), delay(10_000).then(() => false)]);
  if (!killed) {
    child.kill('SIGKILL');
    await exited;
  }
}

function client(url: string, child: ChildProcess, log: () => string): Prometheus {
  const api = async <T>(path: string, params: Record<string, string> = {}): Promise<T> => {
    const res = await fetch(`${url}${path}?${new URLSearchParams(params).toString()}`);
    const body = (await res.json()) as ApiAnswer<T>;
    if (body.status !== 'success') throw new Error(`${path} ${JSON.stringify(params)}: ${body.error}`);
    return body.data;
  };
  const at = (time?: number): Record<string, string> => (time === undefined ? {} : { time: String(time) });
  return {
    url,
    async query(expr, time) {
      const data = await api<{ resultType: string; result: unknown }>('/api/v1/query', {
        query: expr,
        ...at(time),
      });
      if (data.resultType === 'scalar') {
        return [{ metric: {}, value: Number((data.result as [number, string])[1]) }];
      }
      if (data.resultType !== 'vector') throw new Error(`${expr}: a ${data.resultType}, not a vector`);
      return (data.result as { metric: Labels; value: [number, string] }[]).map((s) => ({
        metric: s.metric,
        value: Number(s.value[1]),
      }));
    },
    labelValues: (label, match) => api<string[]>(`/api/v1/label/${label}/values`, { 'match[]': match }),
    alerts: async () => (await api<{ alerts: Alert[] }>('/api/v1/alerts')).alerts,
    targets: async () => (await api<{ activeTargets: Target[] }>('/api/v1/targets')).activeTargets,
    async reload() {
      const res = await fetch(`${url}/-/reload`, { method: 'POST' });
      if (res.status !== 200)
        throw new Error(`reload: ${res.status} ${await res.text()}\n${log().slice(-2000)}`);
    },
    stop: () => stopChild(child),
  };
}

/** Samples of the Prometheus text exposition format (what a gateway's /metrics answers). */
export function parseExposition(text: string): (Sample & { name: string })[] {
  const samples: (Sample & { name: string })[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const metric: Labels = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      metric[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: m[1]!, metric, value: Number(m[3]) });
  }
  return samples;
}
