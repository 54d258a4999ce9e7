// A real two-node cluster for the browser tests and the benchmark: per node a kubelet-sim and a
// gateway running real plugins over real Unix sockets, with pods admitted through the kubelet-sim
// (so devices are really allocated by the plugin). Run as its own process:
//   node --conditions=@plugboard/source --import tsx apps/web/e2e/cluster-fixture.ts
// It prints one line `PLUGBOARD_FIXTURE=<json>` when every gateway shows its pods, and tears
// everything down on SIGTERM/SIGINT.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startKubeletSim, type KubeletSim } from '@plugboard/kubelet-sim';
import { parseGatewayConfig, startGateway, type Gateway } from '@plugboard/node-gateway';
import type { NodeSnapshot } from '@plugboard/api';

import { E2E_TOKEN, NODES } from './fixture-spec';

export interface FixtureInfo {
  gateways: { name: string; url: string }[];
  sims: { name: string; url: string }[];
}

async function waitFor<T>(
  what: string,
  fn: () => Promise<T | null | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pb-web-e2e-'));
  const logger = pino({ level: process.env.PLUGBOARD_FIXTURE_LOG ?? 'silent' });
  const sims: KubeletSim[] = [];
  const gateways: Gateway[] = [];
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    for (const g of gateways.reverse()) await g.stop().catch(() => {});
    for (const s of sims.reverse()) await s.stop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    process.exit(code);
  };
  process.once('SIGTERM', () => void stop(0));
  process.once('SIGINT', () => void stop(0));

  const tokenFile = () => {
    const path = join(dir, 'gateway-token');
    writeFileSync(path, `${E2E_TOKEN}\n`, { mode: 0o600 });
    return path;
  };
  try {
    for (const spec of NODES) {
      const base = join(dir, spec.name);
      const sim = await startKubeletSim({
        devicePluginDir: join(base, 'device-plugins'),
        stateDir: join(base, 'kubelet'),
        nodeName: spec.name,
        listen: '127.0.0.1:0',
        numaNodes: spec.numaNodes,
        cpus: spec.cpus,
        podResourcesRateLimit: false,
        logger,
      });
      sims.push(sim);
      const gw = await startGateway(
        parseGatewayConfig({
          resources: spec.resources,
          gateway: {
            nodeName: spec.name,
            listen: '127.0.0.1:0',
            devicePluginDir: sim.devicePluginDir,
            stateDir: join(base, 'gateway'),
            podResources: { socket: sim.podResourcesSocket, pollIntervalMs: 200 },
            kube: { mode: 'kubeconfig', kubeconfig: sim.kubeconfigPath },
            // The CPU↔NUMA layout of the simulated node, as a real gateway reads /sys.
            topology: { sysfsRoot: sim.sysfsRoot, pollIntervalMs: 200 },
            // History buckets of 1 s so a fault reaches the charts' tables within the test.
            history: {
              tiers: [
                { resolutionMs: 1000, retentionMs: 3_600_000 },
                { resolutionMs: 60_000, retentionMs: 86_400_000 },
              ],
            },
            faults: { enabled: spec.faults !== 'disabled' },
            ...(spec.faults === 'token' ? { auth: { tokenFile: tokenFile() } } : {}),
          },
        }),
        { logger },
      );
      gateways.push(gw);
      await waitFor(
        `${spec.name} plugins registered`,
        async () => (await fetch(`${gw.url}/readyz`)).status === 200,
      );
      for (const p of spec.pods) {
        await sim.admitPod({
          metadata: { name: p.name, namespace: p.namespace },
          spec: {
            restartPolicy: p.restartPolicy,
            containers: [{ name: 'main', resources: { limits: p.limits } }],
          },
        });
      }
      await waitFor(`${spec.name} pods visible in the gateway`, async () => {
        const s = (await (await fetch(`${gw.url}/api/v1/node`)).json()) as NodeSnapshot;
        return spec.pods.every((p) => s.pods[`${p.namespace}/${p.name}`]?.phase === 'Running');
      });
    }
    const info: FixtureInfo = {
      gateways: NODES.map((n, i) => ({ name: n.name, url: gateways[i]!.url })),
      sims: NODES.map((n, i) => ({ name: n.name, url: sims[i]!.url })),
    };
    console.log(`PLUGBOARD_FIXTURE=${JSON.stringify(info)}`);
  } catch (err) {
    console.error(`fixture failed: ${(err as Error).stack ?? String(err)}`);
    await stop(1);
  }
}

if (process.argv[1]?.endsWith('cluster-fixture.ts')) void main();
