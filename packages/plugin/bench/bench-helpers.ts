// Helpers shared by the plugin and DRA benchmarks: latency statistics, a fixed-concurrency load
// generator, an A/B comparison that interleaves both calls worker by worker, background-thread CPU
// from /proc, and the baseline: a bare @grpc/grpc-js echo service on a Unix socket.
import { readdirSync, readFileSync } from 'node:fs';
import {
  credentials,
  makeGenericClientConstructor,
  Server,
  ServerCredentials,
  type Client,
  type ServiceError,
} from '@grpc/grpc-js';

/** Each load phase is capped at this many seconds: a loaded machine gets fewer samples. */
export const MAX_SECONDS_PER_RUN = 3;

export interface Stats {
  p50: number;
  p99: number;
  max: number;
  perSecond: number;
  n: number;
}

export function stats(samples: number[], elapsedMs: number): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return {
    p50: at(0.5),
    p99: at(0.99),
    max: sorted.at(-1)!,
    perSecond: (samples.length / elapsedMs) * 1000,
    n: samples.length,
  };
}

/**
 * CPU time of this process's threads other than the main one (V8 compiler and GC helpers, libuv
 * pool), from /proc; null where /proc is not available.
 */
export function threadCpuMs(): { others: number } | null {
  try {
    let others = 0;
    for (const tid of readdirSync('/proc/self/task')) {
      if (tid === String(process.pid)) continue;
      try {
        others += Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
      } catch {
        // The thread exited between readdir and read.
      }
    }
    return { others };
  } catch {
    return null;
  }
}

/**
 * Runs `call` with `inFlight` concurrent callers until `total` calls (or the time cap, `maxSeconds`)
 * are done.
 */
export async function load(
  call: (worker: number) => Promise<void>,
  inFlight: number,
  total: number,
  samples: number[],
  maxSeconds = MAX_SECONDS_PER_RUN,
): Promise<number> {
  const deadline = performance.now() + maxSeconds * 1000;
  const started = performance.now();
  let issued = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async (_, worker) => {
      while (issued < total && performance.now() < deadline) {
        issued++;
        const t = performance.now();
        await call(worker);
        samples.push(performance.now() - t);
      }
    }),
  );
  return performance.now() - started;
}

/**
 * Latency: every worker alternates one call of `a` and one of `b`, so both see the same background
 * load call by call. Throughput: `a` and `b` in alternating rounds of `total / rounds` calls each.
 */
export async function compare(
  a: (worker: number) => Promise<void>,
  b: (worker: number) => Promise<void>,
  inFlight: number,
  total: number,
  rounds = 10,
): Promise<[Stats, Stats]> {
  for (let i = 0; i < 300; i++) {
    await a(i % inFlight); // warm-up (JIT, HTTP/2 windows)
    await b(i % inFlight);
  }
  const latency: [number[], number[]] = [[], []];
  const deadline = performance.now() + MAX_SECONDS_PER_RUN * 1000;
  let issued = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async (_, worker) => {
      while (issued < total && performance.now() < deadline) {
        issued++;
        let t = performance.now();
        await a(worker);
        latency[0].push(performance.now() - t);
        t = performance.now();
        await b(worker);
        latency[1].push(performance.now() - t);
      }
    }),
  );
  const counted: [number[], number[]] = [[], []];
  const elapsed = [0, 0];
  for (let r = 0; r < rounds; r++) {
    elapsed[0]! += await load(a, inFlight, total / rounds, counted[0]);
    elapsed[1]! += await load(b, inFlight, total / rounds, counted[1]);
  }
  const withThroughput = (i: 0 | 1): Stats => ({
    ...stats(latency[i], 1),
    perSecond: (counted[i].length / elapsed[i]!) * 1000,
    n: latency[i].length,
  });
  return [withThroughput(0), withThroughput(1)];
}

// A bare echo service: bytes in, the same bytes out, no protobuf work at all.
const echoService = {
  echo: {
    path: '/bench.Echo/Echo',
    requestStream: false,
    responseStream: false,
    requestSerialize: (b: Buffer) => b,
    requestDeserialize: (b: Buffer) => b,
    responseSerialize: (b: Buffer) => b,
    responseDeserialize: (b: Buffer) => b,
  },
} as const;
type EchoClient = Client & {
  echo: (req: Buffer, cb: (err: ServiceError | null, res: Buffer) => void) => void;
};

export interface Echo {
  /** One echo call: the payload out and back, no protobuf work at all. */
  call(payload: Buffer): Promise<void>;
  close(): void;
}

/** Starts the baseline echo server on `socketPath` and returns a client for it. */
export async function startEcho(socketPath: string): Promise<Echo> {
  const server = new Server();
  server.addService(echoService, {
    echo: (call: { request: Buffer }, cb: (e: null, r: Buffer) => void) => cb(null, call.request),
  });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socketPath}`, ServerCredentials.createInsecure(), (e) =>
      e ? reject(e) : resolve(),
    ),
  );
  const Ctor = makeGenericClientConstructor(echoService, 'bench.Echo');
  const client = new Ctor(`unix://${socketPath}`, credentials.createInsecure()) as unknown as EchoClient;
  return {
    call: (payload) =>
      new Promise((resolve, reject) => client.echo(payload, (e) => (e ? reject(e) : resolve()))),
    close: () => {
      client.close();
      server.forceShutdown();
    },
  };
}
