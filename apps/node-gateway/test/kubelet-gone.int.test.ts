// Registration follows the kubelet, end to end over real sockets: kubelet-sim stops (its kubelet.sock
// gone, every ListAndWatch stream closed) and the gateway's plugins leave `registered` within a
// second — snapshot phase, plugboard_device_plugin_registered 0, /readyz still 200 naming them
// (docs/API.md#readiness-get-readyz), an event in the ring, the API-server numbers marked stale — then a new
// kubelet-sim on the same directories takes them back.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { gatewayDocument, simNode, type SimNode } from '@plugboard/testbed';
import { parseGatewayConfig, startGateway } from '../src/index.js';
import type { JsonPatchOp, NodeSnapshot } from '@plugboard/api';
import { connectStream, waitFor, type Msg, type StreamClient } from './helpers.js';

const GPU = 'plugboard.example/gpu';
const NIC = 'plugboard.example/nic';
const silent = pino({ level: 'silent' });

const dir = mkdtempSync(join(tmpdir(), 'pb-gone-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** kubelet-sim for the node `gone-node` in `<dir>/gone-node`: a second one takes the same directories. */
const goneNode = (listen = '127.0.0.1:0'): Promise<SimNode> => simNode(dir, 'gone-node', { sim: { listen } });

const snapshotOf = async (url: string): Promise<NodeSnapshot> =>
  (await (await fetch(`${url}/api/v1/node`)).json()) as NodeSnapshot;

/** plugboard_device_plugin_registered per resource, as /metrics says. */
async function registeredGauge(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^plugboard_device_plugin_registered\{([^}]*)\} (\S+)$/gm)) {
    const resource = /resource="([^"]+)"/.exec(m[1]!)?.[1];
    if (resource) out[resource] = Number(m[2]);
  }
  return out;
}

/** Whether a patch sets the registration phase of `resource` to `phase` (whole object or the field). */
function setsPhase(m: Msg, resource: string, phase: string): boolean {
  if (m.type !== 'patch') return false;
  const base = `/resources/${resource.replace(/\//g, '~1')}/registration`;
  return m.ops.some(
    (op: JsonPatchOp) =>
      (op.op === 'replace' || op.op === 'add') &&
      ((op.path === `${base}/phase` && op.value === phase) ||
        (op.path === base && (op.value as { phase?: string } | undefined)?.phase === phase)),
  );
}

/** Resolves on the patch by which every one of `resources` has had its phase set to `phase`. */
function allSetPhase(stream: StreamClient, resources: string[], phase: string): Promise<Msg> {
  const left = new Set(resources);
  return stream.next(
    (m) => {
      for (const r of left) if (setsPhase(m, r, phase)) left.delete(r);
      return left.size === 0;
    },
    `${resources.join(', ')} ${phase}`,
  );
}

test('kubelet-sim stops: plugins leave registered when the kubelet goes, gauge 0, /readyz says why; back when it returns', async () => {
  let node = await goneNode();
  const port = new URL(node.sim.url).port;
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, 'gone-token-0123456789abcdef\n');
  const gw = await startGateway(
    parseGatewayConfig(
      gatewayDocument(node, {
        resources: [
          { name: GPU, simulated: { count: 4, numaNodes: [0, 1] } },
          { name: NIC, simulated: { count: 8, numaNodes: [0, 1] } },
        ],
        stateDir: join(dir, 'gateway-state'),
        tokenFile,
        faults: false,
        gateway: {
          podResources: { pollIntervalMs: 200, maxBackoffMs: 400 },
          kube: { maxBackoffMs: 400 },
        },
      }),
    ),
    { logger: silent },
  );
  after(async () => {
    await gw.stop();
    await node.remove();
  });
  await waitFor('plugins registered', async () => (await fetch(`${gw.url}/readyz`)).status === 200, 10_000);
  // The API server's view of the Node carries the resources (the kubelet reported them).
  await waitFor('API server numbers', async () => {
    const s = await snapshotOf(gw.url);
    return [GPU, NIC].every((r) => s.resources[r]?.apiServer?.capacity);
  });
  assert.deepEqual(await registeredGauge(gw.url), { [GPU]: 1, [NIC]: 1 });
  const stream = await connectStream(`${gw.url.replace('http', 'ws')}/api/v1/stream`);
  after(() => stream.close());
  await stream.next((m) => m.type === 'snapshot', 'snapshot');

  // --- the kubelet goes away
  await node.remove();
  await allSetPhase(stream, [GPU, NIC], 'waiting-for-kubelet');
  // No time bound here (a loaded machine stretches any): that the plugins reacted to the kubelet
  // going — not to a poll or a retry timer — is what the registration error below names.

  const s = await snapshotOf(gw.url);
  for (const r of [GPU, NIC]) {
    const reg = s.resources[r]!.registration;
    assert.equal(reg.phase, 'waiting-for-kubelet');
    assert.ok(reg.waitingSince);
    assert.match(reg.error ?? '', /closed the ListAndWatch stream|kubelet\.sock was removed/);
    // The API server keeps the Node's last status: shown, marked as the last report.
    assert.equal(s.resources[r]!.apiServer?.staleSince, reg.waitingSince);
    assert.ok(
      s.events.some(
        (e) =>
          e.kind === 'registration' && e.resource === r && /no longer held by the kubelet/.test(e.message),
      ),
      `an event for ${r} in the ring`,
    );
  }
  assert.deepEqual(await registeredGauge(gw.url), { [GPU]: 0, [NIC]: 0 });
  const ready = await fetch(`${gw.url}/readyz`);
  assert.equal(
    ready.status,
    200,
    'a gateway waiting for its kubelet stays ready (docs/API.md#readiness-get-readyz)',
  );
  const { detail } = (await ready.json()) as { detail: string };
  assert.match(detail, /not held by the kubelet right now/);
  assert.match(detail, new RegExp(`${GPU} \\(waiting-for-kubelet since `));
  const summary = (await (await fetch(`${gw.url}/api/v1/summary`)).json()) as {
    resources: Record<string, { registered: boolean; registration: string }>;
  };
  assert.deepEqual(summary.resources[GPU], {
    ...summary.resources[GPU],
    registered: false,
    registration: 'waiting-for-kubelet',
  });

  // --- a kubelet comes back on the same directories (and API port): it deletes the sockets
  node = await goneNode(`127.0.0.1:${port}`);
  await allSetPhase(stream, [GPU, NIC], 'registered');
  await waitFor('the new kubelet has the devices', () =>
    [GPU, NIC].every((r) => node.sim.state().resources[r]?.registered),
  );
  const back = await snapshotOf(gw.url);
  for (const r of [GPU, NIC]) {
    assert.equal(back.resources[r]!.registration.waitingSince, null);
    assert.equal(back.resources[r]!.registration.kubeletRestartsSeen, 1);
    assert.ok(
      back.events.some((e) => e.resource === r && /registered with the kubelet again/.test(e.message)),
    );
  }
  assert.deepEqual(await registeredGauge(gw.url), { [GPU]: 1, [NIC]: 1 });
  const readyAgain = (await (await fetch(`${gw.url}/readyz`)).json()) as { detail: string };
  assert.equal(readyAgain.detail, 'all plugins registered with the kubelet');
  await waitFor('API server numbers current again', async () => {
    const now = await snapshotOf(gw.url);
    return [GPU, NIC].every((r) => now.resources[r]?.apiServer?.staleSince === null);
  });
});
