import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, ServerCredentials, status } from '@grpc/grpc-js';
import { podresources } from '@plugboard/proto';
import { PodResourcesPoller } from './pod-resources.js';
import type { PodResourcesInput } from '../model/build.js';
import type { SourceState } from '@plugboard/api';
import { waitFor } from '../../test/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'pb-prp-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A tiny PodResources server (not kubelet-sim): answers from mutable state, counts calls. */
async function serve(
  socket: string,
  state: { pods: podresources.PodResources[]; ids: string[]; fail?: boolean; calls: number },
) {
  const server = new Server();
  server.addService(podresources.PodResourcesListerService, {
    list: (_call, cb) => {
      state.calls++;
      if (state.fail) return cb({ code: status.RESOURCE_EXHAUSTED, details: 'rejected by rate limit' }, null);
      cb(null, { podResources: state.pods });
    },
    getAllocatableResources: (_call, cb) =>
      cb(null, {
        devices: [{ resourceName: 'r/gpu', deviceIds: state.ids, topology: undefined }],
        cpuIds: [],
        memory: [],
      }),
    get: (_call, cb) => cb({ code: status.UNIMPLEMENTED }, null),
  } satisfies podresources.PodResourcesListerServer);
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  return server;
}

const pod = (name: string, ids: string[]): podresources.PodResources => ({
  name,
  namespace: 'ns',
  cpuIds: [],
  memory: [],
  containers: [
    {
      name: 'c',
      devices: [{ resourceName: 'r/gpu', deviceIds: ids, topology: undefined }],
      cpuIds: [],
      memory: [],
      dynamicResources: [],
    },
  ],
});

test('polls, reports only changes, keeps unchanged pods as the same objects, goes stale and recovers by path', async () => {
  const socket = join(dir, 'kubelet.sock');
  const data: PodResourcesInput[] = [];
  const states: SourceState[] = [];
  const errors: string[] = [];
  const poller = new PodResourcesPoller({
    socket,
    intervalMs: 50,
    timeoutMs: 500,
    maxBackoffMs: 100,
    onData: (d) => data.push(d),
    onState: (s) => states.push(s),
    onError: (method, code) => errors.push(`${method} ${code}`),
  });
  after(() => poller.stop());
  poller.start();
  // No socket yet: connecting, with the reason.
  await waitFor('missing-socket error', () => errors.some((e) => e === 'stat ENOENT'));
  assert.equal(states.at(-1)!.status, 'connecting');
  assert.match(states.at(-1)!.reason!, /does not exist/);

  const state: { pods: podresources.PodResources[]; ids: string[]; fail?: boolean; calls: number } = {
    pods: [pod('a', ['g0']), pod('b', ['g1'])],
    ids: ['g0', 'g1', 'g2'],
    calls: 0,
  };
  let server = await serve(socket, state);
  await waitFor('first data', () => data.length === 1);
  assert.equal(states.at(-1)!.status, 'ok');
  const calls = state.calls;
  await waitFor('a few more polls', () => state.calls >= calls + 3);
  assert.equal(data.length, 1, 'unchanged polls report nothing');

  state.ids = ['g0', 'g1'];
  await waitFor('allocatable change', () => data.length === 2);
  assert.equal(data[1]!.pods, data[0]!.pods, 'pods unchanged: same array');
  state.pods = [pod('a', ['g0']), pod('b', ['g1', 'g2'])];
  await waitFor('pod change', () => data.length === 3);
  assert.equal(data[2]!.pods[0], data[0]!.pods[0], 'pod a unchanged: same object');
  assert.notEqual(data[2]!.pods[1], data[0]!.pods[1]);

  // The kubelet goes away: stale, last data kept (no new onData), then a new server at the same path.
  await new Promise<void>((r) => server.tryShutdown(() => r()));
  rmSync(socket, { force: true });
  await waitFor('stale', () => states.at(-1)!.status === 'stale');
  const seen = data.length;
  state.fail = true;
  server = await serve(socket, state);
  await waitFor('rate-limit error counted', () => errors.some((e) => e === 'List RESOURCE_EXHAUSTED'));
  assert.equal(states.at(-1)!.status, 'stale');
  state.fail = false;
  await waitFor('recovered', () => states.at(-1)!.status === 'ok');
  assert.equal(data.length, seen, 'same answer after recovery: nothing new to report');
  await poller.stop();
  await new Promise<void>((r) => server.tryShutdown(() => r()));
});

/** Connections the kubelet side has accepted on `socket` and still holds (Linux /proc/net/unix). */
function acceptedConnections(socket: string): number {
  return readFileSync('/proc/net/unix', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((c) => c[7] === socket && c[3] !== '00010000').length;
}

test('a kubelet that died leaving its socket behind, then came back: one connection, none left reconnecting on its own', async () => {
  const socket = join(dir, 'restarts.sock');
  const state = { pods: [pod('a', ['g0'])], ids: ['g0'], calls: 0 };
  const errors: string[] = [];
  let status = '';
  const poller = new PodResourcesPoller({
    socket,
    intervalMs: 20,
    timeoutMs: 500,
    maxBackoffMs: 40,
    onData: () => undefined,
    onState: (s) => (status = s.status),
    onError: (method) => errors.push(method),
  });
  let server = await serve(socket, state);
  poller.start();
  // Also when an assertion fails: a server or poller left running keeps the file from ending.
  after(async () => {
    await poller.stop();
    server.forceShutdown();
  });
  await waitFor('ok', () => status === 'ok');
  // The kubelet dies without removing its socket (the server unlinks it on close: keep the file
  // aside meanwhile): the path is there, nobody listens, calls fail with ECONNREFUSED.
  renameSync(socket, `${socket}.kept`);
  await new Promise<void>((r) => server.tryShutdown(() => r()));
  renameSync(`${socket}.kept`, socket);
  await waitFor('stale', () => status === 'stale');
  const failed = errors.length;
  await waitFor('more failed polls', () => errors.length >= failed + 3);
  // The new kubelet replaces the socket.
  rmSync(socket, { force: true });
  server = await serve(socket, state);
  await waitFor('ok again', () => status === 'ok');
  // A gRPC channel closed while backing off reconnects when its backoff timer fires (grpc-js'
  // default: a second) and keeps that connection, owned by nobody. Nothing signals that it did
  // not happen: watch for 1.5 s of wall time in which the poller went on polling. (Counted in
  // polls alone, 75 polls at 20 ms took over 10 s on a machine with both cores busy.)
  const calls = state.calls;
  const since = performance.now();
  await waitFor(
    '1.5 s of polls',
    () => performance.now() - since >= 1500 && state.calls >= calls + 5,
    30_000,
  );
  assert.equal(acceptedConnections(socket), 1, 'only the poller channel is connected');
  await poller.stop();
  server.forceShutdown();
});
