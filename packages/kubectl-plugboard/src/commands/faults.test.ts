// Faults on DRA devices over fixture gateways: --taint goes to the gateway only for a DRA driver of
// that node (a usage error otherwise, before anything is sent), and `fault list` shows the taint.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { draNode, DRIVER, FixtureGateway, fixtureContext, GPU, legacyNode } from '../../test/fixtures.js';
import { CliError } from '../errors.js';
import { faultInjectCommand, faultListCommand } from './faults.js';

const inject = (resource: string, taint: 'NoSchedule' | 'NoExecute' | null) => ({
  node: null,
  resource,
  device: 'gpu-2',
  reason: 'drill',
  ttlSeconds: null,
  taint,
});
const posts = (g: FixtureGateway) => g.sent.filter((s) => s.req.method === 'POST');

describe('fault inject --taint', () => {
  it('sends the taint for a DRA driver of the node and says so', async () => {
    const g = new FixtureGateway(draNode());
    const { ctx, out } = fixtureContext([g]);
    await faultInjectCommand(ctx, inject(DRIVER, 'NoExecute'));
    assert.deepEqual(
      posts(g).map((p) => JSON.parse(p.req.body!) as unknown),
      [{ resource: DRIVER, deviceId: 'gpu-2', reason: 'drill', taint: 'NoExecute' }],
    );
    assert.ok(posts(g)[0]!.req.mutation);
    assert.equal(
      out.stdout,
      `fault f-new injected: ${DRIVER} gpu-2 on node-a, tainted NoExecute (until cleared)\n`,
    );
  });

  it('without --taint the body has no taint (health only), for either API', async () => {
    const g = new FixtureGateway(draNode());
    const { ctx } = fixtureContext([g]);
    await faultInjectCommand(ctx, inject(DRIVER, null));
    await faultInjectCommand(ctx, inject(GPU, null));
    assert.deepEqual(
      posts(g).map((p) => (JSON.parse(p.req.body!) as { taint?: string }).taint),
      [undefined, undefined],
    );
    assert.ok(!g.sent.some((s) => s.path === '/api/v1/node'), 'no snapshot read without --taint');
  });

  it('is a usage error for a device plugin resource, naming the DRA drivers there; nothing is sent', async () => {
    const g = new FixtureGateway(draNode());
    const { ctx } = fixtureContext([g]);
    await assert.rejects(
      faultInjectCommand(ctx, inject(GPU, 'NoSchedule')),
      (e: CliError) =>
        e.code === 'usage' &&
        e.message ===
          `fault inject --taint: "${GPU}" is not a DRA driver on node-a; --taint applies to DRA drivers only (DRA drivers there: ${DRIVER})`,
    );
    assert.deepEqual(posts(g), []);
  });

  it('is a usage error against a gateway without DRA data', async () => {
    const g = new FixtureGateway(legacyNode());
    const { ctx } = fixtureContext([g]);
    await assert.rejects(
      faultInjectCommand(ctx, inject(DRIVER, 'NoExecute')),
      (e: CliError) =>
        e.code === 'usage' && /no DRA data from this gateway: http:\/\/node-b\.test/.test(e.message),
    );
    assert.deepEqual(posts(g), []);
  });
});

describe('fault list', () => {
  it('shows the taint of a DRA fault', async () => {
    const { ctx, out } = fixtureContext([new FixtureGateway(draNode())]);
    await faultListCommand(ctx, { node: null, resource: null });
    assert.equal(
      out.stdout,
      [
        'NODE     ID    RESOURCE                DEVICE   STATE    TAINT       AGE   EXPIRES   SCENARIO   REASON   STATE REASON',
        'node-a   f-1   gpu.plugboard.example   gpu-1    active   NoExecute   2m    never     -          drill    -',
        '',
      ].join('\n'),
    );
  });
});
