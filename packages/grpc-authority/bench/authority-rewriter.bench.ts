// Benchmark (not a test): what serving Unix-socket gRPC through bindUnixServer with routeConnection costs, against
// grpc-js bound directly. Unary Register calls over real Unix sockets, from a client in a child
// process, against three servers up at once in this process:
//   before   — grpc-js bound directly (server.bindAsync), the setup before the rewriter;
//   modern   — bindUnixServer, a client sending `:authority: localhost`: routeConnection reads the
//              connection's first request and hands grpc-js the socket itself (native path);
//   raw-path — bindUnixServer, a client sending the socket path (grpc.default_authority), as
//              grpc-go < 1.57 does: the connection stays on the rewriter, every header block
//              decoded and re-encoded.
// The client rotates among them in short phases, so that whatever else loads the machine weighs
// on all three alike. Reports calls/s, latency p50 and the servers' CPU time per call (this
// process's user + system CPU, which waiting for a core does not inflate), over all phases of a
// mode, with 1 and 16 calls in flight on one connection; then a new connection per call (channel
// created, first call, closed: what routing a connection adds); then the rewriter alone on one
// request header block.
// Run: cd packages/grpc-authority && node --conditions=@plugboard/source --import tsx bench/authority-rewriter.bench.ts
// (prints a Markdown table).

import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { credentials, Server, ServerCredentials } from '@grpc/grpc-js';
import { bindUnixServer, closeUnixServer, deviceplugin } from '@plugboard/proto';
import { RequestAuthorityRewriter } from '../src/h2-authority-rewriter.js';
import { routeConnection } from '../src/index.js';
import { F, frame, hpack, PREFACE, T } from '../test/h2-frames.js';

const MODES = ['before', 'modern', 'raw-path'] as const;
type Mode = (typeof MODES)[number];
const CONCURRENCY = [1, 16];
const PHASE_MS = 500;
const ROTATIONS = 8;
/** New connections per mode and rotation in the connection phases. */
const CONNECTIONS = 40;
/** `concurrency` of the connection phases: one call per new connection. */
const NEW_CONNECTION = 0;

interface ClientJob {
  sockets: Record<Mode, string>;
}

type ToParent =
  | { kind: 'phase-start'; mode: Mode; concurrency: number }
  | { kind: 'phase-end'; mode: Mode; concurrency: number; calls: number; ms: number; latencies: number[] }
  | { kind: 'done' };

async function clientProcess(job: ClientJob): Promise<void> {
  const request = {
    version: 'v1beta1',
    endpoint: 'bench.sock',
    resourceName: 'example.com/bench',
    options: undefined,
  };
  const newClient = (mode: Mode): deviceplugin.RegistrationClient =>
    new deviceplugin.RegistrationClient(
      `unix://${job.sockets[mode]}`,
      credentials.createInsecure(),
      // Each channel its own subchannel, so its own connection (grpc-js shares them otherwise).
      {
        ...(mode === 'raw-path' ? { 'grpc.default_authority': job.sockets[mode] } : {}),
        'grpc.use_local_subchannel_pool': 1,
      },
    );
  const clients = Object.fromEntries(MODES.map((mode) => [mode, newClient(mode)])) as Record<
    Mode,
    deviceplugin.RegistrationClient
  >;
  const callOn = (client: deviceplugin.RegistrationClient): Promise<void> =>
    new Promise((resolve, reject) => client.register(request, (err) => (err ? reject(err) : resolve())));
  const call = (mode: Mode): Promise<void> => callOn(clients[mode]);
  const send = (m: ToParent): void => void process.send!(m);
  for (const mode of MODES) for (let i = 0; i < 300; i++) await call(mode);
  for (const concurrency of CONCURRENCY) {
    for (let rotation = 0; rotation < ROTATIONS; rotation++) {
      for (const mode of MODES) {
        send({ kind: 'phase-start', mode, concurrency });
        const latencies: number[] = [];
        const start = performance.now();
        await Promise.all(
          Array.from({ length: concurrency }, async () => {
            while (performance.now() - start < PHASE_MS) {
              const t = performance.now();
              await call(mode);
              latencies.push(performance.now() - t);
            }
          }),
        );
        const ms = performance.now() - start;
        send({ kind: 'phase-end', mode, concurrency, calls: latencies.length, ms, latencies });
      }
    }
  }
  for (let rotation = 0; rotation < ROTATIONS; rotation++) {
    for (const mode of MODES) {
      send({ kind: 'phase-start', mode, concurrency: NEW_CONNECTION });
      const latencies: number[] = [];
      const start = performance.now();
      for (let i = 0; i < CONNECTIONS; i++) {
        const t = performance.now();
        const client = newClient(mode);
        await callOn(client);
        latencies.push(performance.now() - t);
        client.close();
      }
      const ms = performance.now() - start;
      send({ kind: 'phase-end', mode, concurrency: NEW_CONNECTION, calls: latencies.length, ms, latencies });
    }
  }
  for (const c of Object.values(clients)) c.close();
  send({ kind: 'done' });
}

