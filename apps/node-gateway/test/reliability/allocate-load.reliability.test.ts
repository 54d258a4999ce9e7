// Allocate under load: 2,000 (short) or 10,000 (full) Allocate calls with 32 in flight on the
// plugin's socket while faults flap on other devices of the same resource, so ListAndWatch sends a
// new device list every few milliseconds. Every Allocate succeeds, and the ListAndWatch stream keeps
// flowing between Allocate batches (never stalls behind them); the largest gap is reported.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { deviceplugin } from '@plugboard/proto';
import { report, sized } from './figures.js';
import { GPU, startRig, waitFor } from './harness.js';

const CALLS = sized(2_000, 10_000);
const IN_FLIGHT = 32;
const FLAP_MS = 5;

test(`${CALLS.toLocaleString('en')} Allocate calls, ${IN_FLIGHT} in flight, while ListAndWatch updates flow: all succeed, the stream never stalls`, async (t) => {
  const rig = await startRig({
    resources: [{ name: GPU, simulated: { count: 16, numaNodes: [0, 1] } }],
    gateway: { kube: { mode: 'disabled' }, logLevel: 'silent' },
  });
  t.after(() => rig.stop());
  const client = new deviceplugin.DevicePluginClient(
    `unix://${join(rig.sim.devicePluginDir, 'plugboard.example-gpu.sock')}`,
    credentials.createInsecure(),
  );
  t.after(() => client.close());

  // Our own ListAndWatch stream, next to the kubelet's.
  const arrivals: number[] = [];
  let lastList: deviceplugin.Device[] = [];
  const stream = client.listAndWatch({});
  stream.on('data', (m: deviceplugin.ListAndWatchResponse) => {
    arrivals.push(performance.now());
    lastList = m.devices;
  });
  stream.on('error', () => undefined);
  t.after(() => stream.cancel());
  await waitFor('first device list', () => lastList.length === 16);

  // Flap gpu-12..15 through the gateway's fault store (the same path as REST faults).
  const flapping = ['gpu-12', 'gpu-13', 'gpu-14', 'gpu-15'];
  const active = new Map<string, string>();
  let toggles = 0;
  const flap = setInterval(() => {
    const device = flapping[toggles++ % flapping.length]!;
    const id = active.get(device);
    if (id) {
      rig.gw.faults.remove(id, 'deleted');
      active.delete(device);
    } else {
      active.set(
        device,
        rig.gw.faults.add({ resource: GPU, deviceId: device, reason: 'flap', ttlSeconds: null }).id,
      );
    }
  }, FLAP_MS);

  const allocateIds = ['gpu-0', 'gpu-1', 'gpu-2', 'gpu-3', 'gpu-4', 'gpu-5', 'gpu-6', 'gpu-7'];
  let next = 0;
  let failed = 0;
  const firstError: string[] = [];
  const completions: number[] = [];
  const latencies: number[] = [];
  const started = performance.now();
  const arrivalsBefore = arrivals.length;
  const worker = async (): Promise<void> => {
    while (next < CALLS) {
      const i = next++;
      const ids = [allocateIds[i % 8]!, allocateIds[(i + 3) % 8]!];
      const t0 = performance.now();
      await new Promise<void>((resolve) =>
        client.allocate(
          { containerRequests: [{ devicesIds: ids }] },
          new Metadata(),
          { deadline: Date.now() + 30_000 },
          (err: ServiceError | null, res?: deviceplugin.AllocateResponse) => {
            if (err || res?.containerResponses.length !== 1) {
              failed++;
              if (firstError.length < 3) firstError.push(err?.details ?? 'empty response');
            }
            resolve();
          },
        ),
      );
      latencies.push(performance.now() - t0);
      completions.push(performance.now());
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const elapsed = performance.now() - started;
  clearInterval(flap);
  const during = arrivals.slice(arrivalsBefore).filter((a) => a <= started + elapsed);

  assert.equal(failed, 0, firstError.join('; '));
  // No stall: the stream delivered lists throughout, between every 10% of the Allocate calls.
  const decile = Math.floor(CALLS / 10);
  for (let k = 1; k < 10; k++) {
    const from = completions[(k - 1) * decile]!;
    const to = completions[k * decile]!;
    assert.ok(
      during.some((a) => a >= from && a <= to),
      `no ListAndWatch update between Allocate #${(k - 1) * decile} and #${k * decile}`,
    );
  }
  const points = [started, ...during, started + elapsed];
  const maxGap = Math.max(...points.slice(1).map((p, i) => p - points[i]!));
  // The last list matches the fault store once the flapping stops.
  await waitFor(
    'final list matches the faults',
    () =>
      lastList
        .filter((d) => d.health === 'Unhealthy')
        .map((d) => d.ID)
        .sort()
        .join() === [...active.keys()].sort().join(),
  );
  latencies.sort((a, b) => a - b);
  report(t, {
    scenario: 'allocate-load',
    figure: 'Allocate calls (32 in flight) succeeded',
    value: `${CALLS - failed} / ${CALLS}`,
  });
  report(t, {
    scenario: 'allocate-load',
    figure: 'throughput',
    value: Math.round(CALLS / (elapsed / 1000)),
    unit: 'calls/s',
  });
  report(t, {
    scenario: 'allocate-load',
    figure: 'Allocate latency p50 / p99',
    value: `${latencies[Math.floor(latencies.length / 2)]!.toFixed(1)} / ${latencies[Math.floor(latencies.length * 0.99)]!.toFixed(1)}`,
    unit: 'ms',
  });
  report(t, {
    scenario: 'allocate-load',
    figure: 'ListAndWatch lists received during the load',
    value: during.length,
  });
  report(t, {
    scenario: 'allocate-load',
    figure: 'largest ListAndWatch gap',
    value: maxGap.toFixed(0),
    unit: 'ms',
    bound: `faults toggled every ${FLAP_MS} ms`,
  });
  assert.ok(maxGap < 5_000, `ListAndWatch stalled for ${maxGap.toFixed(0)} ms`);
});
