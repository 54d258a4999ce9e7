// `devices` and `pods` over fixture gateways: device-plugin and DRA devices side by side with the
// API column, the --api/--resource/--unhealthy filters, a gateway without DRA data, DRA pods.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { draNode, DRIVER, FixtureGateway, fixtureContext, GPU, legacyNode } from '../../test/fixtures.js';
import { CliError } from '../errors.js';
import type { DeviceApi } from '../dra.js';
import { devicesCommand, nodesCommand, podsCommand } from './read.js';

const gateways = () => [new FixtureGateway(draNode()), new FixtureGateway(legacyNode())];

async function devices(
  o: { resource?: string; unhealthy?: boolean; api?: DeviceApi; node?: string },
  output: 'table' | 'json' = 'table',
) {
  const { ctx, out } = fixtureContext(gateways(), output);
  await devicesCommand(ctx, {
    node: o.node ?? null,
    resource: o.resource ?? null,
    unhealthy: o.unhealthy ?? false,
    api: o.api ?? null,
  });
  return out;
}

describe('devices', () => {
  it('lists DRA devices beside device-plugin ones: API, pool/device, kubelet view, taints, fault, claim, pod', async () => {
    const out = await devices({ node: 'node-a' });
    assert.equal(
      out.stdout,
      [
        'NODE     API             SERVED BY   RESOURCE                DEVICE         HEALTH      KUBELET     NUMA   FAULT                TAINTS      CLAIM            POD              SINCE   REASON',
        'node-a   device-plugin   plugin      plugboard.example/gpu   gpu-0          Healthy     Healthy     0      -                    -           -                ml/legacy/main   60m     -',
        'node-a   device-plugin   plugin      plugboard.example/gpu   gpu-1          Healthy     Healthy     1      -                    -           -                -                60m     -',
        'node-a   DRA             plugin      gpu.plugboard.example   node-a/gpu-0   Healthy     Healthy     0      -                    -           ml/trainer-gpu   ml/trainer       60m     -',
        'node-a   DRA             plugin      gpu.plugboard.example   node-a/gpu-1   Unhealthy   Unhealthy   1      simulated (active)   NoExecute   -                -                2m      drill',
        'node-a   DRA             plugin      gpu.plugboard.example   node-a/gpu-2   Healthy     -           1      -                    -           -                -                60m     -',
        '',
      ].join('\n'),
    );
    assert.equal(out.stderr, '');
  });

  it('orders DRA devices by number (gpu-2 before gpu-10)', async () => {
    const s = draNode();
    const gpu1 = s.dra!.devices[`${DRIVER}/node-a/gpu-1`]!;
    s.dra!.devices[`${DRIVER}/node-a/gpu-10`] = { ...gpu1, key: `${DRIVER}/node-a/gpu-10`, name: 'gpu-10' };
    const { ctx, out } = fixtureContext([new FixtureGateway(s)]);
    await devicesCommand(ctx, { node: null, resource: DRIVER, unhealthy: false, api: null });
    assert.deepEqual(
      out.stdout.split('\n').flatMap((l) => l.match(/node-a\/(gpu-\d+)/)?.[1] ?? []),
      ['gpu-0', 'gpu-1', 'gpu-2', 'gpu-10'],
    );
  });

  it('--api dra keeps the DRA devices and says which gateway has no DRA data; --api device-plugin the others', async () => {
    const dra = await devices({ api: 'DRA' });
    assert.deepEqual(
      dra.stdout
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((l) => l.split(/ +/).slice(0, 5).join(' ')),
      [
        'node-a DRA plugin gpu.plugboard.example node-a/gpu-0',
        'node-a DRA plugin gpu.plugboard.example node-a/gpu-1',
        'node-a DRA plugin gpu.plugboard.example node-a/gpu-2',
      ],
    );
    assert.equal(
      dra.stderr,
      'warning: no DRA data from this gateway: http://node-b.test (node node-b; it predates DRA support)\n',
    );
    const plugin = await devices({ api: 'device-plugin' });
    assert.equal(plugin.stdout.trimEnd().split('\n').length, 5);
    assert.doesNotMatch(plugin.stdout, /DRA/);
    assert.equal(plugin.stderr, '', 'no DRA asked for, nothing to warn about');
    assert.equal((await devices({})).stderr, '', 'nor when both APIs are listed');
  });

  it('--resource takes a DRA driver; --unhealthy keeps the unhealthy DRA device', async () => {
    const out = await devices({ resource: DRIVER, unhealthy: true });
    const rows = out.stdout.trimEnd().split('\n').slice(1);
    assert.equal(rows.length, 1);
    assert.match(rows[0]!, /^node-a +DRA +plugin +gpu\.plugboard\.example +node-a\/gpu-1 +Unhealthy/);
  });

  it('-o json: each device is the gateway document with node and api', async () => {
    const { items } = JSON.parse((await devices({ node: 'node-a' }, 'json')).stdout) as {
      items: { node: string; api: string; key: string; taints?: { effect: string }[] }[];
    };
    assert.deepEqual(
      items.map((i) => [i.api, i.key]),
      [
        ['device-plugin', `${GPU}/gpu-0`],
        ['device-plugin', `${GPU}/gpu-1`],
        ['DRA', `${DRIVER}/node-a/gpu-0`],
        ['DRA', `${DRIVER}/node-a/gpu-1`],
        ['DRA', `${DRIVER}/node-a/gpu-2`],
      ],
    );
    assert.equal(items[3]!.taints?.[0]?.effect, 'NoExecute');
  });

  it('not found: names the resources and DRA drivers there are, and the gateways without DRA data', async () => {
    await assert.rejects(
      devices({ resource: 'example.com/fpga' }),
      (e: CliError) =>
        e.code === 'not-found' &&
        e.message ===
          `no node serves resource "example.com/fpga"; resources: ${GPU}; DRA drivers: ${DRIVER} (no DRA data from node-b)`,
    );
    await assert.rejects(
      devices({ resource: GPU, api: 'DRA' }),
      (e: CliError) =>
        e.message === `no node serves DRA driver "${GPU}"; DRA drivers: ${DRIVER} (no DRA data from node-b)`,
    );
    await assert.rejects(
      devices({ resource: DRIVER, api: 'device-plugin' }),
      (e: CliError) => e.message === `no node serves resource "${DRIVER}"; resources: ${GPU}`,
    );
  });
});

