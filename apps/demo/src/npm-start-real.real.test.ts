// `npm start -- --cluster real` as a user runs it, from the repo root, waited on until it prints its
// URL: the demo's four nodes as real kubelets v1.37.2 on a real control plane of its own (not the one
// `npm test` starts for the other real suites), its workloads placed by kube-scheduler; the dashboard
// shows the nodes; a device-plugin fault through the dashboard's API lowers the Node's allocatable in
// the real API server; a DRA fault with NoExecute has the real device taint eviction controller evict
// the pod; SIGINT stops every process and removes the state directory. Without root it refuses at
// once, naming what is missing.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import type { NodeSnapshot } from '@plugboard/api';
import { waitFor } from '@plugboard/testbed/wait';
import { repoRoot, startDemo, type DemoProcess } from './demo-process.js';

const run = promisify(execFile);
const NODES = ['dra-node', 'edge-node', 'gpu-node-a', 'gpu-node-b'];
const GPU = 'plugboard.example/gpu';

interface PodJson {
  metadata: { name: string; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status: { phase: string };
}

describe('npm start -- --cluster real', { timeout: 900_000 }, () => {
  let demo: DemoProcess;
  let kubeconfig = '';
  let kubectlBin = '';

  const kubectl = async <T>(args: string[]): Promise<T> =>
    JSON.parse(
      (await run(kubectlBin, ['--kubeconfig', kubeconfig, ...args, '-o', 'json'], { maxBuffer: 1 << 26 }))
        .stdout,
    ) as T;

  before(async () => {
    const kubectlLine = /export KUBECONFIG=(\S+); (\S+) get nodes/;
    demo = startDemo(
      process.execPath,
      ['--conditions=@plugboard/source', '--import', 'tsx', 'apps/demo/src/main.ts', '--cluster', 'real'],
      { env: { NODE_OPTIONS: '' }, readyWhen: (output) => kubectlLine.test(output) },
    );
    await demo.ready;
    [, kubeconfig, kubectlBin] = kubectlLine.exec(demo.output) as unknown as [string, string, string];
  });

  after(() => demo?.kill());

  it('the demo’s nodes are real kubelets v1.37.2, Ready, and its workloads were placed by kube-scheduler', async () => {
    const nodes = await kubectl<{
      items: {
        metadata: { name: string };
        status: { nodeInfo: { kubeletVersion: string }; conditions: { type: string; status: string }[] };
      }[];
    }>(['get', 'nodes']);
    assert.deepEqual(nodes.items.map((n) => n.metadata.name).sort(), NODES);
    for (const n of nodes.items) {
      assert.equal(n.status.nodeInfo.kubeletVersion, 'v1.37.2');
      assert.equal(n.status.conditions.find((c) => c.type === 'Ready')?.status, 'True', n.metadata.name);
    }
    const pods = await kubectl<{ items: PodJson[] }>(['get', 'pods', '-n', 'render']);
    assert.deepEqual(pods.items.map((p) => [p.metadata.name, p.spec.nodeName, p.status.phase]).sort(), [
      ['encode', 'gpu-node-b', 'Running'],
      ['frame-0', 'gpu-node-b', 'Running'],
      ['frame-1', 'gpu-node-b', 'Running'],
      // the same pod spec as frame-0, served by the DRA driver through the scheduler's special claim
      ['frame-dra', 'dra-node', 'Running'],
    ]);
    const frameDra = await kubectl<{
      status: { extendedResourceClaimStatus?: { resourceClaimName: string } };
    }>(['get', 'pod', '-n', 'render', 'frame-dra']);
    const special = frameDra.status.extendedResourceClaimStatus?.resourceClaimName ?? '';
    assert.match(special, /^frame-dra-extended-resources-\w{5}$/);
    const claim = await kubectl<{
      metadata: { annotations?: Record<string, string> };
      status?: { allocation?: { devices: { results: { driver: string; pool: string }[] } } };
    }>(['get', 'resourceclaim', '-n', 'render', special]);
    assert.equal(claim.metadata.annotations?.['resource.kubernetes.io/extended-resource-claim'], 'true');
    assert.deepEqual(
      claim.status?.allocation?.devices.results.map((r) => [r.driver, r.pool]),
      [['gpu.plugboard.example', 'dra-node']],
    );
    assert.match(
      demo.output,
      /workloads: \d+ pods placed by kube-scheduler and admitted by the real kubelets/,
    );
  });

  it('the dashboard serves the four nodes through its API', async () => {
    const res = await fetch(`${demo.url}/api/cluster`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { cluster: { nodes: Record<string, unknown> } };
    assert.deepEqual(Object.keys(body.cluster.nodes).sort(), NODES);
    const page = await fetch(`${demo.url}/nodes/gpu-node-b`);
    assert.equal(page.status, 200);
  });

  it('a device-plugin fault through the dashboard lowers allocatable in the real API server', async () => {
    const snap = (await (await fetch(`${demo.url}/api/nodes/gpu-node-b/node`)).json()) as NodeSnapshot;
    const free = Object.values(snap.devices).find((d) => d.resource === GPU && d.allocation === null)!;
    const before = await kubectl<{ status: { allocatable: Record<string, string> } }>([
      'get',
      'node',
      'gpu-node-b',
    ]);
    const res = await fetch(`${demo.url}/api/nodes/gpu-node-b/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ resource: GPU, deviceId: free.id, reason: 'drill' }),
    });
    assert.equal(res.status, 201, await res.text());
    const expected = String(Number(before.status.allocatable[GPU]) - 1);
    await waitFor(
      `gpu-node-b allocatable ${GPU} ${expected}`,
      async () =>
        (await kubectl<{ status: { allocatable: Record<string, string> } }>(['get', 'node', 'gpu-node-b']))
          .status.allocatable[GPU] === expected,
      60_000,
    );
  });

  it('a DRA fault with NoExecute: the real eviction controller evicts the pod holding the device', async () => {
    const snap = (await (await fetch(`${demo.url}/api/nodes/dra-node/node`)).json()) as NodeSnapshot;
    const held = Object.values(snap.dra!.devices).find(
      (d) => d.sourceId !== null && d.allocations.some((a) => a.pods.length > 0),
    )!;
    const pod = held.allocations.find((a) => a.pods.length > 0)!.pods[0]!;
    const [ns, name] = pod.split('/') as [string, string];
    const res = await fetch(`${demo.url}/api/nodes/dra-node/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        resource: held.driver,
        deviceId: held.sourceId,
        reason: 'ECC',
        taint: 'NoExecute',
      }),
    });
    assert.equal(res.status, 201, await res.text());
    await waitFor(
      `${pod} evicted`,
      async () => {
        const list = await kubectl<{ items: PodJson[] }>(['get', 'pods', '-n', ns]);
        const p = list.items.find((x) => x.metadata.name === name);
        return !p || p.metadata.deletionTimestamp !== undefined || p.status.phase === 'Failed';
      },
      60_000,
    );
    const events = await kubectl<{ items: { reason: string; involvedObject: { name: string } }[] }>([
      'get',
      'events',
      '-n',
      ns,
    ]);
    assert.ok(
      events.items.some((e) => e.reason === 'DeviceTaintManagerEviction' && e.involvedObject.name === name),
      'the real controller’s eviction Event',
    );
  });

