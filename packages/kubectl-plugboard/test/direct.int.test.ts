// kubectl-plugboard against real gateways reached directly (`--gateway URL`, the demo's mode): two
// simulated nodes, one with faults and a bearer token, one with faults disabled. Checks the output
// formats, the fault and scenario round trips through the real kubelet path, the live watch and
// the exit code of every failure class.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { EXIT_CODES } from '../src/errors.js';
import { cli, GPU, json, startNode, stopNodes, waitForSnapshot, type TestNode } from './helpers.js';

const TOKEN = 'kubectl-plugboard-test-token-0123456789';
const root = mkdtempSync(join(tmpdir(), 'kubectl-plugboard-'));
let a: TestNode;
let b: TestNode;
let both: string[];

before(async () => {
  [a, b] = await Promise.all([
    startNode(root, 'node-a', { faults: true, token: TOKEN }),
    startNode(root, 'node-b', { faults: false }),
  ]);
  both = ['--gateway', `${a.gateway.url},${b.gateway.url}`];
  await a.sim.admitPod({
    metadata: { name: 'trainer', namespace: 'ml' },
    spec: {
      containers: [
        {
          name: 'main',
          resources: { limits: { [GPU]: 2, cpu: '2', memory: '1Gi' }, requests: { cpu: '2', memory: '1Gi' } },
        },
      ],
    },
  });
  await waitForSnapshot(
    a,
    (s) => (s.pods['ml/trainer']?.containers[0]?.devices[GPU]?.length ?? 0) === 2,
    'the pod',
  );
});

after(async () => {
  await stopNodes([a, b]);
  rmSync(root, { recursive: true, force: true });
});