describe('nodes', () => {
  it('DRA drivers in a table of their own after the resources; none from a gateway without DRA data', async () => {
    const { ctx, out } = fixtureContext(gateways());
    await nodesCommand(ctx, { node: null });
    const [resources, dra] = out.stdout.split('\n\n');
    assert.match(resources!, /^NODE +RESOURCE +CAPACITY/);
    assert.equal(resources!.trimEnd().split('\n').length, 3);
    assert.equal(
      dra,
      [
        'NODE     DRA DRIVER              PUBLISHED   USABLE   ALLOCATED   FREE   UNHEALTHY   TAINTED   PENDING CLAIMS',
        'node-a   gpu.plugboard.example   3           2        1           1      1           1         1',
        '',
      ].join('\n'),
    );
  });

  it('no DRA table when no gateway has DRA drivers, nor in JSON (the summaries carry `dra`)', async () => {
    const legacy = fixtureContext([new FixtureGateway(legacyNode())]);
    await nodesCommand(legacy.ctx, { node: null });
    assert.doesNotMatch(legacy.out.stdout, /DRA/);
    const doc = fixtureContext(gateways(), 'json');
    await nodesCommand(doc.ctx, { node: null });
    const { items } = JSON.parse(doc.out.stdout) as { items: { dra?: { pendingClaims: string[] } }[] };
    assert.deepEqual(
      items.map((i) => i.dra?.pendingClaims),
      [['ml/waiter-gpu'], undefined],
    );
  });
});

