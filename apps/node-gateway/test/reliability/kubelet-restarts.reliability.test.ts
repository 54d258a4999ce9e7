// N kubelet restarts in a row (kubelet-sim deletes every socket in the device-plugin directory each
// time, like CleanupPluginDirectory): the gateway's plugins register again every time, exactly once
// per resource, without leaking file descriptors or listening sockets, and device health and active
// faults are the same after the last restart as before the first. N = 20 (short) or 100 (full).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { report, sized } from './figures.js';
import {
  api,
  bearer,
  fdCount,
  GPU,
  JSON_TYPE,
  listeningUnixSockets,
  NIC,
  snapshotOf,
  socketFiles,
  startRig,
  waitFor,
} from './harness.js';
import type { NodeSnapshot } from '@plugboard/api';

const RESTARTS = sized(20, 100);

/** Unix sockets by inode: `listening <path>`, or `<path>` for a connection accepted there. */
function unixSockets(): Map<string, string> {
  const byInode = new Map<string, string>();
  for (const line of readFileSync('/proc/net/unix', 'utf8').split('\n').slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path; Flags 00010000 = listening.
    const cols = line.trim().split(/\s+/);
    if (cols.length < 7) continue;
    const path = cols[7]?.split('/').slice(-2).join('/') ?? '';
    byInode.set(cols[6]!, cols[3] === '00010000' ? `listening ${path}` : path || 'unix');
  }
  return byInode;
}

/**
 * What the open fds are (file, pipe, anon_inode, tcp, Unix sockets by path — a connection leaking
 * into a kubelet socket shows as its path), for a failure message.
 */
