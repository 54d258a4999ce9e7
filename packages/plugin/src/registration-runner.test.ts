import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { pino } from 'pino';
import { deviceplugin } from '@plugboard/proto';
import { RegistrationRunner, type RegistrationEvents } from './registration-runner.js';
import { SocketServers } from './socket-server.js';

/** The next `event` of the runner, typed. */
function next<K extends keyof RegistrationEvents>(
  r: RegistrationRunner,
  event: K,
): Promise<RegistrationEvents[K]> {
  return once(r, event) as Promise<RegistrationEvents[K]>;
}

// The runner alone, in kubelet mode: a Registration server stands in for the kubelet (it never
// dials back) and the test plays the ListAndWatch streams through onStreamOpened / onStreamClosed.
describe('RegistrationRunner', () => {
  let dir: string;
  let kubelet: Server | null = null;
  let runner: RegistrationRunner | null = null;
  const requests: deviceplugin.RegisterRequest[] = [];
  let openStreams = 0;

  afterEach(async () => {
    runner?.halt();
    await runner?.settle();
    runner = null;
    kubelet?.forceShutdown();
    kubelet = null;
    requests.length = 0;
    openStreams = 0;
    await rm(dir, { recursive: true, force: true });
  });

  async function serveKubelet(): Promise<void> {
    const server = new Server();
    server.addService(deviceplugin.RegistrationService, {
      register: (call, callback) => {
        requests.push(call.request);
        callback(null, {});
      },
    } satisfies deviceplugin.RegistrationServer);
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix://${join(dir, 'kubelet.sock')}`, ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    kubelet = server;
  }

  async function newRunner(retryMs: number, streamOpenGraceMs: number): Promise<RegistrationRunner> {
    dir = await mkdtemp(join(tmpdir(), 'pb-runner-'));
    const kubeletSocket = join(dir, 'kubelet.sock');
    const sockets = new SocketServers({
      sockets: [],
      kubeletSocket,
      pollIntervalMs: 1000,
      onSignal: (signal) => runner?.onRestartSignal(signal),
    });
    runner = new RegistrationRunner({
      resourceName: 'example.com/gpu',
      socketPath: join(dir, 'example.com-gpu.sock'),
      kubeletSocket,
      mode: 'kubelet',
      pluginOptions: { preStartRequired: false, getPreferredAllocationAvailable: true },
      sockets,
      openStreams: () => openStreams,
      registrationRetry: { initialMs: retryMs, maxMs: retryMs },
      streamOpenGraceMs,
      logger: pino({ level: 'silent' }),
    });
    return runner;
  }

  it(
    'registers; no stream within the grace is not held and registers again; a closed stream lets go',
    { timeout: 10_000 },
    async () => {
      const r = await newRunner(20, 200);
      await serveKubelet();
      r.start();
      await next(r, 'registered');
      assert.equal(r.state().phase, 'registered');
      assert.equal(requests[0]?.endpoint, 'example.com-gpu.sock');
      assert.equal(requests[0]?.resourceName, 'example.com/gpu');

      const [notHeld] = await next(r, 'waiting-for-kubelet');
      assert.equal(notHeld.cause, 'no-stream');
      await next(r, 'registered');
      assert.equal(requests.length, 2);

      // The stream of the registration in force opens: the grace timer is off.
      openStreams = 1;
      r.onStreamOpened(r.generation);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(r.state().phase, 'registered');
      assert.equal(requests.length, 2);

      openStreams = 0;
      const closed = next(r, 'waiting-for-kubelet');
      r.onStreamClosed(r.generation, 0, 5);
      assert.equal((await closed)[0].cause, 'stream-closed');
      assert.equal(r.state().phase, 'waiting-for-kubelet');

      r.halt();
      await r.settle();
      r.stopped();
      assert.equal(r.state().phase, 'stopped');
    },
  );

  it(
    'waits for kubelet.sock with the error recorded; its appearance cuts the backoff short',
    { timeout: 10_000 },
    async () => {
      const r = await newRunner(5000, 10_000);
      r.start();
      const [failed] = await next(r, 'registration-error');
      assert.match(failed.error, /kubelet socket .* not found/);
      assert.equal(r.state().phase, 'registering');

      await serveKubelet();
      const started = Date.now();
      r.onRestartSignal('kubelet-sock-appeared');
      await next(r, 'registered');
      assert.ok(Date.now() - started < 2000, 'registered without waiting out the 5 s backoff');
      assert.equal(r.state().error, null);
    },
  );
});
