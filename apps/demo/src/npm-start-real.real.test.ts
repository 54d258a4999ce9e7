// `npm start -- --cluster real` as a user runs it, from the repo root, waited on until it prints its
// URL: the demo's four nodes as real kubelets v1.37.2 on a real control plane of its own (not the one
// `npm test` starts for the other real suites), its workloads placed by kube-scheduler; the dashboard
// shows the nodes; a device-plugin fault through the dashboard's API lowers the Node's allocatable in
// the real API server; a DRA fault with NoExecute has the real device taint eviction controller evict
// the pod; SIGINT stops every process and removes the state directory. Without root it refuses at
// once, naming what is missing.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import type { NodeSnapshot } from '@plugboard/api';
import { waitFor } from '@plugboard/testbed/wait';

const run = promisify(execFile);
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const NODES = ['dra-node', 'edge-node', 'gpu-node-a', 'gpu-node-b'];
const GPU = 'plugboard.example/gpu';

interface PodJson {
  metadata: { name: string; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status: { phase: string };
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm start -- --cluster real', { timeout: 900_000 }, () => {
  let child: ChildProcess;
  let output = '';
  let url = '';
  let stateDir = '';
  let kubeconfig = '';
  let kubectlBin = '';
  let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  const kubectl = async <T>(args: string[]): Promise<T> =>
    JSON.parse(
      (await run(kubectlBin, ['--kubeconfig', kubeconfig, ...args, '-o', 'json'], { maxBuffer: 1 << 26 }))
        .stdout,
    ) as T;

  before(async () => {
    child = spawn(
      process.execPath,
      ['--conditions=@plugboard/source', '--import', 'tsx', 'apps/demo/src/main.ts', '--cluster', 'real'],
      {
        cwd: repoRoot,
        env: { ...process.env, PORT: '0', NEXT_TELEMETRY_DISABLED: '1', NODE_OPTIONS: '' },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    exited = new Promise((res) => child.once('exit', (code, signal) => res({ code, signal })));
    await new Promise<void>((res, rej) => {
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        stateDir ||= /state directory (\S+)/.exec(output)?.[1] ?? '';
        const k = /export KUBECONFIG=(\S+); (\S+) get nodes/.exec(output);
        if (k) [, kubeconfig, kubectlBin] = k as unknown as [string, string, string];
        const m = /ready in [\d.]+ s — open (http:\/\/\S+)/.exec(output);
        if (m && kubeconfig) {
          url = m[1]!;
          res();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      void exited.then(({ code, signal }) =>
        rej(new Error(`the demo exited (code ${code}, signal ${signal}) before it was ready:\n${output}`)),
      );
    });
  });

  after(() => {
    if (child.exitCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

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
    assert.match(output, /workloads: \d+ pods placed by kube-scheduler and admitted by the real kubelets/);
  });

  it('the dashboard serves the four nodes through its API', async () => {
    const res = await fetch(`${url}/api/cluster`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { cluster: { nodes: Record<string, unknown> } };
    assert.deepEqual(Object.keys(body.cluster.nodes).sort(), NODES);
    const page = await fetch(`${url}/nodes/gpu-node-b`);
    assert.equal(page.status, 200);
  });

  it('a device-plugin fault through the dashboard lowers allocatable in the real API server', async () => {
    const snap = (await (await fetch(`${url}/api/nodes/gpu-node-b/node`)).json()) as NodeSnapshot;
    const free = Object.values(snap.devices).find((d) => d.resource === GPU && d.allocation === null)!;
    const before = await kubectl<{ status: { allocatable: Record<string, string> } }>([
      'get',
      'node',
      'gpu-node-b',
    ]);
    const res = await fetch(`${url}/api/nodes/gpu-node-b/faults`, {
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
    const snap = (await (await fetch(`${url}/api/nodes/dra-node/node`)).json()) as NodeSnapshot;
    const held = Object.values(snap.dra!.devices).find(
      (d) => d.sourceId !== null && d.allocations.some((a) => a.pods.length > 0),
    )!;
    const pod = held.allocations.find((a) => a.pods.length > 0)!.pods[0]!;
    const [ns, name] = pod.split('/') as [string, string];
    const res = await fetch(`${url}/api/nodes/dra-node/faults`, {
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
    process.kill(-child.pid!, 'SIGINT');
    const { code } = await exited;
    assert.equal(code, 0, output);
    assert.match(output, /\[plugboard\] stopped/);
    assert.equal(groupAlive(child.pid!), false, 'no process of the group is left');
    assert.equal(existsSync(stateDir), false);
    const left = await run('pgrep', ['-f', stateDir]).catch(() => ({ stdout: '' }));
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