describe('observed resources (another device plugin on the node)', () => {
  const OBS = 'nvidia.com/gpu';
  const note = '1 of 2 unhealthy — the kubelet does not say which unless a pod holds them';
  function withObserved() {
    const s = legacyNode();
    const own = Object.values(s.resources)[0]!;
    const dev = s.devices[own.deviceKeys[0]!]!;
    s.resources[OBS] = {
      ...own,
      name: OBS,
      servedBy: 'device-plugin',
      observed: { unhealthy: 1, unhealthyNamed: 0, note },
      kubelet: { capacity: 2, allocatable: 1, allocated: 0, free: 1, healthy: 1, unhealthy: 1 },
      deviceKeys: [`${OBS}/nv-0`],
    };
    s.devices[`${OBS}/nv-0`] = {
      ...dev,
      key: `${OBS}/nv-0`,
      resource: OBS,
      id: 'nv-0',
      servedBy: 'device-plugin',
      allocation: null,
    };
    return s;
  }

  it('nodes and devices say who serves each resource, and nodes says what the kubelet does not report', async () => {
    const nodes = fixtureContext([new FixtureGateway(withObserved())]);
    await nodesCommand(nodes.ctx, { node: null });
    const [table, ...notes] = nodes.out.stdout.split('\n\n');
    const rows = table!.trimEnd().split('\n');
    assert.match(rows[0]!, /REGISTERED +SERVED BY +FAULTS/);
    assert.match(
      rows.find((l) => l.includes(OBS))!,
      / 2 +1 +0 +1 +yes +device-plugin /,
    );
    assert.match(
      rows.find((l) => l.includes(GPU))!,
      / plugin /,
    );
    assert.deepEqual(notes, [`Note: node-b ${OBS}: ${note}`]);

    const devs = fixtureContext([new FixtureGateway(withObserved())]);
    await devicesCommand(devs.ctx, { node: null, resource: OBS, unhealthy: false, api: null });
    assert.match(
      devs.out.stdout.split('\n')[1]!,
      /^node-b +device-plugin +device-plugin +nvidia\.com\/gpu +nv-0 /,
    );
  });
});

describe('pods', () => {
  it('DRA pods: the driver as the resource, devices with NUMA, a claim not prepared yet with its phase', async () => {
    const { ctx, out } = fixtureContext(gateways());
    await podsCommand(ctx, { node: 'node-a' });
    assert.equal(
      out.stdout,
      [
        'NODE     NAMESPACE   POD       CONTAINER   RESOURCE                DEVICES (NUMA)                ALIGNMENT       STATUS',
        'node-a   ml          legacy    main        plugboard.example/gpu   gpu-0(0)                      aligned:0       Running',
        'node-a   ml          trainer   main        gpu.plugboard.example   gpu-0(0)                      aligned:0       Running',
        'node-a   ml          waiter    -           -                       claim ml/waiter-gpu pending   no-preference   Pending',
        '',
      ].join('\n'),
    );
  });

  it('-o json: devices carry api and claim, pods their claims with phases', async () => {
    const { ctx, out } = fixtureContext(gateways(), 'json');
    await podsCommand(ctx, { node: 'node-a' });
    const { items } = JSON.parse(out.stdout) as {
      items: {
        name: string;
        claims: { name: string; claim: string; phase: string }[];
        containers: { devices: { api: string; resource: string; id: string; claim: string | null }[] }[];
      }[];
    };
    const trainer = items.find((p) => p.name === 'trainer')!;
    assert.deepEqual(trainer.containers[0]!.devices, [
      {
        api: 'DRA',
        resource: DRIVER,
        id: 'gpu-0',
        numaNodes: [0],
        health: 'Healthy',
        claim: 'ml/trainer-gpu',
      },
    ]);
    assert.deepEqual(
      trainer.claims.map((c) => [c.name, c.claim, c.phase]),
      [['gpu', 'ml/trainer-gpu', 'prepared']],
    );
    assert.deepEqual(items.find((p) => p.name === 'legacy')!.claims, []);
  });
});
