// kubectl-plugboard against a real gateway running a real DRA driver beside a device plugin, on
// kubelet-sim (plugin watcher, scheduler, ResourceClaim controller, device taint eviction): `claims`
// lists a prepared claim and a pending one with the scheduler's reason, `devices` lists DRA devices
// beside device-plugin ones, `fault inject --taint NoExecute` evicts the pod using the device (seen
// in `pods` and `claims`), `fault list` shows the taint, `fault clear` heals, and `watch` prints the
// DRA changes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EXIT_CODES } from '../src/errors.js';
import {
  claimPod,
  cli,
  createClaimTemplate,
  createDeviceClass,
  DRA_DRIVER,
  GPU,
  json,
  startNode,
  stopNodes,
  waitForSnapshot,
  type TestNode,
} from './helpers.js';

const root = mkdtempSync(join(tmpdir(), 'kubectl-plugboard-dra-'));
const NS = 'ml';
let node: TestNode;
let gw: string[];
/** The claim generated for the trainer pod, and the device it was given. */
let trainerClaim: string;
let trainerDevice: string;

before(async () => {
  node = await startNode(root, 'node-a', { faults: true, dra: true });
  gw = ['--gateway', node.gateway.url];
  await createDeviceClass(node);
  await createClaimTemplate(node, NS, 'one-gpu', 1);
  await createClaimTemplate(node, NS, 'six-gpus', 6);
  await node.sim.admitPod(claimPod(NS, 'trainer', 'one-gpu', 'node-a'));
  await node.sim.admitPod(claimPod(NS, 'waiter', 'six-gpus', 'node-a'));
  const snap = await waitForSnapshot(
    node,
    (s) => {
      const claims = Object.values(s.dra?.claims ?? {});
      return (
        claims.some((c) => c.reservedFor.includes(`${NS}/trainer`) && c.phase === 'prepared') &&
        claims.some(
          (c) => c.owner?.pod === `${NS}/waiter` && c.phase === 'pending' && c.pendingReason !== null,
        )
      );
    },
    'a prepared claim for the trainer and a pending one with a reason for the waiter',
  );
  const claim = Object.values(snap.dra!.claims).find((c) => c.reservedFor.includes(`${NS}/trainer`))!;
  trainerClaim = claim.name;
  trainerDevice = claim.devices[0]!.device;
});

after(async () => {
  if (node) await stopNodes([node]);
  rmSync(root, { recursive: true, force: true });
});

