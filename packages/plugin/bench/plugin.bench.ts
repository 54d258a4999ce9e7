// Plugin benchmark (not a test): Allocate latency/throughput over a real Unix socket beside a bare
// @grpc/grpc-js echo over a Unix socket measured in the same run, socket deletion → re-registration
// time, and fault → ListAndWatch update time (after start-up and in steady state). Targets (ratios against the same-run baseline):
// Allocate p99 ≤ 1.5× echo p99, re-registration ≤ 200 ms, fault → ListAndWatch p99 ≤ 5 ms.
// Run: npm run bench -w @plugboard/plugin   (prints a Markdown table)
import { once } from 'node:events';
import { mkdtemp, rm, unlink } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { deviceplugin } from '@plugboard/proto';
import { createLogger, ResourcePlugin, SimulatedSource } from '../src/index.js';
import { TestKubelet, healthOf } from '../test/test-kubelet.js';
import { compare, startEcho, stats, threadCpuMs } from './bench-helpers.js';

const RESOURCE = 'plugboard.example/gpu';
async function main(): Promise<void> {
  const loadAtStart = loadavg();
  const dir = await mkdtemp(join(tmpdir(), 'pb-bench-'));
  const kubelet = await TestKubelet.create();
  const source = new SimulatedSource({ count: 8, numaNodes: [0, 1], idPrefix: 'gpu' });
  const plugin = new ResourcePlugin({
    resourceName: RESOURCE,
    source,
    devicePluginDir: kubelet.dir,
    // The CLI's logger (every RPC as a JSON line at info, buffered) into /dev/null: the cost of
    // logging is measured, not skipped.
    logger: createLogger('info', {}, '/dev/null'),
    restartPollIntervalMs: 1000,
  });
  const firstRegistration = kubelet.nextRegistration(RESOURCE);
  await plugin.start();
  await firstRegistration;

  // --- Allocate vs echo ---------------------------------------------------------------------
  const echo = await startEcho(join(dir, 'echo.sock'));
  const allocateClient = new deviceplugin.DevicePluginClient(
    `unix://${plugin.socketPath}`,
    credentials.createInsecure(),
  );

  const pairs = [
    ['gpu-0', 'gpu-1'],
    ['gpu-2', 'gpu-3'],
    ['gpu-4', 'gpu-5'],
    ['gpu-6', 'gpu-7'],
  ];
  const requests = pairs.map((p) => ({ containerRequests: [{ devicesIds: p }] }));
  // The echo carries a payload the size of an encoded Allocate request.
  const payload = Buffer.from(deviceplugin.AllocateRequest.encode(requests[0]!).finish());
  let k = 0;
  const callAllocate = (): Promise<void> =>
    new Promise((resolve, reject) =>
      allocateClient.allocate(requests[k++ % requests.length]!, (e) => (e ? reject(e) : resolve())),
    );
  const callEcho = (): Promise<void> => echo.call(payload);

  const rows: string[] = [];
  const ratios: Record<string, number> = {};
  for (const inFlight of [1, 16]) {
    const total = inFlight === 1 ? 4000 : 12000;
    const [a, e] = await compare(callAllocate, callEcho, inFlight, total);
    ratios[`p99@${inFlight}`] = a.p99 / e.p99;
    rows.push(
      `| Allocate (2 devices), ${inFlight} in flight | ${a.p50.toFixed(3)} | ${a.p99.toFixed(3)} | ${Math.round(a.perSecond)} | ${a.n} |`,
      `| bare grpc-js echo, ${inFlight} in flight | ${e.p50.toFixed(3)} | ${e.p99.toFixed(3)} | ${Math.round(e.perSecond)} | ${e.n} |`,
      `| ratio Allocate / echo | ${(a.p50 / e.p50).toFixed(2)}× | ${(a.p99 / e.p99).toFixed(2)}× | ${(a.perSecond / e.perSecond).toFixed(2)}× | |`,
    );
  }
  allocateClient.close();
  echo.close();

  // --- fault → ListAndWatch update ----------------------------------------------------------
  // Measured twice: the first 300 faults after start-up, while V8 is still compiling this path
  // (TurboFan runs on background threads that compete with the event loop for the 2 CPUs), and 300
  // faults after 2,000 warm-up cycles, the steady state of a long-running plugin. The target is
  // judged on the steady state; both figures are printed. Background-thread CPU during each window
  // shows whether compilation was still running.
  const stream = kubelet.endpoint(RESOURCE).stream;
  const faultCycle = async (i: number, samples: number[] | null): Promise<void> => {
    const id = `gpu-${i % 8}`;
    const update = (async () => {
      for (;;) {
        const [msg] = (await once(stream, 'data')) as [deviceplugin.ListAndWatchResponse];
        if (healthOf(msg.devices, id) === 'Unhealthy') return performance.now();
      }
    })();
    const t = performance.now();
    plugin.injectFault(id, 'bench');
    const at = await update;
    samples?.push(at - t);
    const healed = once(stream, 'data');
    plugin.clearFault(id);
    await healed;
  };
  const faultWindow = async (n: number, samples: number[] | null) => {
    const threads0 = threadCpuMs();
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < n; i++) await faultCycle(i, samples);
    const cpu = process.cpuUsage(cpu0);
    const threads1 = threadCpuMs();
    return {
      processCpuMs: (cpu.user + cpu.system) / 1000,
      backgroundCpuMs: threads0 && threads1 ? threads1.others - threads0.others : Number.NaN,
    };
  };
  const coldSamples: number[] = [];
  const coldCpu = await faultWindow(300, coldSamples);
  await faultWindow(2000, null);
  const faultSamples: number[] = [];
  const warmCpu = await faultWindow(300, faultSamples);
  const coldFault = stats(coldSamples, 1);
  const fault = stats(faultSamples, 1);

  // --- socket deletion → re-registration ----------------------------------------------------
  const reregSamples: number[] = [];
  for (let i = 0; i < 15; i++) {
    const registered = kubelet.nextRegistration(RESOURCE);
    const t = performance.now();
    await unlink(plugin.socketPath);
    await registered;
    reregSamples.push(performance.now() - t);
    if (plugin.registration().phase !== 'registered') await once(plugin, 'registered');
  }
  const rereg = stats(reregSamples, 1);

  await plugin.stop();
  await kubelet.stop();
  await rm(dir, { recursive: true, force: true });

  const verdict = (ok: boolean): string => (ok ? 'met' : 'MISSED');
  const worstRatio = Math.max(ratios['p99@1']!, ratios['p99@16']!);
  console.log(
    `# @plugboard/plugin benchmark — ${new Date().toISOString()}, Node ${process.version}, ${process.platform}/${process.arch}, ${cpus().length} CPUs, load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')} at start`,
    `(1/5/15 min) and ${loadavg()[0]!.toFixed(2)} at the end\n`,
  );
  console.log('| what | p50 ms | p99 ms | calls/s | calls |\n| --- | --- | --- | --- | --- |');
  console.log(rows.join('\n'));
  console.log(
    '\n| what | p50 ms | p99 ms | max ms | samples | target |\n| --- | --- | --- | --- | --- | --- |',
  );
  console.log(
    `| fault → ListAndWatch update, first 300 after start (JIT compiling) | ${coldFault.p50.toFixed(3)} | ${coldFault.p99.toFixed(3)} | ${coldFault.max.toFixed(3)} | ${coldFault.n} | (informational) |`,
  );
  console.log(
    `| fault → ListAndWatch update, steady state (after 2,000 warm-up cycles) | ${fault.p50.toFixed(3)} | ${fault.p99.toFixed(3)} | ${fault.max.toFixed(3)} | ${fault.n} | p99 ≤ 5 ms: ${verdict(fault.p99 <= 5)} |`,
  );
  console.log(
    `| socket deletion → re-registration | ${rereg.p50.toFixed(1)} | ${rereg.p99.toFixed(1)} | ${rereg.max.toFixed(1)} | ${rereg.n} | ≤ 200 ms: ${verdict(rereg.max <= 200)} |`,
  );
  console.log(
    `\nCPU during the fault windows (300 cycles each): first window ${coldCpu.processCpuMs.toFixed(0)} ms process, ${coldCpu.backgroundCpuMs.toFixed(0)} ms of it on V8/libuv background threads; steady-state window ${warmCpu.processCpuMs.toFixed(0)} ms process, ${warmCpu.backgroundCpuMs.toFixed(0)} ms background`,
  );
  console.log(
    `Allocate p99 / echo p99: ${ratios['p99@1']!.toFixed(2)}× at 1 in flight, ${ratios['p99@16']!.toFixed(2)}× at 16 (target ≤ 1.5×: ${verdict(worstRatio <= 1.5)})`,
  );
}

await main();
