// kubectl-plugboard the way it runs against a cluster: it reads the kubeconfig, lists the gateway
// pods by label selector through the API server (kubelet-sim's API slice), and talks to the gateway
// through the API server's pod proxy — reads, mutations whose credential travels in
// X-Plugboard-Authorization (the proxy consumes Authorization), and the WebSocket stream.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EXIT_CODES } from '../src/errors.js';
import { cli, GPU, json, startNode, stopNodes, waitForSnapshot, type TestNode } from './helpers.js';

const TOKEN = 'cluster-admin-token-for-the-proxy-test';
const root = mkdtempSync(join(tmpdir(), 'kubectl-plugboard-proxy-'));
const proxyTargets = new Map<string, string>();
let node: TestNode;
let kubeconfig: string;

const gatewayPod = (name: string, namespace: string, component = 'gateway') => ({
  metadata: {
    name,
    namespace,
    labels: {
      'app.kubernetes.io/name': 'plugboard',
      'app.kubernetes.io/instance': 'pb',
      'app.kubernetes.io/component': component,
    },
  },
  spec: { containers: [{ name: component, ports: [{ name: 'http', containerPort: 9400 }] }] },
});

before(async () => {
  node = await startNode(root, 'node-a', {
    faults: true,
    // The gateway accepts the same bearer token the API server does (static token auth stands in
    // for TokenReview here: kubelet-sim serves no authentication API).
    token: TOKEN,
    sim: { controlToken: TOKEN, podProxyTargets: proxyTargets },
  });
  await node.sim.admitPod(gatewayPod('pb-plugboard-gateway-x1', 'plugboard'));
  await node.sim.admitPod(gatewayPod('pb-plugboard-web-7f9', 'plugboard', 'web'));
  proxyTargets.set('plugboard/pb-plugboard-gateway-x1', node.gateway.url);
  kubeconfig = node.sim.kubeconfigPath;
});

after(async () => {
  await stopNodes([node]);
  rmSync(root, { recursive: true, force: true });
});

function kubeconfigWithToken(token: string): string {
  const file = join(root, `kubeconfig-${token.length}`);
  const doc = JSON.parse(readFileSync(kubeconfig, 'utf8')) as { users: { user: { token?: string } }[] };
  doc.users[0]!.user.token = token;
  writeFileSync(file, JSON.stringify(doc));
  return file;
}

describe('through the API server pod proxy', () => {
  it('finds the gateway pod by label selector and reads through the proxy', async () => {
    const r = await cli(['nodes', '--kubeconfig', kubeconfig, '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const { items } = json<{ items: { nodeName: string; gateway: string }[] }>(r);
    assert.deepEqual(
      items.map((i) => [i.nodeName, i.gateway]),
      [['node-a', 'plugboard/pb-plugboard-gateway-x1']],
    );
    const devices = await cli(['devices', '--kubeconfig', kubeconfig, '-n', 'plugboard', '--node', 'node-a']);
    assert.equal(devices.code, 0, devices.stderr);
    assert.equal(devices.stdout.trimEnd().split('\n').length, 5, devices.stdout);
  });

  it('exits 3 when no gateway pod matches (namespace or selector)', async () => {
    const ns = await cli(['nodes', '--kubeconfig', kubeconfig, '-n', 'elsewhere']);
    assert.equal(ns.code, EXIT_CODES['not-found']);
    assert.match(ns.stderr, /no Running gateway pods match .* in namespace elsewhere/);
    const sel = await cli(['nodes', '--kubeconfig', kubeconfig, '-l', 'app.kubernetes.io/name=other']);
    assert.equal(sel.code, EXIT_CODES['not-found']);
  });

  it('injects and clears a fault with the kubeconfig user token, carried in X-Plugboard-Authorization', async () => {
    const injected = await cli([
      'fault',
      'inject',
      '--kubeconfig',
      kubeconfig,
      '--resource',
      GPU,
      '--device',
      'gpu-0',
      '--reason',
      'through the proxy',
      '-o',
      'json',
    ]);
    assert.equal(injected.code, 0, injected.stderr);
    const { id } = json<{ id: string }>(injected);
    await waitForSnapshot(node, (s) => s.devices[`${GPU}/gpu-0`]?.health === 'Unhealthy', 'gpu-0 to fail');
    const cleared = await cli(['fault', 'clear', id, '--kubeconfig', kubeconfig]);
    assert.equal(cleared.code, 0, cleared.stderr);
    await waitForSnapshot(node, (s) => s.devices[`${GPU}/gpu-0`]?.health === 'Healthy', 'gpu-0 to heal');
  });

  it('maps 401 from the API server and 401 from the gateway to exit 4, saying who refused', async () => {
    const badUser = await cli(['nodes', '--kubeconfig', kubeconfigWithToken('not-a-valid-cluster-token')]);
    assert.equal(badUser.code, EXIT_CODES.unauthorized);
    // kubelet-sim serves reads without a token, so the refusal comes at the proxy, not the pod list.
    assert.match(
      badUser.stderr,
      /the API server \(pod proxy to plugboard\/pb-plugboard-gateway-x1\): .*\(HTTP 401\)/,
    );

    const badMutationToken = await cli([
      'fault',
      'inject',
      '--kubeconfig',
      kubeconfig,
      '--token',
      'a-token-the-gateway-rejects',
      '--resource',
      GPU,
      '--device',
      'gpu-1',
    ]);
    assert.equal(badMutationToken.code, EXIT_CODES.unauthorized);
    assert.match(
      badMutationToken.stderr,
      /gateway plugboard\/pb-plugboard-gateway-x1: invalid bearer token \(HTTP 401\)/,
    );
    assert.equal(Object.keys((await node.gateway.snapshot()).faults).length, 0);
  });

  it('exits 6 when the API server cannot reach the pod', async () => {
    proxyTargets.set('plugboard/pb-plugboard-gateway-x1', 'http://127.0.0.1:1');
    try {
      const r = await cli(['nodes', '--kubeconfig', kubeconfig]);
      assert.equal(r.code, EXIT_CODES.unavailable, r.stderr);
    } finally {
      proxyTargets.set('plugboard/pb-plugboard-gateway-x1', node.gateway.url);
    }
  });

  it('watches the gateway stream through the proxy (WebSocket upgrade)', async () => {
    const r = await cli(['watch', '--kubeconfig', kubeconfig, '-o', 'json', '--timeout', '1s']);
    assert.equal(r.code, 0, r.stderr);
    const first = JSON.parse(r.stdout.split('\n')[0]!) as {
      node: { nodeName: string; resources: Record<string, unknown> };
    };
    assert.equal(first.node.nodeName, 'node-a');
    assert.ok(first.node.resources[GPU]);
  });
});
