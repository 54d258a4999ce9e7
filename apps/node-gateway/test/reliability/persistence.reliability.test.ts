// Fault persistence under restarts and broken disks. A gateway restarted with active faults and TTLs
// restores every fault that is still due and clears (and reports) the ones that expired while it was
// down. A state directory that cannot be written (read-only at start, or full later) is reported
// clearly — a log warning and snapshot.gateway.persistence — while faults keep working in memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { report, sized } from './figures.js';
import {
  api,
  bearer,
  capturedLogger,
  GPU,
  JSON_TYPE,
  NIC,
  snapshotOf,
  startRig,
  waitFor,
} from './harness.js';

const FAULTS = sized(10, 40);
const EXPIRING_TTL_S = 3;

async function inject(url: string, resource: string, deviceId: string, ttlSeconds: number | null) {
  const r = await api(url, '/api/v1/faults', {
    method: 'POST',
    headers: { ...bearer(), ...JSON_TYPE },
    body: JSON.stringify({ resource, deviceId, reason: 'persistence drill', ttlSeconds }),
  });
  assert.equal(r.status, 201, r.text);
  return r.body!.id as string;
}

test(`gateway restarted with ${FAULTS} active faults (half with TTLs that run out while it is down): restored, expired cleared, nothing lost`, async (t) => {
  const rig = await startRig({ gateway: { faults: { enabled: true, maxActive: 4096 } } });
  t.after(() => rig.stop());
  const lasting = new Map<string, string>();
  const expiring = new Map<string, string>();
  for (let i = 0; i < FAULTS; i += 2) {
    const device = `nic-${i % 32}`;
    lasting.set(await inject(rig.gw.url, NIC, device, i % 4 === 0 ? null : 3600), device);
  }
  // The short-lived ones last, all at once, so none runs out before the gateway stops.
  const shortLived = Array.from({ length: FAULTS / 2 }, (_, k) => `nic-${(2 * k + 1) % 32}`);
  const ids = await Promise.all(shortLived.map((device) => inject(rig.gw.url, NIC, device, EXPIRING_TTL_S)));
  ids.forEach((id, k) => expiring.set(id, shortLived[k]!));
  const before = await snapshotOf(rig.gw);
  assert.equal(Object.keys(before.faults).length, FAULTS);
  const latestExpiry = Math.max(
    ...[...expiring.keys()].map((id) => Date.parse(before.faults[id]!.expiresAt!)),
  );
  await rig.gw.stop();
  // Wall-clock time must pass for the TTLs to run out while no gateway runs.
  await waitFor('short TTLs to run out', () => Date.now() > latestExpiry + 50, 10_000, 50);

  const { logger, lines } = capturedLogger('info');
  const gw2 = await rig.startGateway({ faults: { enabled: true, maxActive: 4096 } }, logger);
  const after = await waitFor('restored faults applied', async () => {
    const s = await snapshotOf(gw2);
    return s.resources[NIC]?.registration.phase === 'registered' ? s : null;
  });
  assert.deepEqual(
    Object.keys(after.faults).sort(),
    [...lasting.keys()].sort(),
    'exactly the lasting faults are back',
  );
  for (const id of lasting.keys()) {
    assert.equal(after.faults[id]!.expiresAt, before.faults[id]!.expiresAt, 'TTL kept');
    assert.equal(after.faults[id]!.deviceId, before.faults[id]!.deviceId);
  }
  const clearedWhileDown = after.events.filter(
    (e) => e.kind === 'fault-cleared' && /expired-while-down/.test(e.message),
  );
  assert.equal(
    clearedWhileDown.length,
    expiring.size,
    'every expired fault is reported, none silently dropped',
  );
  const lastingDevices = new Set(lasting.values());
  await waitFor(
    'kubelet allocatable reflects the restored faults',
    () => rig.sim.state().resources[NIC]?.allocatable === 32 - lastingDevices.size,
  );
  for (const d of lastingDevices) assert.equal(after.devices[`${NIC}/${d}`]!.faulted, true);
  assert.ok(
    lines.some(
      (l) =>
        /persisted faults restored/.test(l) &&
        l.includes(`"restored":${lasting.size}`) &&
        l.includes(`"expired":${expiring.size}`),
    ),
  );
  report(t, {
    scenario: 'gateway-restart-faults',
    figure: 'faults restored / expired while down',
    value: `${lasting.size} / ${expiring.size}`,
    bound: 'none lost',
  });
});

test('read-only state dir at start, disk full later: a clear warning, persistence off in the snapshot, faults still work in memory', async (t) => {
  // Root ignores permission bits; sysfs refuses writes even to root, so it stands in for a read-only mount.
  const readOnly = existsSync('/sys/kernel') ? '/sys/kernel' : '/proc/self';
  const { logger, lines } = capturedLogger('info');
  const rig = await startRig({ gateway: { stateDir: join(readOnly, 'plugboard') }, logger });
  t.after(() => rig.stop());
  let s = await snapshotOf(rig.gw);
  assert.equal(s.gateway.persistence.enabled, false);
  assert.match(s.gateway.persistence.reason ?? '', /not writable/);
  const warning = lines
    .map((l) => JSON.parse(l) as { level: number; msg: string; reason?: string })
    .find((l) => /persistence is off/.test(l.msg));
  assert.ok(
    warning && warning.level === 40 && /not writable/.test(warning.reason ?? ''),
    'a warning names the reason',
  );
  const id = await inject(rig.gw.url, GPU, 'gpu-1', null);
  await waitFor(
    'in-memory fault reaches the kubelet',
    () => rig.sim.state().resources[GPU]?.allocatable === 7,
  );
  assert.equal(
    (await api(rig.gw.url, `/api/v1/faults/${id}`, { method: 'DELETE', headers: bearer() })).status,
    204,
  );
  await waitFor('healed', () => rig.sim.state().resources[GPU]?.allocatable === 8);

  // Disk full while running: the store's next write lands on /dev/full (ENOSPC).
  await rig.gw.stop();
  const gw2 = await rig.startGateway({ stateDir: join(rig.dir, 'state-full') }, logger);
  assert.equal((await snapshotOf(gw2)).gateway.persistence.enabled, true);
  const tmp = join(rig.dir, 'state-full', `faults.json.${process.pid}.tmp`);
  symlinkSync('/dev/full', tmp);
  const id2 = await inject(gw2.url, GPU, 'gpu-2', 600);
  s = await waitFor('persistence off after the failed write', async () => {
    const s = await snapshotOf(gw2);
    return s.gateway.persistence.enabled ? null : s;
  });
  assert.match(s.gateway.persistence.reason ?? '', /ENOSPC|no space/i);
  assert.equal(s.faults[id2]?.deviceId, 'gpu-2', 'the fault lives on in memory');
  await waitFor('fault applied', () => rig.sim.state().resources[GPU]?.allocatable === 7);
  // Space again: the next write succeeds and persistence says so.
  unlinkSync(tmp);
  assert.equal(
    (await api(gw2.url, `/api/v1/faults/${id2}`, { method: 'DELETE', headers: bearer() })).status,
    204,
  );
  await waitFor('persistence back on', async () => (await snapshotOf(gw2)).gateway.persistence.enabled);
  report(t, {
    scenario: 'state-dir-unwritable',
    figure: 'read-only at start / disk full at runtime',
    value: 'persistence off with reason, faults in memory',
  });
});