describe('usage', () => {
  it('prints help with the exit codes and exits 0', async () => {
    const r = await cli(['--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /kubectl plugboard devices/);
    assert.match(r.stdout, /4 {2}unauthenticated or forbidden/);
  });

  for (const [argv, pattern] of [
    [['frobnicate'], /unknown command "frobnicate"/],
    [['nodes', '--bogus'], /Unknown option '--bogus'/],
    [['nodes', '--unhealthy'], /nodes: --unhealthy does not apply/],
    [['devices', '-o', 'xml'], /--output xml: use table, json, yaml/],
    [['fault', 'inject', '--device', 'gpu-0'], /fault inject: --resource is required/],
    [
      ['fault', 'inject', '--resource', GPU, '--device', 'gpu-0', '--ttl', 'soon'],
      /--ttl soon: not a duration/,
    ],
    [['fault', 'clear'], /give at least one ID, or --all/],
    [['fault'], /fault: give a subcommand \(list, inject, clear\)/],
    [['scenario', 'run'], /exactly one FILE/],
    [['nodes', '--gateway', 'ftp://x'], /must be an http/],
    [['devices', '--api', 'cdi'], /--api cdi: use device-plugin or dra/],
    [['claims', '-n', 'ml', '-A'], /claims: give -n NAMESPACE or -A, not both/],
    [['devices', '-A'], /devices: --all-namespaces does not apply/],
    [
      ['nodes', '-n', 'a', '--gateway-namespace', 'b'],
      /-n and --gateway-namespace name different namespaces/,
    ],
    [
      ['fault', 'inject', '--resource', 'x', '--device', 'y', '--taint', 'noexecute'],
      /--taint noexecute: use NoSchedule or NoExecute/,
    ],
    [['devices', '--taint', 'NoExecute'], /devices: --taint does not apply/],
  ] as const) {
    it(`exits 2 for: ${argv.join(' ')}`, async () => {
      const r = await cli([...argv]);
      assert.equal(r.code, EXIT_CODES.usage, r.stderr);
      assert.match(r.stderr, pattern);
      assert.equal(r.stdout, '');
    });
  }
});

describe('reading', () => {
  it('nodes: a table row per node and resource, JSON and YAML documents', async () => {
    const table = await cli(['nodes', ...both]);
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^NODE +RESOURCE +CAPACITY +ALLOCATABLE +ALLOCATED +UNHEALTHY +REGISTERED/);
    assert.match(lines[1]!, new RegExp(`^node-a +${GPU.replace('.', '\\.')} +4 +4 +2 +0 +yes`));
    assert.match(lines[2]!, /^node-b +\S+ +4 +4 +0 +0 +yes/);

    const doc = json<{
      items: { nodeName: string; gateway: string; resources: Record<string, { allocated: number }> }[];
    }>(await cli(['nodes', '-o', 'json', ...both]));
    assert.deepEqual(
      doc.items.map((i) => [i.nodeName, i.gateway, i.resources[GPU]?.allocated]),
      [
        ['node-a', a.gateway.url, 2],
        ['node-b', b.gateway.url, 0],
      ],
    );
    const yaml = await cli(['nodes', '-o', 'yaml', '--node', 'node-b', ...both]);
    assert.equal((parse(yaml.stdout) as { items: { nodeName: string }[] }).items[0]?.nodeName, 'node-b');
  });

  it('devices: filters by node and resource, shows NUMA and the holder', async () => {
    const r = await cli(['devices', '--node', 'node-a', '--resource', GPU, '-o', 'json', ...both]);
    assert.equal(r.code, 0, r.stderr);
    const { items } = json<{
      items: { node: string; id: string; numaNodes: number[]; allocation: unknown }[];
    }>(r);
    assert.equal(items.length, 4);
    assert.ok(items.every((d) => d.node === 'node-a' && d.numaNodes.length === 1));
    assert.equal(items.filter((d) => d.allocation !== null).length, 2);
    const table = await cli(['devices', '--node', 'node-a', ...both]);
    assert.match(table.stdout, /ml\/trainer\/main/);
  });

  it('devices --unhealthy: nothing unhealthy is an empty list, not an error', async () => {
    const r = await cli(['devices', '--unhealthy', ...both]);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /No unhealthy devices/);
  });

  it('pods: pod → devices with their NUMA nodes and the alignment verdict', async () => {
    const r = await cli(['pods', '--node', 'node-a', '-o', 'json', ...both]);
    assert.equal(r.code, 0, r.stderr);
    const { items } = json<{
      items: {
        namespace: string;
        name: string;
        numaAlignment: { verdict: string };
        containers: { devices: { id: string; numaNodes: number[] }[] }[];
      }[];
    }>(r);
    assert.equal(items.length, 1);
    const pod = items[0]!;
    assert.equal(`${pod.namespace}/${pod.name}`, 'ml/trainer');
    const snap = await a.gateway.snapshot();
    const expected = snap.pods['ml/trainer']!.containers[0]!.devices[GPU]!.map((k) => ({
      id: snap.devices[k]!.id,
      numaNodes: snap.devices[k]!.numaNodes,
    }));
    assert.deepEqual(
      pod.containers[0]!.devices.map((d) => ({ id: d.id, numaNodes: d.numaNodes })),
      expected,
    );
    assert.equal(pod.numaAlignment.verdict, snap.pods['ml/trainer']!.numaAlignment.verdict);
    const table = await cli(['pods', ...both]);
    assert.match(
      table.stdout,
      new RegExp(
        `ml +trainer +main +\\S+ +${expected.map((d) => `${d.id}\\(${d.numaNodes.join(',')}\\)`).join(' ')}`,
      ),
    );
  });

  it('exits 3 for a node or resource nobody serves, naming what exists', async () => {
    const node = await cli(['devices', '--node', 'node-z', ...both]);
    assert.equal(node.code, EXIT_CODES['not-found']);
    assert.match(node.stderr, /no gateway serves node "node-z"; nodes: node-a, node-b/);
    const resource = await cli(['devices', '--resource', 'example.com/fpga', ...both]);
    assert.equal(resource.code, EXIT_CODES['not-found']);
    assert.match(resource.stderr, /resources: plugboard\.example\/gpu/);
  });

  it('exits 6 when a gateway cannot be reached, and prints what the others said', async () => {
    const dead = 'http://127.0.0.1:1';
    const alone = await cli(['nodes', '--gateway', dead]);
    assert.equal(alone.code, EXIT_CODES.unavailable);
    assert.match(alone.stderr, /cannot reach http:\/\/127\.0\.0\.1:1/);
    const partial = await cli(['nodes', '--gateway', `${a.gateway.url},${dead}`]);
    assert.equal(partial.code, EXIT_CODES.unavailable);
    assert.match(partial.stdout, /^node-a /m);
  });
});

