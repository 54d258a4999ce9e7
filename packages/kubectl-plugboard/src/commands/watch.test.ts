// `watch` over a fixture gateway's stream: the DRA tables beside the device-plugin one, a line per
// DRA change (device health, the kubelet's view, taints, fault; claim phases) in the table and in
// the JSON lines, and a gateway without DRA data printing what it always printed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonPatchOp } from '@plugboard/api';
import { draNode, DRIVER, FixtureGateway, fixtureContext, legacyNode } from '../../test/fixtures.js';
import { watchCommand, watchTables } from './watch.js';

const gpu1 = `/dra/devices/${DRIVER.replaceAll('/', '~1')}~1node-a~1gpu-1`;
const heal: JsonPatchOp[] = [
  { op: 'replace', path: `${gpu1}/health`, value: 'Healthy' },
  { op: 'replace', path: `${gpu1}/reason`, value: 'fault cleared' },
  { op: 'replace', path: `${gpu1}/kubeletHealth`, value: 'Healthy' },
  { op: 'replace', path: `${gpu1}/taints`, value: [] },
  { op: 'replace', path: `${gpu1}/fault`, value: null },
  { op: 'replace', path: '/dra/claims/ml~1waiter-gpu/phase', value: 'reserved' },
];

/** Runs watch on `gateway` until `done(stdout)` holds (or 10 s pass), sending `then` once `ready(stdout)`. */
async function watchUntil(
  gateway: FixtureGateway,
  output: 'table' | 'json',
  ready: (all: string) => boolean,
  then: () => void,
  done: (all: string) => boolean,
) {
  const abort = new AbortController();
  let sent = false;
  const { ctx, out } = fixtureContext([gateway], output, {
    signal: abort.signal,
    onStdout: (all) => {
      if (!sent && ready(all)) {
        sent = true;
        then();
      } else if (sent && done(all)) abort.abort();
    },
  });
  const deadline = setTimeout(() => abort.abort(), 10_000);
  await watchCommand(ctx, { node: null, timeoutMs: null });
  clearTimeout(deadline);
  return out;
}

describe('watch', () => {
  it('prints the DRA drivers and claims tables beside the device-plugin table', () => {
    assert.equal(
      watchTables([legacyNode(), draNode()]),
      [
        'NODE     RESOURCE                CAPACITY   ALLOCATABLE   ALLOCATED   UNHEALTHY   REGISTERED   FAULTS',
        'node-a   plugboard.example/gpu   2          2             1           0           yes          1',
        'node-b   plugboard.example/gpu   2          2             1           0           yes          0',
        '',
        'NODE     DRA DRIVER              PUBLISHED   USABLE   ALLOCATED   FREE   UNHEALTHY   TAINTED   REGISTERED',
        'node-a   gpu.plugboard.example   3           2        1           1      1           1         yes',
        '',
        'NODE     CLAIM            PHASE      DEVICES   HEALTH    REASON',
        'node-a   ml/trainer-gpu   prepared   gpu-0     Healthy   -',
        'node-a   ml/waiter-gpu    pending    -         -         0/1 nodes are available: 1 cannot allocate all claims.',
        '',
      ].join('\n'),
    );
  });

  it('a gateway without DRA data: the device-plugin table only, as before', () => {
    assert.doesNotMatch(watchTables([legacyNode()]), /DRA|CLAIM/);
  });

  it('table: a line per DRA device and claim change under the tables', async () => {
    const g = new FixtureGateway(draNode());
    const out = await watchUntil(
      g,
      'table',
      (all) => all.includes('CLAIM'),
      () => g.push({ type: 'patch', seq: 2, ops: heal }),
      (all) => all.includes('phase pending → reserved'),
    );
    const lines = out.stdout.split('\n').filter((l) => / node-a (device|claim) /.test(l));
    assert.deepEqual(
      lines.map((l) => l.replace(/^\d\d:\d\d:\d\d /, '')),
      [
        `node-a device ${DRIVER}/node-a/gpu-1: health Unhealthy → Healthy (fault cleared)`,
        `node-a device ${DRIVER}/node-a/gpu-1: kubelet told Unhealthy → Healthy`,
        `node-a device ${DRIVER}/node-a/gpu-1: taints NoExecute → -`,
        `node-a device ${DRIVER}/node-a/gpu-1: fault active → -`,
        'node-a claim ml/waiter-gpu: phase pending → reserved',
      ],
    );
    assert.match(out.stdout, /node-a +ml\/waiter-gpu +reserved/, 'the claims table was redrawn');
  });

  it('-o json: a line per node change with the DRA counts, claim phases and what changed', async () => {
    const g = new FixtureGateway(draNode());
    const out = await watchUntil(
      g,
      'json',
      (all) => all.split('\n').length > 1,
      () => {
        // A patch that changes nothing the line shows (the timestamp) prints nothing.
        g.push({ type: 'patch', seq: 2, ops: [{ op: 'replace', path: '/updatedAt', value: 'later' }] });
        g.push({ type: 'patch', seq: 3, ops: heal });
      },
      (all) => all.split('\n').length > 2,
    );
    const lines = out.stdout
      .trimEnd()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            node: { nodeName: string; activeFaults: number };
            dra: {
              drivers: Record<string, { tainted: number; registration: string }>;
              claims: Record<string, string>;
              changes: { key: string; field: string; to: string }[];
            };
          },
      );
    assert.equal(lines.length, 2);
    const [first, second] = lines as [(typeof lines)[number], (typeof lines)[number]];
    assert.equal(first.node.nodeName, 'node-a');
    assert.deepEqual(first.dra.drivers[DRIVER], {
      published: 3,
      usable: 2,
      allocated: 1,
      free: 1,
      unhealthy: 1,
      tainted: 1,
      registration: 'registered',
    });
    assert.deepEqual(first.dra.claims, { 'ml/trainer-gpu': 'prepared', 'ml/waiter-gpu': 'pending' });
    assert.deepEqual(first.dra.changes, []);
    assert.deepEqual(
      second.dra.changes.map((c) => [c.key.split('/').pop(), c.field, c.to]),
      [
        ['gpu-1', 'health', 'Healthy'],
        ['gpu-1', 'kubeletHealth', 'Healthy'],
        ['gpu-1', 'taints', '-'],
        ['gpu-1', 'fault', '-'],
        ['waiter-gpu', 'phase', 'reserved'],
      ],
    );
    assert.equal(second.dra.claims['ml/waiter-gpu'], 'reserved');
  });
});