  it('SIGINT stops every process it started and removes its state directory', async () => {
    const { code } = await demo.interrupt();
    assert.equal(code, 0, demo.output);
    assert.match(demo.output, /\[plugboard\] stopped/);
    assert.equal(demo.groupAlive(), false, 'no process of the group is left');
    assert.equal(existsSync(demo.stateDir), false);
    const left = await run('pgrep', ['-f', demo.stateDir]).catch(() => ({ stdout: '' }));
    assert.equal(left.stdout.trim(), '', 'no kubelet, runtime or control-plane process of this demo');
  });
});

describe('npm start -- --cluster real, not as root', () => {
  it('refuses at once, naming root and how to run it, and starts nothing', async () => {
    const res = await run(
      process.execPath,
      ['--conditions=@plugboard/source', '--import', 'tsx', 'apps/demo/src/main.ts', '--cluster', 'real'],
      { cwd: repoRoot, env: { ...process.env, PORT: '0', NODE_OPTIONS: '' }, uid: 65534, gid: 65534 },
    ).then(
      () => assert.fail('it started'),
      (err: { code: number; stderr: string; stdout: string }) => err,
    );
    assert.equal(res.code, 1);
    assert.match(res.stderr, /--cluster real: plugboard-cluster must run as root/);
    assert.match(res.stderr, /Run it with sudo/);
    assert.doesNotMatch(res.stdout, /state directory/);
  });
});