function fdKinds(): string {
  const unix = unixSockets();
  const kinds = new Map<string, number>();
  for (const fd of readdirSync('/proc/self/fd')) {
    let target = '?';
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`)
        .replace(/^socket:\[(\d+)\]$/, (_, inode: string) => unix.get(inode) ?? 'tcp')
        .replace(/:\[\d+\]$/, '')
        .replace(/^\/.*/, 'file');
    } catch {
      // closed meanwhile
    }
    kinds.set(target, (kinds.get(target) ?? 0) + 1);
  }
  return [...kinds].map(([k, n]) => `${k} ${n}`).join(', ');
}

const healthOf = (s: NodeSnapshot) =>
  Object.fromEntries(
    Object.values(s.devices).map((d) => [d.key, `${d.health}${d.faulted ? '+faulted' : ''}`]),
  );
const faultsOf = (s: NodeSnapshot) =>
  Object.values(s.faults)
    .map((f) => `${f.id} ${f.resource}/${f.deviceId} ${f.expiresAt ?? 'forever'}`)
    .sort();

test(`${RESTARTS} kubelet restarts in a row: ${RESTARTS} re-registrations, no duplicate servers, no leaked fds or sockets, state identical`, async (t) => {
  const rig = await startRig();
  t.after(() => rig.stop());
  const { sim, gw } = rig;
  for (const [resource, deviceId, ttlSeconds] of [
    [GPU, 'gpu-3', 3600],
    [NIC, 'nic-7', null],
  ] as const) {
    const r = await api(gw.url, '/api/v1/faults', {
      method: 'POST',
      headers: { ...bearer(), ...JSON_TYPE },
      body: JSON.stringify({ resource, deviceId, reason: 'held across restarts', ttlSeconds }),
    });
    assert.equal(r.status, 201, r.text);
  }
  const kubeletAgrees = () =>
    sim.state().resources[GPU]?.allocatable === 7 && sim.state().resources[NIC]?.allocatable === 31;
  await waitFor('faults reach the kubelet', kubeletAgrees);

  let registrations = 0;
  sim.on('registered', () => registrations++);
  const restartsSeen = async () => {
    const s = await snapshotOf(gw);
    return [GPU, NIC].map((r) => s.resources[r]!.registration.kubeletRestartsSeen);
  };
  const restartOnce = async (): Promise<void> => {
    const before = await restartsSeen();
    const registeredBefore = registrations;
    await sim.restart();
    await waitFor(
      'both plugins registered again and the gateway noticed',
      async () => {
        if (registrations - registeredBefore < 2 || !kubeletAgrees()) return false;
        const s = await snapshotOf(gw);
        return [GPU, NIC].every(
          (r, i) =>
            s.resources[r]!.registration.phase === 'registered' &&
            s.resources[r]!.registration.kubeletRestartsSeen > before[i]!,
        );
      },
      15_000,
    );
  };

  // One restart first: lazily created things (gRPC channels, watchers) exist from then on.
  await restartOnce();
  const before = await snapshotOf(gw);
  const fdsBefore = fdCount();
  const kindsBefore = fdKinds();
  const listeningBefore = listeningUnixSockets(rig.dir);
  const filesBefore = socketFiles(sim.devicePluginDir);
  registrations = 0;
  const started = performance.now();
  const times: number[] = [];
  for (let i = 0; i < RESTARTS; i++) {
    const t0 = performance.now();
    await restartOnce();
    times.push(performance.now() - t0);
  }
  const elapsed = performance.now() - started;
  // Let closed handles finish closing before counting.
  const after = await waitFor(
    `fds back to ${fdsBefore} + 2 (before: ${kindsBefore}; after the restarts ${fdCount()}: ${fdKinds()})`,
    async () => {
      const s = await snapshotOf(gw);
      return fdCount() <= fdsBefore + 2 ? s : null;
    },
    30_000,
  );
  const fdsAfter = fdCount();

  assert.equal(registrations, 2 * RESTARTS, 'exactly one registration per resource per restart');
  assert.deepEqual(
    listeningUnixSockets(rig.dir),
    listeningBefore,
    'one listening server per socket, none leaked',
  );
  assert.equal(new Set(listeningBefore).size, listeningBefore.length, 'no socket path served twice');
  assert.deepEqual(socketFiles(sim.devicePluginDir), filesBefore);
  assert.deepEqual(filesBefore, ['kubelet.sock', 'plugboard.example-gpu.sock', 'plugboard.example-nic.sock']);
  assert.deepEqual(healthOf(after), healthOf(before), 'device health identical');
  assert.deepEqual(faultsOf(after), faultsOf(before), 'active faults identical');
  assert.equal(Object.keys(after.faults).length, 2);
  for (const r of [GPU, NIC]) {
    const state = sim.state().resources[r]!;
    assert.equal(state.registered, true);
    assert.equal(
      after.resources[r]!.registration.kubeletRestartsSeen -
        before.resources[r]!.registration.kubeletRestartsSeen,
      RESTARTS,
    );
  }
  assert.ok(fdsAfter - fdsBefore <= 2, `fds before ${fdsBefore}, after ${fdsAfter}`);
  assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);

  times.sort((a, b) => a - b);
  report(t, { scenario: 'kubelet-restarts', figure: 'restarts survived', value: RESTARTS });
  report(t, {
    scenario: 'kubelet-restarts',
    figure: 're-registrations',
    value: registrations,
    bound: `= 2 × ${RESTARTS}`,
  });
  report(t, {
    scenario: 'kubelet-restarts',
    figure: 'fd growth',
    value: fdsAfter - fdsBefore,
    unit: 'fds',
    bound: '≤ 2',
  });
  report(t, {
    scenario: 'kubelet-restarts',
    figure: 'restart → re-registered (median / max)',
    value: `${times[Math.floor(times.length / 2)]!.toFixed(0)} / ${times.at(-1)!.toFixed(0)}`,
    unit: 'ms',
  });
  report(t, {
    scenario: 'kubelet-restarts',
    figure: 'total time',
    value: (elapsed / 1000).toFixed(1),
    unit: 's',
  });
});