describe('DRA through kubectl plugboard', () => {
  it('claims: the prepared claim with its device and pod, the pending one with the reason', async () => {
    const r = await cli(['claims', ...gw]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^NAMESPACE +NAME +NODE +PHASE +REQUESTS +DEVICES +PODS +HEALTH +REASON$/);
    const row = (pod: string) => lines.find((l) => new RegExp(`^${NS} +${pod}-gpus-`).test(l));
    assert.match(
      row('trainer') ?? '',
      new RegExp(
        `node-a +prepared +gpus:1 ${DRA_DRIVER.replaceAll('.', '\\.')} +${trainerDevice} +trainer +`,
      ),
      r.stdout,
    );
    assert.match(
      row('waiter') ?? '',
      /node-a +pending +gpus:6 \S+ +- +- +- +.*cannot allocate all claims/,
      r.stdout,
    );

    const { items } = json<{
      items: { node: string; name: string; phase: string; pendingReason: string | null }[];
    }>(await cli(['claims', '-n', NS, '-o', 'json', ...gw]));
    assert.deepEqual(items.map((c) => [c.node, c.phase]).sort(), [
      ['node-a', 'pending'],
      ['node-a', 'prepared'],
    ]);
    const other = await cli(['claims', '-n', 'elsewhere', ...gw]);
    assert.equal(other.code, 0);
    assert.equal(other.stdout, '');
    assert.match(other.stderr, /No claims found in namespace elsewhere/);
  });

  it('devices: DRA devices beside the device plugin, the allocated one with its claim and pod', async () => {
    const r = await cli(['devices', ...gw]);
    assert.equal(r.code, 0, r.stderr);
    const rows = r.stdout.trimEnd().split('\n').slice(1);
    assert.equal(
      rows.filter((l) => /^node-a +device-plugin +plugin +plugboard\.example\/gpu /.test(l)).length,
      4,
    );
    const dra = rows.filter((l) => /^node-a +DRA +plugin +gpu\.plugboard\.example +node-a\/gpu-\d /.test(l));
    assert.equal(dra.length, 4, r.stdout);
    const held = dra.find((l) => l.includes(`node-a/${trainerDevice} `))!;
    assert.match(held, new RegExp(`Healthy +Healthy +\\d +- +- +${NS}/${trainerClaim} +${NS}/trainer `));

    const only = json<{ items: { api: string; key: string }[] }>(
      await cli(['devices', '--api', 'dra', '-o', 'json', ...gw]),
    );
    assert.deepEqual(
      only.items.map((d) => [d.api, d.key]),
      [0, 1, 2, 3].map((i) => ['DRA', `${DRA_DRIVER}/node-a/gpu-${i}`]),
    );
    const pods = await cli(['pods', ...gw]);
    assert.match(
      pods.stdout,
      new RegExp(`^node-a +${NS} +trainer +main +gpu\\.plugboard\\.example +${trainerDevice}\\(\\d\\) `, 'm'),
    );
    // The waiter is not bound to the node yet: not the node's pod (its claim is in `claims`).
    assert.doesNotMatch(pods.stdout, / waiter /);
  });

  it('nodes: the DRA driver after the resources, with the pending claim counted', async () => {
    const r = await cli(['nodes', ...gw]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /\n\nNODE +DRA DRIVER +PUBLISHED .*\nnode-a +gpu\.plugboard\.example +4 +4 +1 +3 +0 +0 +1\n$/,
    );
  });

  it('fault inject --taint is refused for a device plugin resource, before anything is sent', async () => {
    const r = await cli([
      'fault',
      'inject',
      '--resource',
      GPU,
      '--device',
      'gpu-0',
      '--taint',
      'NoExecute',
      ...gw,
    ]);
    assert.equal(r.code, EXIT_CODES.usage, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(`"${GPU}" is not a DRA driver on node-a.*DRA drivers there: ${DRA_DRIVER}`),
    );
    assert.deepEqual(Object.keys((await node.gateway.snapshot()).faults), []);
  });

  it('fault inject --taint NoExecute evicts the pod using the device; fault list shows the taint; clear heals', async () => {
    const injected = await cli([
      'fault',
      'inject',
      '--resource',
      DRA_DRIVER,
      '--device',
      trainerDevice,
      '--reason',
      'drill',
      '--taint',
      'NoExecute',
      '-o',
      'json',
      ...gw,
    ]);
    assert.equal(injected.code, 0, injected.stderr);
    const fault = json<{ id: string; taint: string; resource: string }>(injected);
    assert.deepEqual([fault.resource, fault.taint], [DRA_DRIVER, 'NoExecute']);

    const key = `${DRA_DRIVER}/node-a/${trainerDevice}`;
    await waitForSnapshot(
      node,
      (s) =>
        s.pods[`${NS}/trainer`] === undefined &&
        s.dra?.devices[key]?.taints.some((t) => t.effect === 'NoExecute') === true,
      'the trainer pod evicted by the NoExecute taint',
      30_000,
    );
    const pods = await cli(['pods', ...gw]);
    assert.doesNotMatch(pods.stdout, / trainer /, 'the evicted pod is gone');
    const claims = await cli(['claims', ...gw]);
    assert.ok(
      !claims.stdout.includes(trainerClaim) ||
        new RegExp(`${trainerClaim} .*deleting$`, 'm').test(claims.stdout),
      `the evicted pod's claim is gone or being deleted:\n${claims.stdout}`,
    );
    const devices = await cli(['devices', '--api', 'dra', '--unhealthy', ...gw]);
    assert.match(
      devices.stdout,
      new RegExp(`node-a/${trainerDevice} +Unhealthy +Unhealthy +\\d +simulated \\(active\\) +NoExecute `),
    );
    const list = await cli(['fault', 'list', ...gw]);
    assert.match(
      list.stdout,
      new RegExp(
        `^node-a +${fault.id} +${DRA_DRIVER.replaceAll('.', '\\.')} +${trainerDevice} +active +NoExecute `,
        'm',
      ),
    );

    const cleared = await cli(['fault', 'clear', fault.id, ...gw]);
    assert.equal(cleared.code, 0, cleared.stderr);
    await waitForSnapshot(
      node,
      (s) => s.dra?.devices[key]?.health === 'Healthy' && s.dra.devices[key].taints.length === 0,
      'the device healthy and untainted again',
    );
    const healed = await cli(['devices', '--api', 'dra', '--unhealthy', ...gw]);
    assert.equal(healed.stdout, '');
  });

  it('watch -o json: a DRA fault and its clearing as changes of that device', async () => {
    const abort = new AbortController();
    const free = 'gpu-3' === trainerDevice ? 'gpu-2' : 'gpu-3';
    const key = `${DRA_DRIVER}/node-a/${free}`;
    type Line = { dra?: { changes: { key: string; field: string; to: string | null }[] } };
    let lines: Line[] = [];
    // The fault goes in over the gateway's REST API: its id arrives with the answer, which may come
    // after the stream has shown the fault, so the clearing waits for it.
    let added: Promise<{ id: string }> | null = null;
    const clearing: Promise<void>[] = [];
    const seen = (field: string, to: string) =>
      lines.some((l) => l.dra?.changes.some((c) => c.key === key && c.field === field && c.to === to));
    const running = cli(['watch', '-o', 'json', ...gw], {
      signal: abort.signal,
      onStdout: (all) => {
        lines = all
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l) as Line);
        if (!added && lines.length > 0) {
          added = node.gateway.faults.add({
            resource: DRA_DRIVER,
            deviceId: free,
            reason: 'watch',
            ttlSeconds: null,
            taint: 'NoSchedule',
          });
        }
        if (added && clearing.length === 0 && seen('taints', 'NoSchedule') && seen('health', 'Unhealthy')) {
          clearing.push(added.then(({ id }) => node.gateway.faults.remove(id)));
        }
        if (seen('health', 'Healthy') && seen('taints', '-')) abort.abort();
      },
    });
    const deadline = setTimeout(() => abort.abort(), 30_000);
    const r = await running;
    clearTimeout(deadline);
    await Promise.all(clearing);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(seen('health', 'Unhealthy') && seen('taints', 'NoSchedule'), JSON.stringify(lines));
    assert.ok(seen('health', 'Healthy') && seen('taints', '-'), JSON.stringify(lines));
  });
});
