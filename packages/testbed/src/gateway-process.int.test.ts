// A simulated node and the gateway binary on it, through the test bed: the gateway logs its URL,
// registers its plugin with kubelet-sim, takes a fault over REST with the node's bearer token (the
// stream shows the kubelet told), and stops with exit 0; a gateway that cannot start, or dies,
// says why with its log.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gatewayDocument } from './gateway-document.js';
import { findGatewayBin, gatewayProcess, type GatewayProcess } from './gateway-process.js';
import { simNode, type SimNode } from './sim-node.js';

const GPU = 'plugboard.example/gpu';
const TOKEN = 'testbed-token-0123456789';
const root = mkdtempSync(join(tmpdir(), 'pb-testbed-'));
let node: SimNode;

before(async () => {
  node = await simNode(root, 'tb-node', { sim: { cpus: 4, numaNodes: 2 } });
});

after(async () => {
  await node?.remove();
  rmSync(root, { recursive: true, force: true });
});

describe('simNode', () => {
  it('has the TestNode shape, its directories made, kubelet-sim answering', async () => {
    assert.equal(node.kind, 'sim');
    assert.equal(node.name, 'tb-node');
    for (const d of [node.devicePluginDir, node.pluginsDir, node.pluginsRegistryDir, node.cdiDir])
      assert.ok(existsSync(d), d);
    assert.ok(existsSync(node.kubeconfig));
    assert.ok(existsSync(join(node.sysfsRoot, 'devices/system/node')));
    const res = await fetch(`${node.sim.url}/api/v1/nodes/tb-node`);
    assert.equal(res.status, 200);
  });
});

describe('gatewayProcess', () => {
  let gw: GatewayProcess;
  before(async () => {
    gw = await gatewayProcess(
      node,
      gatewayDocument(node, { resources: [{ name: GPU, simulated: { count: 2, numaNodes: [0, 1] } }] }),
      { token: TOKEN },
    );
  });
  after(() => gw?.stop());

  it('runs the plugboard-gateway binary of the repo', () => {
    assert.match(findGatewayBin(), /node_modules\/\.bin\/plugboard-gateway$/);
    assert.match(gw.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(readFileSync(gw.configFile, 'utf8'), /tokenFile: .*\/token/);
  });

  it("registers the plugin with the node's kubelet (waited for on the stream)", async () => {
    const s = await gw.waitForSnapshot(
      (s) =>
        s.resources[GPU]?.registration.phase === 'registered' && s.resources[GPU].kubelet.allocatable === 2,
      'registration and 2 allocatable devices',
      30_000,
    );
    assert.equal(s.nodeName, 'tb-node');
    assert.equal((await gw.snapshot()).resources[GPU]?.kubelet.allocatable, 2);
  });

  it('adds and removes a fault with the bearer token; the kubelet is told both ways', async () => {
    const { id, fault } = await gw.faults.add({ resource: GPU, deviceId: 'gpu-1', reason: 'testbed' });
    assert.equal(fault?.deviceId, 'gpu-1');
    await gw.waitForSnapshot((s) => s.resources[GPU]!.kubelet.allocatable === 1, 'allocatable 1');
    await gw.faults.remove(id);
    const s = await gw.waitForSnapshot((s) => s.resources[GPU]!.kubelet.allocatable === 2, 'allocatable 2');
    assert.deepEqual(s.faults, {});
  });

  it('a REST error names the node, the request and the status', async () => {
    await assert.rejects(
      gw.faults.remove('no-such-fault'),
      /tb-node: DELETE \/api\/v1\/faults\/no-such-fault: HTTP 404/,
    );
  });

  it('waitForSnapshot fails after its deadline, naming what it waited for', async () => {
    await assert.rejects(
      gw.waitForSnapshot(() => false, 'the impossible', 300),
      /tb-node: timed out after 300 ms waiting for the impossible/,
    );
  });
});

describe('gatewayProcess failures', () => {
  it('a gateway that cannot start rejects with its log', async () => {
    const doc = gatewayDocument(node, { gateway: { listen: 'not-an-address' } });
    await assert.rejects(
      gatewayProcess(node, doc),
      /tb-node: the gateway exited \(code 2\) before listening:\n.*gateway\.listen: must be HOST:PORT/s,
    );
  });

  it('stop() surfaces a gateway that died, with its log tail', async () => {
    const gw = await gatewayProcess(
      node,
      gatewayDocument(node, { resources: [{ name: 'plugboard.example/nic', simulated: { count: 1 } }] }),
    );
    process.kill(gw.pid, 'SIGKILL');
    await assert.rejects(gw.stop(), /tb-node: the gateway exited SIGKILL:\n.*gateway listening/s);
  });
});
