// `claims` over fixture gateways: the table (phase, requests, devices, pods, health, the pending
// reason), -n, JSON, and a gateway that predates DRA support.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { draNode, FixtureGateway, fixtureContext, legacyNode } from '../../test/fixtures.js';
import { claimsCommand } from './claims.js';

describe('claims', () => {
  it("a prepared claim and a pending one with the scheduler's reason", async () => {
    const { ctx, out } = fixtureContext([new FixtureGateway(draNode())]);
    await claimsCommand(ctx, { node: null, namespace: null });
    assert.equal(
      out.stdout,
      [
        'NAMESPACE   NAME          NODE     PHASE      REQUESTS                       DEVICES   PODS      HEALTH    REASON',
        'ml          trainer-gpu   node-a   prepared   gpu:1 gpu.plugboard.example    gpu-0     trainer   Healthy   -',
        'ml          waiter-gpu    node-a   pending    gpus:4 gpu.plugboard.example   -         -         -         0/1 nodes are available: 1 cannot allocate all claims.',
        '',
      ].join('\n'),
    );
    assert.equal(out.stderr, '');
  });

  it('-n keeps one namespace; an empty answer is a note on stderr, not an error', async () => {
    const { ctx, out } = fixtureContext([new FixtureGateway(draNode())]);
    await claimsCommand(ctx, { node: null, namespace: 'batch' });
    assert.equal(out.stdout, '');
    assert.equal(out.stderr, 'No claims found in namespace batch.\n');
  });

  it('sorts by namespace and name across nodes, and says which gateway has no DRA data', async () => {
    const { ctx, out } = fixtureContext(
      [
        new FixtureGateway(draNode('node-c')),
        new FixtureGateway(legacyNode()),
        new FixtureGateway(draNode('node-a')),
      ],
      'json',
    );
    await claimsCommand(ctx, { node: null, namespace: 'ml' });
    const { items } = JSON.parse(out.stdout) as { items: { node: string; key: string; phase: string }[] };
    assert.deepEqual(
      items.map((c) => [c.key, c.node, c.phase]),
      [
        ['ml/trainer-gpu', 'node-a', 'prepared'],
        ['ml/trainer-gpu', 'node-c', 'prepared'],
        ['ml/waiter-gpu', 'node-a', 'pending'],
        ['ml/waiter-gpu', 'node-c', 'pending'],
      ],
    );
    assert.equal(
      out.stderr,
      'warning: no DRA data from this gateway: http://node-b.test (node node-b; it predates DRA support)\n',
    );
  });
});