function registrationServer(): Server {
  const server = new Server();
  server.addService(deviceplugin.RegistrationService, {
    register: (_call, callback) => callback(null, {}),
  } satisfies deviceplugin.RegistrationServer);
  return server;
}

/** ns per request header block through RequestAuthorityRewriter.write, alone. */
function rewriterAlone(authority: string): number {
  const rewriter = new RequestAuthorityRewriter();
  rewriter.write(Buffer.concat([PREFACE, frame(T.SETTINGS, 0, 0)]));
  // As grpc-js writes them: the first request indexes its fields, later ones reference them.
  const first = Buffer.concat([
    hpack.indexed(3),
    hpack.indexed(6),
    hpack.incremental(4, '/v1beta1.Registration/Register', true),
    hpack.incremental(1, authority, true),
    hpack.incremental('grpc-accept-encoding', 'identity,deflate,gzip', true),
    hpack.incremental(58, 'grpc-node-js/1.14.7', true),
    hpack.incremental(31, 'application/grpc', true),
    hpack.incremental('te', 'trailers', true),
  ]);
  const later = Buffer.concat([3, 6, 67, 66, 65, 64, 63, 62].map((i) => hpack.indexed(i)));
  rewriter.write(frame(T.HEADERS, F.END_HEADERS, 1, first));
  const n = 200_000;
  const frames = Array.from({ length: 1000 }, () => frame(T.HEADERS, F.END_HEADERS, 0, later));
  let stream = 3;
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const f = frames[i % frames.length]!;
    f.writeUInt32BE(stream, 5);
    stream += 2;
    rewriter.write(f);
  }
  return Number(process.hrtime.bigint() - start) / n;
}

const quantile = (xs: number[], q: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pb-authority-bench-'));
  const sockets = Object.fromEntries(MODES.map((m) => [m, join(dir, `${m}.sock`)])) as Record<Mode, string>;
  const servers = Object.fromEntries(MODES.map((m) => [m, registrationServer()])) as Record<Mode, Server>;
  const loadBefore = loadavg()[0]!;
  try {
    await new Promise<void>((resolve, reject) =>
      servers.before.bindAsync(`unix://${sockets.before}`, ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    await bindUnixServer(servers.modern, sockets.modern, { routeConnection });
    await bindUnixServer(servers['raw-path'], sockets['raw-path'], { routeConnection });

    const totals = new Map<string, { calls: number; ms: number; cpuUs: number; latencies: number[] }>();
    const child = fork(fileURLToPath(import.meta.url), [JSON.stringify({ sockets } satisfies ClientJob)], {
      execArgv: ['--conditions=@plugboard/source', '--import', 'tsx'],
    });
    let cpu = process.cpuUsage();
    await new Promise<void>((resolve, reject) => {
      child.on('message', (m: ToParent) => {
        if (m.kind === 'phase-start') {
          cpu = process.cpuUsage();
        } else if (m.kind === 'phase-end') {
          const used = process.cpuUsage(cpu);
          const key = `${m.mode}|${m.concurrency}`;
          const t = totals.get(key) ?? { calls: 0, ms: 0, cpuUs: 0, latencies: [] };
          t.calls += m.calls;
          t.ms += m.ms;
          t.cpuUs += used.user + used.system;
          for (const l of m.latencies) t.latencies.push(l);
          totals.set(key, t);
        } else {
          resolve();
        }
      });
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`client exited with ${code}`))));
    });

    console.log(
      `# :authority rewriter benchmark — Node ${process.version}, ${ROTATIONS} rotations of ${PHASE_MS} ms phases per mode, ` +
        `load average ${loadBefore.toFixed(2)} at start and ${loadavg()[0]!.toFixed(2)} at the end\n`,
    );
    console.log('| server | client :authority | in flight | calls/s | p50 ms | server CPU µs/call |');
    console.log('| --- | --- | --- | --- | --- | --- |');
    for (const concurrency of [...CONCURRENCY, NEW_CONNECTION]) {
      for (const mode of MODES) {
        const t = totals.get(`${mode}|${concurrency}`)!;
        const server = mode === 'before' ? 'grpc-js bindAsync (before)' : 'bindUnixServer';
        const authority = mode === 'raw-path' ? 'socket path' : 'localhost';
        console.log(
          `| ${server} | ${authority} | ${concurrency === NEW_CONNECTION ? '1, new connection per call' : concurrency} | ` +
            `${((t.calls / t.ms) * 1000).toFixed(0)} | ` +
            `${quantile(t.latencies, 0.5).toFixed(3)} | ${(t.cpuUs / t.calls).toFixed(0)} |`,
        );
      }
    }
    console.log('\nThe rewriter alone, per later request header block (dynamic-table references only):');
    console.log(`- localhost, decoded and passed on: ${rewriterAlone('localhost').toFixed(0)} ns`);
    console.log(
      `- socket path, decoded, rewritten and re-encoded: ${rewriterAlone('/var/lib/kubelet/device-plugins/kubelet.sock').toFixed(0)} ns`,
    );
  } finally {
    for (const mode of MODES) await closeUnixServer(servers[mode], sockets[mode]);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.send) await clientProcess(JSON.parse(process.argv[2]!) as ClientJob);
else await main();
