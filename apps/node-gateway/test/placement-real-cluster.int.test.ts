// The gateway as it runs on a real cluster: against a kubelet-sim started without its control API
// (only what a real API server and kubelet offer: the API slice, nodes/{node}/proxy/configz,
// PodResources) the NUMA views still show the kubelet's policies — read from configz — and "try to
// place" still answers, as a prediction; admitting says why it cannot. With configz turned off (the
// chart's RBAC value off) or refused by the API server, placement says why it is unavailable.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { AdmissionView } from '@plugboard/api';
import { startKubeletSim, type KubeletSim } from '@plugboard/kubelet-sim';
import { parseGatewayConfig, startGateway, type Gateway, type GatewaySectionInput } from '../src/index.js';
import { KubeletConfigz } from '../src/sources/kubelet-configz.js';
import { apiServerRequestTo, waitFor } from './helpers.js';

const GPU = 'plugboard.example/gpu';
const TOKEN = 'real-cluster-test-token-0123456789';
const silent = pino({ level: 'silent' });
const pod = (name: string) => ({
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'main', resources: { limits: { [GPU]: '2', cpu: '2', memory: '1Gi' } } }] },
});
const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('a kubelet-sim without its control API: what a real cluster offers', () => {
  let dir: string;
  let sim: KubeletSim;
  const gateways: Gateway[] = [];
  const start = async (gateway: GatewaySectionInput = {}): Promise<Gateway> => {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`);
    const gw = await startGateway(
      parseGatewayConfig({
        resources: [{ name: GPU, simulated: { count: 8, numaNodes: [0, 1] } }],
        gateway: {
          nodeName: sim.nodeName,
          listen: '127.0.0.1:0',
          devicePluginDir: sim.devicePluginDir,
          podResources: { socket: sim.podResourcesSocket, pollIntervalMs: 100 },
          kube: { mode: 'kubeconfig', kubeconfig: sim.kubeconfigPath },
          auth: { tokenFile },
          ...gateway,
          topology: { sysfsRoot: sim.sysfsRoot, pollIntervalMs: 100, ...gateway.topology },
        },
      }),
      { logger: silent },
    );
    gateways.push(gw);
    return gw;
  };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pb-gw-real-'));
    sim = await startKubeletSim({
      devicePluginDir: join(dir, 'dp'),
      stateDir: join(dir, 'kubelet'),
      nodeName: 'real-node',
      numaNodes: 2,
      cpus: 16,
      topologyManagerPolicy: 'single-numa-node',
      topologyManagerScope: 'pod',
      reservedCpus: [0, 1],
      podResourcesRateLimit: false,
      controlApi: false,
      logger: silent,
    });
  });
  after(async () => {
    for (const gw of gateways) await gw.stop();
    await sim?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('policies from configz, placement as a prediction, no admit path', async () => {
    const gw = await start();
    const topology = await waitFor(
      'settings from configz and the control API found missing',
      () => {
        const t = gw.model.snapshot().topology;
        return t?.kubelet && t.placement.admit?.reason?.includes('not a kubelet-sim') ? t : null;
      },
      10_000,
    );
    assert.deepEqual(topology.kubelet, {
      source: 'configz',
      topologyManagerPolicy: 'single-numa-node',
      topologyManagerScope: 'pod',
      cpuManagerPolicy: 'static',
      memoryManagerPolicy: 'Static',
      reservedCpuIds: [0, 1],
    });
    assert.equal(topology.placement.available, true);
    assert.equal(topology.placement.admit?.available, false);

    await waitFor('plugin registered', async () => (await fetch(`${gw.url}/readyz`)).status === 200);
    const res = await post(`${gw.url}/api/v1/placement`, pod('preview'));
    assert.equal(res.status, 200);
    const preview = (await res.json()) as AdmissionView;
    assert.equal(preview.source, 'prediction');
    assert.equal(preview.result, 'admitted');
    assert.deepEqual([preview.policy, preview.scope], ['single-numa-node', 'pod']);
    assert.deepEqual(preview.steps[0]!.merged, { numaNodes: [0], preferred: true });
    assert.deepEqual(preview.containers[0]!.affinity, [0]);

    const admit = await post(`${gw.url}/api/v1/pods`, pod('preview'), { authorization: `Bearer ${TOKEN}` });
    assert.equal(admit.status, 503);
    assert.match(((await admit.json()) as { detail: string }).detail, /control API/);

    // A pod the kubelet admitted: placed on the map, but its decision is only in the kubelet's log.
    await sim.admitPod(pod('running'));
    const running = await waitFor('the admitted pod', () => {
      const p = gw.model.snapshot().pods['default/running'];
      return p?.containers[0]?.cpuIds.length ? p : null;
    });
    assert.equal(running.numaAlignment.verdict, 'aligned');
    assert.equal(running.topology?.policy, 'single-numa-node');
    assert.equal(running.topology?.admission, null);
  });

  test('with configz turned off, placement says why it is unavailable', async () => {
    const gw = await start({ topology: { configz: { enabled: false } } });
    const t = gw.model.snapshot().topology!;
    assert.equal(t.kubelet, null);
    assert.match(t.kubeletReason ?? '', /topology\.configz\.enabled: false/);
    assert.equal(t.placement.available, false);
    assert.match(
      t.placement.reason ?? '',
      /^the kubelet's settings are unknown \(reading the kubelet's configz is turned off/,
    );
    const res = await post(`${gw.url}/api/v1/placement`, pod('nowhere'));
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('content-type'), 'application/problem+json');
    assert.match(
      ((await res.json()) as { detail: string }).detail,
      /^placement cannot be predicted: the kubelet's settings are unknown/,
    );
  });
});

test('an API server that refuses nodes/proxy: the reason names the permission', async () => {
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    paths.push(req.url ?? '');
    res
      .writeHead(403, { 'content-type': 'application/json' })
      .end('{"kind":"Status","status":"Failure","reason":"Forbidden","code":403}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { request } = apiServerRequestTo(server, 'sa-token');
  const reasons: (string | null)[] = [];
  const configz = new KubeletConfigz({
    nodeName: 'gpu-node-a',
    request,
    intervalMs: 60_000,
    timeoutMs: 1000,
    maxBackoffMs: 60_000,
    logger: silent,
    onState: (settings, reason) => reasons.push(settings ? 'settings' : reason),
  });
  configz.start();
  try {
    await waitFor('a reason', () => reasons.length > 0);
    assert.deepEqual(paths, ['/api/v1/nodes/gpu-node-a/proxy/configz']);
    assert.match(
      reasons[0]!,
      /HTTP 403\): the gateway's service account needs get on nodes\/proxy \(chart value gateway\.rbac\.nodesProxy\)$/,
    );
  } finally {
    configz.stop();
    request.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});