describe('faults', () => {
  it('inject → the device goes unhealthy through the kubelet → list → clear, with the token', async () => {
    const env = { PLUGBOARD_TOKEN: TOKEN };
    const injected = await cli(
      [
        'fault',
        'inject',
        '--node',
        'node-a',
        '--resource',
        GPU,
        '--device',
        'gpu-3',
        '--reason',
        'drill',
        '--ttl',
        '10m',
        '-o',
        'json',
        ...both,
      ],
      { env },
    );
    assert.equal(injected.code, 0, injected.stderr);
    const fault = json<{ id: string; node: string; deviceId: string; expiresAt: string; state: string }>(
      injected,
    );
    assert.equal(fault.node, 'node-a');
    assert.equal(fault.state, 'active', 'the kubelet was told by the time the gateway answered');
    assert.equal(fault.deviceId, 'gpu-3');
    assert.ok(Date.parse(fault.expiresAt) - Date.now() > 9 * 60_000);

    await waitForSnapshot(a, (s) => s.resources[GPU]!.kubelet.allocatable === 3, 'allocatable to drop to 3');
    const unhealthy = await cli(['devices', '--unhealthy', '-o', 'json', ...both]);
    assert.deepEqual(
      json<{
        items: {
          node: string;
          id: string;
          faulted: boolean;
          fault: string;
          kubeletHealth: string;
          reason: string;
        }[];
      }>(unhealthy).items.map((d) => [d.node, d.id, d.faulted, d.fault, d.kubeletHealth, d.reason]),
      [['node-a', 'gpu-3', true, 'active', 'Unhealthy', 'drill']],
    );
    const table = await cli(['devices', '--unhealthy', ...both]);
    assert.match(table.stdout, /gpu-3 +Unhealthy +Unhealthy +\S+ +simulated \(active\)/);
    const list = await cli(['fault', 'list', ...both]);
    assert.match(
      list.stdout,
      new RegExp(`node-a +${fault.id} +${GPU.replace('.', '\\.')} +gpu-3 +active .*drill`),
    );

    const cleared = await cli(['fault', 'clear', fault.id, ...both], { env });
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.equal(cleared.stdout, `fault ${fault.id} cleared on node-a\n`);
    await waitForSnapshot(a, (s) => s.resources[GPU]!.kubelet.allocatable === 4, 'allocatable back to 4');
    const again = await cli(['fault', 'clear', fault.id, ...both], { env });
    assert.equal(again.code, EXIT_CODES['not-found']);
    assert.match(again.stderr, /no active fault/);
  });

  it('exits 4 without a token (401, with a hint), with a wrong one, and where faults are disabled', async () => {
    const inject = ['fault', 'inject', '--resource', GPU, '--device', 'gpu-0'];
    const none = await cli([...inject, '--gateway', a.gateway.url]);
    assert.equal(none.code, EXIT_CODES.unauthorized);
    assert.match(none.stderr, /HTTP 401.*no bearer token was sent/);
    const wrong = await cli([...inject, '--gateway', a.gateway.url, '--token', 'not-the-token-at-all']);
    assert.equal(wrong.code, EXIT_CODES.unauthorized);
    assert.match(wrong.stderr, /invalid bearer token \(HTTP 401\)/);
    const disabled = await cli([...inject, '--gateway', b.gateway.url]);
    assert.equal(disabled.code, EXIT_CODES.forbidden);
    assert.match(disabled.stderr, /fault injection is disabled on this gateway .*\(HTTP 403\)/);
    assert.equal(Object.keys((await a.gateway.snapshot()).faults).length, 0, 'nothing was injected');
  });

  it('exits 5 when the gateway rejects the request (unknown device), and 2 when the node is ambiguous', async () => {
    const r = await cli([
      'fault',
      'inject',
      '--resource',
      GPU,
      '--device',
      'gpu-99',
      '--gateway',
      a.gateway.url,
      '--token',
      TOKEN,
    ]);
    assert.equal(r.code, EXIT_CODES.rejected);
    assert.match(r.stderr, /unknown device "gpu-99"/);
    const ambiguous = await cli(['fault', 'inject', '--resource', GPU, '--device', 'gpu-0', ...both]);
    assert.equal(ambiguous.code, EXIT_CODES.usage);
    assert.match(ambiguous.stderr, /give --node NODE \(2 gateways found\)/);
  });
});

