// `migration` over fixture gateways: a node whose device plugin serves plugboard.example/gpu, a node
// whose DRA driver serves it through the DeviceClass's extendedResourceName (a pod with its special
// claim), one that cannot read DeviceClasses, and one that predates the view; the table, the summary
// line (left to move), --resource and JSON.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ExtendedResourceView, NodeSnapshot } from '@plugboard/api';
import { DRIVER, draNode, FixtureGateway, fixtureContext, GPU, legacyNode } from '../../test/fixtures.js';
import { migrationCommand } from './migration.js';

const CLASS = 'gpu.plugboard.example';

function withViews(s: NodeSnapshot, views: ExtendedResourceView[]): NodeSnapshot {
  return { ...s, extendedResources: Object.fromEntries(views.map((v) => [v.name, v])) };
}

const viaPlugin = (node: string): NodeSnapshot =>
  withViews(draNode(node), [
    {
      name: GPU,
      servedBy: 'device-plugin',
      nodeStatus: { capacity: 2, allocatable: 2 },
      deviceClasses: [CLASS],
      deviceClass: CLASS,
      drivers: [],
      pods: [
        {
          pod: 'ml/legacy',
          container: 'main',
          count: 1,
          via: 'device-plugin',
          claim: null,
          request: null,
          devices: [`${GPU}/gpu-0`],
        },
      ],
    },
  ]);

const viaDra = (node: string): NodeSnapshot =>
  withViews(draNode(node), [
    {
      name: GPU,
      servedBy: 'dra',
      nodeStatus: null,
      deviceClasses: [CLASS],
      deviceClass: CLASS,
      drivers: [DRIVER],
      pods: [
        {
          pod: 'render/frame',
          container: 'render',
          count: 1,
          via: 'dra',
          claim: 'render/frame-extended-resources-abcde',
          request: 'container-0-request-0',
          devices: [`${DRIVER}/${node}/gpu-3`],
        },
        {
          pod: 'render/new',
          container: 'render',
          count: 1,
          via: 'unknown',
          claim: null,
          request: null,
          devices: [],
        },
      ],
    },
  ]);

describe('migration', () => {
  it('per node: device plugin or DRA, the pods each way with the special claim, and what is left to move', async () => {
    const { ctx, out } = fixtureContext([
      new FixtureGateway(viaDra('dra-node')),
      new FixtureGateway(viaPlugin('gpu-a')),
    ]);
    await migrationCommand(ctx, { node: null, resource: null });
    assert.equal(
      out.stdout,
      [
        'RESOURCE                NODE       SERVED BY       DEVICE CLASS            DRIVERS                 DEVICE-PLUGIN PODS   DRA PODS → SPECIAL CLAIM                           LEFT TO MOVE',
        'plugboard.example/gpu   dra-node   dra             gpu.plugboard.example   gpu.plugboard.example   -                    render/frame(1) → frame-extended-resources-abcde   -',
        'plugboard.example/gpu   gpu-a      device-plugin   gpu.plugboard.example   -                       ml/legacy(1)         -                                                  1 pod',
        'plugboard.example/gpu: device plugin on gpu-a; DRA on dra-node; left to move: 1 pod on 1 node (1 container not holding it yet)',
        '',
      ].join('\n'),
    );
    assert.equal(out.stderr, '');
  });

  it('says "unknown" where a gateway cannot read DeviceClasses, and which gateway predates the view', async () => {
    const blind = viaPlugin('gpu-b');
    blind.extendedResources![GPU] = {
      ...blind.extendedResources![GPU]!,
      deviceClasses: null,
      deviceClass: null,
    };
    const { ctx, out } = fixtureContext(
      [new FixtureGateway(blind), new FixtureGateway(legacyNode('old'))],
      'json',
    );
    await migrationCommand(ctx, { node: null, resource: GPU });
    const { items } = JSON.parse(out.stdout) as { items: (ExtendedResourceView & { node: string })[] };
    assert.deepEqual(
      items.map((i) => [i.node, i.servedBy, i.deviceClasses]),
      [['gpu-b', 'device-plugin', null]],
    );
    assert.equal(
      out.stderr,
      'warning: no extended-resource data from this gateway: http://old.test (node old; it predates the migration view)\n',
    );
  });

  it('--resource keeps one name; none known is a note on stderr', async () => {
    const { ctx, out } = fixtureContext([new FixtureGateway(viaPlugin('gpu-a'))]);
    await migrationCommand(ctx, { node: null, resource: 'example.com/fpga' });
    assert.equal(out.stdout, '');
    assert.equal(out.stderr, 'No node knows example.com/fpga.\n');
  });
});