describe('scenarios', () => {
  it('runs a scenario file on the node its steps name, lists it, stops it', async () => {
    const file = join(root, 'scenario.yaml');
    writeFileSync(
      file,
      [
        'name: cli-drill',
        'ttlSeconds: 120',
        'steps:',
        '  - at: 0s',
        '    node: node-a',
        '    action: fail-devices',
        `    resource: ${GPU}`,
        '    deviceIds: [gpu-1]',
        '  - at: 1h',
        '    node: node-a',
        '    action: heal-all',
      ].join('\n'),
    );
    const env = { PLUGBOARD_TOKEN: TOKEN };
    const started = await cli(['scenario', 'run', file, '-o', 'json', ...both], { env });
    assert.equal(started.code, 0, started.stderr);
    const { items } = json<{ items: { node: string; id: string; name: string }[] }>(started);
    assert.deepEqual(
      items.map((i) => [i.node, i.name]),
      [['node-a', 'cli-drill']],
      'node-b is not asked',
    );
    await waitForSnapshot(a, (s) => s.devices[`${GPU}/gpu-1`]?.health === 'Unhealthy', 'gpu-1 to fail');

    const list = await cli(['scenario', 'list', ...both]);
    assert.match(list.stdout, new RegExp(`node-a +${items[0]!.id} +cli-drill +\\S+ +1/2 done +1`));
    const stopped = await cli(['scenario', 'stop', items[0]!.id, ...both], { env });
    assert.equal(stopped.code, 0, stopped.stderr);
    await waitForSnapshot(a, (s) => s.devices[`${GPU}/gpu-1`]?.health === 'Healthy', 'gpu-1 to heal');
    const missing = await cli(['scenario', 'stop', items[0]!.id, ...both], { env });
    assert.equal(missing.code, EXIT_CODES['not-found']);
  });

  it('exits 2 for an unreadable file and 3 for steps aimed at unknown nodes', async () => {
    const unreadable = await cli(['scenario', 'run', join(root, 'nope.yaml'), ...both]);
    assert.equal(unreadable.code, EXIT_CODES.usage);
    assert.match(unreadable.stderr, /ENOENT/);
    const file = join(root, 'elsewhere.yaml');
    writeFileSync(file, 'name: x\nsteps:\n  - at: 0s\n    node: node-q\n    action: heal-all\n');
    const r = await cli(['scenario', 'run', file, ...both], { env: { PLUGBOARD_TOKEN: TOKEN } });
    assert.equal(r.code, EXIT_CODES['not-found']);
    assert.match(r.stderr, /node-q, which no gateway serves/);
  });
});

describe('watch', () => {
  it('streams one JSON line per node change until stopped, and exits 0', async () => {
    const abort = new AbortController();
    let lines: { node: { nodeName: string; unhealthyDevices: number } }[] = [];
    let resolveSeen: () => void;
    const seen = new Promise<void>((resolve) => (resolveSeen = resolve));
    let injected = false;
    const injections: Promise<unknown>[] = [];
    const running = cli(['watch', '-o', 'json', ...both], {
      signal: abort.signal,
      onStdout: (all) => {
        lines = all
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l) as (typeof lines)[number]);
        const nodes = new Set(lines.map((l) => l.node.nodeName));
        if (!injected && nodes.size === 2) {
          injected = true;
          // Both snapshots are in: now change node-a and expect the patch to show up.
          injections.push(
            a.gateway.faults.add({
              resource: GPU,
              deviceId: 'gpu-2',
              reason: 'watch test',
              ttlSeconds: null,
            }),
          );
        }
        if (lines.some((l) => l.node.nodeName === 'node-a' && l.node.unhealthyDevices === 1)) resolveSeen();
      },
    });
    const deadline = setTimeout(() => abort.abort(), 10_000);
    await Promise.race([seen, new Promise((resolve) => abort.signal.addEventListener('abort', resolve))]);
    clearTimeout(deadline);
    assert.equal(abort.signal.aborted, false, `no change seen within 10 s: ${JSON.stringify(lines)}`);
    abort.abort();
    const r = await running;
    assert.equal(r.code, 0, r.stderr);
    assert.ok(lines.length >= 3, `${lines.length} lines`);
    await Promise.all(injections);
    for (const f of Object.keys((await a.gateway.snapshot()).faults)) await a.gateway.faults.remove(f);
    await waitForSnapshot(a, (s) => s.resources[GPU]!.kubelet.unhealthy === 0, 'healed');
  });

  it('stops by itself after --timeout and prints a table', async () => {
    const r = await cli(['watch', '--timeout', '1s', '--node', 'node-b', ...both]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^NODE +RESOURCE +CAPACITY/m);
    assert.match(r.stdout, /^node-b +\S+ +4 +4 +0 +0 +yes/m);
  });
});
