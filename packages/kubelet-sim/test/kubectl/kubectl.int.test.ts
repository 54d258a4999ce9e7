// A real kubectl (v1.35) against kubelet-sim with a device plugin and admitted pods, asserting what
// an operator reads — as a Kubernetes 1.37 node and its API server print it (issue #16): `get`
// tables with their exact columns, `describe node` with the extended resource and the node Lease,
// `describe pod` events, `explain`, `api-resources`, `cluster-info`, `auth can-i`, `logs`, the
// read-only API refusing writes, `create -f` validated against the protobuf `/openapi/v2`,
// `apply`/`get`/`delete` of a resource.k8s.io/v1 DeviceTaintRule, and `get pods -w` through a device
// fault and a kubelet restart.
// Expected output follows upstream (kubernetes/kubectl release 1.35, kube-apiserver's printers,
// the kubelet's event reasons and messages), not kubelet-sim's current answers.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { PodSpecInput } from '../../src/index.js';
import { startWithPlugin, waitFor, type SimFixture } from '../helpers.js';
import type { TestPlugin } from '../test-plugin.js';
import {
  AGE,
  describeLine,
  describeSection,
  describeValues,
  Kubectl,
  kubectlBinary,
  parseTable,
  parseTables,
  watchCells,
  type KubectlResult,
  type KubectlWatch,
} from './kubectl-harness.js';

const GPU = 'example.com/gpu';
const NODE = 'sim-node';
const IMAGE = 'busybox:1.37';
/** The kubelet version kubelet-sim reports: a 1.37 kubelet (`v1.37.x-plugboard-sim`). */
const KUBELET_VERSION = /^v1\.37\.\d+-plugboard-sim$/;

let f: SimFixture;
let plugin: TestPlugin;
let stopSim: (() => Promise<void>) | undefined;
let kubectl: Kubectl;

function gpuPod(name: string, gpus: number): PodSpecInput {
  return {
    metadata: { name, namespace: 'default' },
    spec: {
      restartPolicy: 'Always',
      containers: [{ name: 'main', image: IMAGE, resources: { limits: { [GPU]: String(gpus) } } }],
    },
  };
}

/** The devices a pod's `main` container holds, as the simulator allocated them. */
function devicesOf(name: string): string[] {
  const p = f.sim.state().pods.find((x) => x.name === name);
  return p?.containers.find((c) => c.name === 'main')?.devices[GPU] ?? [];
}

/** Exit 0 and nothing on stderr, or the whole exchange in the failure message. */
function ok(r: KubectlResult): string {
  assert.equal(
    r.code,
    0,
    `kubectl ${r.args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`,
  );
  assert.equal(r.stderr, '', `kubectl ${r.args.join(' ')} wrote to stderr`);
  return r.stdout;
}

/** The describe `Events:` table as rows of Type, Reason, Age, From, Message. */
function describeEvents(text: string): Record<string, string>[] {
  const title = describeLine(text, 'Events');
  assert.notEqual(title, null, `no Events section in:\n${text}`);
  assert.notEqual(title, '<none>', `the Events section is empty:\n${text}`);
  const table = parseTable((describeSection(text, 'Events') ?? []).join('\n'));
  assert.deepEqual(table.header, ['Type', 'Reason', 'Age', 'From', 'Message']);
  return table.rows;
}

/** How often an event reason occurred, counting `(x3 over 2m)` aggregation. */
function occurrences(rows: Record<string, string>[], reason: string): number {
  return rows
    .filter((r) => r['Reason'] === reason)
    .reduce((n, r) => n + Number(/\(x(\d+) over /.exec(r['Age'] ?? '')?.[1] ?? 1), 0);
}

/** The `  <resource>  <requests>  <limits>` line of describe node's Allocated resources. */
function allocated(text: string, resource: string): [string, string] | null {
  for (const line of describeSection(text, 'Allocated resources') ?? []) {
    const cells = line.trim().split(/\s{2,}/);
    if (cells[0] === resource && cells.length === 3) return [cells[1]!, cells[2]!];
  }
  return null;
}

before(async () => {
  const [binary, started] = await Promise.all([
    kubectlBinary(),
    startWithPlugin(
      { numaNodes: 2, cpus: 8, crashLoopBackOff: { initialMs: 200, maxMs: 1000 } },
      {
        resourceName: GPU,
        devices: [
          { id: 'gpu-0', numa: [0] },
          { id: 'gpu-1', numa: [0] },
          { id: 'gpu-2', numa: [1] },
          { id: 'gpu-3', numa: [1] },
        ],
      },
    ),
  ]);
  ({ f, plugin, stop: stopSim } = started);
  kubectl = new Kubectl(binary, { kubeconfig: f.sim.kubeconfigPath });
  await f.sim.admitPod(gpuPod('trainer', 2));
});

after(async () => {
  await kubectl?.close();
  await stopSim?.();
});

describe('kubectl reads a healthy node', { concurrency: true }, () => {
  test('kubectl version --client is v1.35', async () => {
    const out = ok(await kubectl.run(['version', '--client']));
    assert.match(out, /^Client Version: v1\.35\.\d+$/m);
  });

  test('get pods -o wide: every column and value', async () => {
    const [wide, json] = await Promise.all([
      kubectl.run(['get', 'pods', '-o', 'wide']),
      kubectl.run(['get', 'pod', 'trainer', '-o', 'json']),
    ]);
    const table = parseTable(ok(wide));
    assert.deepEqual(table.header, [
      'NAME',
      'READY',
      'STATUS',
      'RESTARTS',
      'AGE',
      'IP',
      'NODE',
      'NOMINATED NODE',
      'READINESS GATES',
    ]);
    const podIP = (JSON.parse(ok(json)) as { status: { podIP: string } }).status.podIP;
    assert.match(podIP, /^\d+\.\d+\.\d+\.\d+$/);
    assert.equal(table.rows.length, 1, wide.stdout);
    const row = table.rows[0]!;
    assert.match(row['AGE']!, AGE);
    assert.deepEqual(
      { ...row, AGE: '<age>' },
      {
        NAME: 'trainer',
        READY: '1/1',
        STATUS: 'Running',
        RESTARTS: '0',
        AGE: '<age>',
        IP: podIP,
        NODE: NODE,
        'NOMINATED NODE': '<none>',
        'READINESS GATES': '<none>',
      },
    );
  });

  test('get po and get no: short names, default columns', async () => {
    const [po, no] = await Promise.all([kubectl.run(['get', 'po']), kubectl.run(['get', 'no'])]);
    const pods = parseTable(ok(po));
    assert.deepEqual(pods.header, ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
    assert.deepEqual(
      pods.rows.map((r) => [r['NAME'], r['READY'], r['STATUS'], r['RESTARTS']]),
      [['trainer', '1/1', 'Running', '0']],
    );
    const nodes = parseTable(ok(no));
    assert.deepEqual(nodes.header, ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION']);
    assert.equal(nodes.rows.length, 1, no.stdout);
    const node = nodes.rows[0]!;
    assert.deepEqual([node['NAME'], node['STATUS'], node['ROLES']], [NODE, 'Ready', '<none>']);
    assert.match(node['AGE']!, AGE);
    assert.match(node['VERSION']!, KUBELET_VERSION);
  });

  test('get nodes -o wide: addresses and node info as the Node object has them', async () => {
    const [wide, json] = await Promise.all([
      kubectl.run(['get', 'nodes', '-o', 'wide']),
      kubectl.run(['get', 'node', NODE, '-o', 'json']),
    ]);
    const table = parseTable(ok(wide));
    assert.deepEqual(table.header, [
      'NAME',
      'STATUS',
      'ROLES',
      'AGE',
      'VERSION',
      'INTERNAL-IP',
      'EXTERNAL-IP',
      'OS-IMAGE',
      'KERNEL-VERSION',
      'CONTAINER-RUNTIME',
    ]);
    const node = JSON.parse(ok(json)) as {
      status: {
        addresses: { type: string; address: string }[];
        nodeInfo: {
          osImage: string;
          kernelVersion: string;
          containerRuntimeVersion: string;
          kubeletVersion: string;
        };
      };
    };
    const { nodeInfo } = node.status;
    assert.match(nodeInfo.kubeletVersion, KUBELET_VERSION);
    assert.equal(table.rows.length, 1, wide.stdout);
    const row = table.rows[0]!;
    assert.match(row['AGE']!, AGE);
    assert.deepEqual(
      { ...row, AGE: '<age>' },
      {
        NAME: NODE,
        STATUS: 'Ready',
        ROLES: '<none>',
        AGE: '<age>',
        VERSION: nodeInfo.kubeletVersion,
        'INTERNAL-IP': node.status.addresses.find((a) => a.type === 'InternalIP')?.address,
        'EXTERNAL-IP': '<none>',
        'OS-IMAGE': nodeInfo.osImage,
        'KERNEL-VERSION': nodeInfo.kernelVersion,
        'CONTAINER-RUNTIME': nodeInfo.containerRuntimeVersion,
      },
    );
  });

  test("get ev: the pod's lifecycle and the kubelet's node events", async () => {
    const table = parseTable(ok(await kubectl.run(['get', 'ev'])));
    assert.deepEqual(table.header, ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
    for (const r of table.rows) assert.match(r['LAST SEEN']!, AGE, JSON.stringify(r));
    const expected: [string, string, string, string | RegExp][] = [
      ['Normal', 'Scheduled', 'pod/trainer', `Successfully assigned default/trainer to ${NODE}`],
      ['Normal', 'Pulled', 'pod/trainer', /^Container image "busybox:1\.37" already present on machine/],
      ['Normal', 'Created', 'pod/trainer', 'Created container: main'],
      ['Normal', 'Started', 'pod/trainer', 'Started container main'],
      ['Normal', 'Starting', `node/${NODE}`, 'Starting kubelet.'],
      [
        'Normal',
        'NodeHasSufficientMemory',
        `node/${NODE}`,
        `Node ${NODE} status is now: NodeHasSufficientMemory`,
      ],
      [
        'Normal',
        'NodeHasNoDiskPressure',
        `node/${NODE}`,
        `Node ${NODE} status is now: NodeHasNoDiskPressure`,
      ],
      ['Normal', 'NodeHasSufficientPID', `node/${NODE}`, `Node ${NODE} status is now: NodeHasSufficientPID`],
      ['Normal', 'NodeAllocatableEnforced', `node/${NODE}`, 'Updated Node Allocatable limit across pods'],
      ['Normal', 'NodeReady', `node/${NODE}`, `Node ${NODE} status is now: NodeReady`],
    ];
    const missing = expected.filter(
      ([type, reason, object, message]) =>
        !table.rows.some(
          (r) =>
            r['TYPE'] === type &&
            r['REASON'] === reason &&
            r['OBJECT'] === object &&
            (typeof message === 'string' ? r['MESSAGE'] === message : message.test(r['MESSAGE'] ?? '')),
        ),
    );
    assert.deepEqual(
      missing.map((e) => e.map(String).join(' | ')),
      [],
      `events missing from:\n${table.rows.map((r) => Object.values(r).join(' | ')).join('\n')}`,
    );
  });

  test('get ns: the four namespaces of a cluster', async () => {
    const table = parseTable(ok(await kubectl.run(['get', 'ns'])));
    assert.deepEqual(table.header, ['NAME', 'STATUS', 'AGE']);
    assert.deepEqual(
      table.rows.map((r) => [r['NAME'], r['STATUS']]),
      [
        ['default', 'Active'],
        ['kube-node-lease', 'Active'],
        ['kube-public', 'Active'],
        ['kube-system', 'Active'],
      ],
    );
    for (const r of table.rows) assert.match(r['AGE']!, AGE);
  });

  test('get all: the pods and the kubernetes Service', async () => {
    const tables = parseTables(ok(await kubectl.run(['get', 'all'])));
    assert.equal(tables.length, 2, 'one table for pods, one for services');
    const [pods, services] = tables as [ReturnType<typeof parseTable>, ReturnType<typeof parseTable>];
    assert.deepEqual(pods.header, ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
    assert.deepEqual(
      pods.rows.map((r) => [r['NAME'], r['READY'], r['STATUS'], r['RESTARTS']]),
      [['pod/trainer', '1/1', 'Running', '0']],
    );
    assert.deepEqual(services.header, ['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE']);
    assert.equal(services.rows.length, 1);
    const svc = services.rows[0]!;
    assert.match(svc['CLUSTER-IP']!, /^\d+\.\d+\.\d+\.\d+$/);
    assert.match(svc['AGE']!, AGE);
    assert.deepEqual(
      [svc['NAME'], svc['TYPE'], svc['EXTERNAL-IP'], svc['PORT(S)']],
      ['service/kubernetes', 'ClusterIP', '<none>', '443/TCP'],
    );
  });

  test('describe node: extended resource in Capacity, Allocatable and Allocated resources; the Lease; events', async () => {
    const out = ok(await kubectl.run(['describe', 'node', NODE]));
    assert.doesNotMatch(out, /Failed to get lease/);
    assert.doesNotMatch(out, /error/i);
    const lease = describeValues(describeSection(out, 'Lease') ?? []);
    assert.equal(lease['HolderIdentity'], NODE, `Lease section:\n${describeLine(out, 'Lease')}`);
    assert.notEqual(lease['RenewTime'], '<unset>');
    assert.ok(lease['RenewTime'], 'a RenewTime');
    assert.equal(describeValues(describeSection(out, 'Capacity') ?? [])[GPU], '4');
    assert.equal(describeValues(describeSection(out, 'Allocatable') ?? [])[GPU], '4');
    assert.deepEqual(allocated(out, GPU), ['2', '2'], 'Allocated resources: requests and limits');
    assert.equal(describeLine(out, 'Non-terminated Pods'), '(1 in total)');
    assert.match(
      describeValues(describeSection(out, 'System Info') ?? [])['Kubelet Version'] ?? '',
      KUBELET_VERSION,
    );
    const events = describeEvents(out);
    for (const reason of ['Starting', 'NodeHasSufficientMemory', 'NodeReady', 'NodeAllocatableEnforced'])
      assert.ok(
        events.some((e) => e['Reason'] === reason && e['From'] === 'kubelet' && e['Type'] === 'Normal'),
        `a ${reason} event from the kubelet`,
      );
  });

  test('describe pod: Scheduled, Pulled, Created, Started in order', async () => {
    const out = ok(await kubectl.run(['describe', 'pod', 'trainer']));
    assert.match(out, /^Status:\s+Running$/m);
    assert.match(out, new RegExp(`^Node:\\s+${NODE}/`, 'm'));
    const events = describeEvents(out);
    const lifecycle = events.filter((e) =>
      ['Scheduled', 'Pulling', 'Pulled', 'Created', 'Started'].includes(e['Reason']!),
    );
    const reasons = lifecycle.map((e) => e['Reason']);
    assert.ok(
      ['Scheduled,Pulled,Created,Started', 'Scheduled,Pulling,Pulled,Created,Started'].includes(
        reasons.join(','),
      ),
      `events in order: ${reasons.join(', ')}`,
    );
    const by = (reason: string) => lifecycle.find((e) => e['Reason'] === reason)!;
    assert.deepEqual(
      [by('Scheduled')['From'], by('Scheduled')['Message']],
      ['default-scheduler', `Successfully assigned default/trainer to ${NODE}`],
    );
    assert.deepEqual(
      [by('Created')['From'], by('Created')['Message']],
      ['kubelet', 'spec.containers{main}: Created container: main'],
    );
    assert.deepEqual(
      [by('Started')['From'], by('Started')['Message']],
      ['kubelet', 'spec.containers{main}: Started container main'],
    );
    assert.match(
      by('Pulled')['Message']!,
      /^spec\.containers\{main\}: Container image "busybox:1\.37" already present/,
    );
  });

  test('explain pod.spec.containers: the upstream field documentation', async () => {
    const out = ok(await kubectl.run(['explain', 'pod.spec.containers']));
    assert.match(out, /^KIND:\s+Pod\nVERSION:\s+v1\n\nFIELD: containers <\[\]Container>\n/);
    const description = out.slice(out.indexOf('DESCRIPTION:'), out.indexOf('FIELDS:')).replace(/\s+/g, ' ');
    assert.match(
      description,
      /List of containers belonging to the pod\. Containers cannot currently be added or removed\. There must be at least one container in a Pod\. Cannot be updated\./,
    );
    assert.match(description, /A single application container that you want to run within a pod\./);
    assert.match(out, /^ {2}name\t<string> -required-$/m);
    assert.match(out, /^ {2}image\t<string>$/m);
    assert.match(out, /^ {2}resources\t<ResourceRequirements>$/m);
  });

  test('api-resources: short names, groups, scope and kinds', async () => {
    const table = parseTable(ok(await kubectl.run(['api-resources'])));
    assert.deepEqual(table.header, ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND']);
    const expected = [
      ['events', 'ev', 'v1', 'true', 'Event'],
      ['namespaces', 'ns', 'v1', 'false', 'Namespace'],
      ['nodes', 'no', 'v1', 'false', 'Node'],
      ['pods', 'po', 'v1', 'true', 'Pod'],
      ['services', 'svc', 'v1', 'true', 'Service'],
      ['leases', '', 'coordination.k8s.io/v1', 'true', 'Lease'],
    ];
    const rows = table.rows.map((r) => table.header.map((h) => r[h]));
    const missing = expected.filter((e) => !rows.some((r) => r.join(' ') === e.join(' ')));
    assert.deepEqual(
      missing,
      [],
      `api-resources printed:\n${table.rows.map((r) => Object.values(r).join(' ')).join('\n')}`,
    );
  });

  test('discovery is aggregated: a fresh kubectl asks /api and /apis, no group-version lists', async () => {
    const r = await kubectl.run(['get', 'pods', '-v=6']);
    assert.equal(r.code, 0, r.stderr);
    const paths = [...r.stderr.matchAll(/"Response" verb="GET" url="([^"]+)"/g)].map(
      (m) => new URL(m[1]!).pathname,
    );
    assert.ok(paths.includes('/api') && paths.includes('/apis'), `requests: ${paths.join(' ')}`);
    assert.deepEqual(
      paths.filter((p) => /^\/api\/v1$|^\/apis\/[^/]+\/[^/]+$/.test(p)),
      [],
      'no per-group-version discovery requests',
    );
  });

  test('cluster-info: where the control plane runs', async () => {
    const out = ok(await kubectl.run(['cluster-info']));
    const lines = out.split('\n');
    assert.equal(lines[0], `Kubernetes control plane is running at ${f.sim.url}`);
    assert.match(
      out,
      /\n\nTo further debug and diagnose cluster problems, use 'kubectl cluster-info dump'\.\n$/,
    );
  });

  test('auth can-i: reads yes, writes no (exit 1), --list prints the rules', async () => {
    const [list, del, rules] = await Promise.all([
      kubectl.run(['auth', 'can-i', 'list', 'pods']),
      kubectl.run(['auth', 'can-i', 'patch', 'pods']),
      kubectl.run(['auth', 'can-i', '--list']),
    ]);
    assert.equal(ok(list), 'yes\n');
    assert.equal(del.code, 1, `auth can-i patch pods: ${del.stdout}${del.stderr}`);
    assert.match(del.stdout, /^no( - .+)?\n$/);
    const table = parseTable(ok(rules));
    assert.deepEqual(table.header, ['Resources', 'Non-Resource URLs', 'Resource Names', 'Verbs']);
    const pods = table.rows.find((r) => r['Resources'] === 'pods');
    assert.ok(pods, `a rule for pods in:\n${rules.stdout}`);
    for (const verb of ['get', 'list', 'watch', 'create', 'delete'])
      assert.match(pods['Verbs']!, new RegExp(`\\b${verb}\\b`));
    assert.doesNotMatch(pods['Verbs']!, /\b(patch|update|\*)\b/);
  });

  test("logs: the simulated container's log shows its device environment", async () => {
    const out = ok(await kubectl.run(['logs', 'trainer']));
    const devices = devicesOf('trainer');
    assert.equal(devices.length, 2);
    assert.match(out, /TEST_DEVICES/);
    for (const id of devices) assert.ok(out.includes(id), `log names ${id}:\n${out}`);
  });

  test('the read-only API refuses writes: label exits 1 with MethodNotAllowed, cordon reports it', async () => {
    const label = await kubectl.run(['label', 'node', NODE, 'plugboard.dev/drill=yes']);
    assert.equal(label.code, 1, `label: ${label.stdout}${label.stderr}`);
    const refused = /^Error from server \(MethodNotAllowed\): (.+)\n$/.exec(label.stderr);
    assert.ok(refused, `label stderr: ${label.stderr}`);
    // Upstream's RunCordonOrUncordon prints a failed PATCH and still returns nil: cordon exits 0.
    const cordon = await kubectl.run(['cordon', NODE]);
    assert.equal(cordon.stdout, '');
    assert.equal(cordon.stderr, `error: unable to cordon node "${NODE}": ${refused[1]}\n`);
    assert.equal(cordon.code, 0, 'kubectl 1.35 exits 0 after printing a cordon error');
    const nodes = parseTable(ok(await kubectl.run(['get', 'no'])));
    assert.equal(nodes.rows[0]?.['STATUS'], 'Ready', 'not SchedulingDisabled');
  });

  test('create -f validates against /openapi/v2 (protobuf) first, then reaches the server', async () => {
    // client-go fetches /openapi/v2 only as protobuf; kubectl validates the manifest against it
    // before sending, so a valid Pod reaches the server (here refused there: it names another node)
    // and an unknown field does not.
    const dir = mkdtempSync(join(tmpdir(), 'pb-manifests-'));
    try {
      const pod = join(dir, 'pod.yaml');
      writeFileSync(
        pod,
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: manifest\n  namespace: default\nspec:\n' +
          '  nodeName: another-node\n  containers:\n    - name: main\n      image: busybox:1.37\n',
      );
      const created = await kubectl.run(['create', '-f', pod]);
      assert.equal(created.code, 1, created.stdout + created.stderr);
      assert.equal(
        created.stderr,
        `The request is invalid: error when creating "${pod}": Pod "manifest" is invalid: spec.nodeName: ` +
          'Invalid value: "another-node": this kubelet runs node "sim-node"\n',
      );
      const event = join(dir, 'event.yaml');
      writeFileSync(
        event,
        'apiVersion: v1\nkind: Event\nmetadata:\n  name: manifest.1\n  namespace: default\n' +
          'involvedObject:\n  kind: Pod\n  name: trainer\nreason: Testing\nbogusField: 1\n',
      );
      const invalid = await kubectl.run(['create', '-f', event]);
      assert.equal(invalid.code, 1, invalid.stdout + invalid.stderr);
      assert.equal(
        invalid.stderr,
        `error: error validating "${event}": error validating data: ValidationError(Event): unknown field ` +
          '"bogusField" in io.k8s.api.core.v1.Event; if you choose to ignore these errors, turn validation off ' +
          'with --validate=false\n',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('kubectl creates a Pod', () => {
  test('create -f: stored, scheduled and admitted as through the control API; a second create is AlreadyExists', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-manifests-'));
    try {
      const pod = join(dir, 'pod.yaml');
      writeFileSync(
        pod,
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: created\n  namespace: manifests\nspec:\n' +
          '  containers:\n    - name: main\n      image: busybox:1.37\n',
      );
      const created = await kubectl.run(['create', '-f', pod]);
      assert.equal(created.code, 0, created.stdout + created.stderr);
      assert.equal(created.stdout, 'pod/created created\n');
      const again = await kubectl.run(['create', '-f', pod]);
      assert.equal(again.code, 1, again.stdout + again.stderr);
      assert.equal(
        again.stderr,
        `Error from server (AlreadyExists): error when creating "${pod}": pods "created" already exists\n`,
      );
      const waited = await kubectl.run([
        'wait',
        '-n',
        'manifests',
        '--for=condition=Ready',
        'pod/created',
        '--timeout=60s',
      ]);
      assert.equal(waited.stdout, 'pod/created condition met\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('kubectl writes resource.k8s.io/v1', () => {
  test('apply -f, get and delete a DeviceTaintRule: created, configured, printed as printDeviceTaint, deleted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-manifests-'));
    const manifest = (effect: string) =>
      'apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata:\n  name: gpu-maintenance\nspec:\n' +
      '  deviceSelector:\n    driver: gpu.example.com\n    pool: sim-node\n    device: gpu-0\n' +
      `  taint:\n    key: example.com/maintenance\n    value: planned\n    effect: ${effect}\n`;
    try {
      const file = join(dir, 'rule.yaml');
      writeFileSync(file, manifest('NoSchedule'));
      assert.equal(
        ok(await kubectl.run(['apply', '-f', file])),
        'devicetaintrule.resource.k8s.io/gpu-maintenance created\n',
      );
      const listed = parseTable(ok(await kubectl.run(['get', 'devicetaintrules'])));
      assert.deepEqual(listed.header, ['NAME', 'KEY', 'VALUE', 'EFFECT', 'TIMEADDED', 'AGE']);
      assert.equal(listed.rows.length, 1);
      const row = listed.rows[0]!;
      assert.deepEqual(
        [row['NAME'], row['KEY'], row['VALUE'], row['EFFECT']],
        ['gpu-maintenance', 'example.com/maintenance', 'planned', 'NoSchedule'],
      );
      assert.match(row['TIMEADDED'] ?? '', AGE, 'the API server set timeAdded');
      assert.match(row['AGE'] ?? '', AGE);

      // The effect changes through apply's patch; the rule's generation and timeAdded follow.
      writeFileSync(file, manifest('NoExecute'));
      assert.equal(
        ok(await kubectl.run(['apply', '-f', file])),
        'devicetaintrule.resource.k8s.io/gpu-maintenance configured\n',
      );
      const applied = JSON.parse(
        ok(await kubectl.run(['get', 'devicetaintrule', 'gpu-maintenance', '-o', 'json'])),
      ) as {
        metadata: { generation: number; annotations: Record<string, string> };
        spec: { taint: { effect: string; timeAdded: string } };
      };
      assert.equal(applied.spec.taint.effect, 'NoExecute');
      assert.equal(applied.metadata.generation, 2);
      assert.ok(applied.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);

      assert.equal(
        ok(await kubectl.run(['delete', 'devicetaintrule', 'gpu-maintenance'])),
        'devicetaintrule.resource.k8s.io "gpu-maintenance" deleted\n',
      );
      const none = await kubectl.run(['get', 'devicetaintrules']);
      assert.equal(none.code, 0, none.stderr);
      assert.equal(none.stdout, '');
      assert.equal(none.stderr, 'No resources found\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('kubectl through a device fault and a kubelet restart', () => {
  let watch: KubectlWatch;
  let crashyDevice: string;
  let firstAfterRestart = '';

  before(async () => {
    watch = kubectl.watch(['get', 'pods', '-w']);
    // The watch is running once the listed pods are printed; only then does the new pod arrive.
    await watch.next((l) => watchCells(l)[0] === 'trainer', 'the trainer row of the initial list');
    await f.sim.admitPod(gpuPod('crashy', 1));
    [crashyDevice] = devicesOf('crashy') as [string];
    assert.ok(crashyDevice, 'crashy holds a device');
  });

  test('get pods -w: the header, then the new pod Running', async () => {
    assert.deepEqual(watchCells(watch.lines[0] ?? ''), ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
    const line = await watch.next(
      (l) => watchCells(l)[0] === 'crashy' && watchCells(l)[2] === 'Running',
      'crashy Running',
    );
    const cells = watchCells(line);
    assert.deepEqual(cells.slice(0, 4), ['crashy', '1/1', 'Running', '0']);
    assert.match(cells[4]!, AGE);
  });

  test("get pods -w: a device fault makes the pod's container fail and crash-loop", async () => {
    plugin.setHealth(crashyDevice, 'Unhealthy');
    const line = await watch.next(
      (l) => watchCells(l)[0] === 'crashy' && watchCells(l)[2] === 'CrashLoopBackOff',
      'crashy in CrashLoopBackOff',
      10_000,
    );
    const cells = watchCells(line);
    assert.equal(cells[1], '0/1');
    assert.match(cells[3]!, /^[1-9]\d* \(\S+ ago\)$/, 'RESTARTS with the time of the last restart');
  });

  describe('after the fault', { concurrency: true }, () => {
    before(async () => {
      await waitFor(() => f.sim.state().resources[GPU]?.allocatable === 3, 'allocatable 3');
      await waitFor(
        () =>
          f.sim.state().pods.find((p) => p.name === 'crashy')?.containers[0]?.state === 'CrashLoopBackOff',
        'crashy in CrashLoopBackOff',
      );
    });

    test('describe node: Allocatable drops to 3 of 4, still 3 allocated, node events', async () => {
      const out = ok(await kubectl.run(['describe', 'node', NODE]));
      assert.equal(describeValues(describeSection(out, 'Capacity') ?? [])[GPU], '4');
      assert.equal(describeValues(describeSection(out, 'Allocatable') ?? [])[GPU], '3');
      assert.deepEqual(allocated(out, GPU), ['3', '3']);
      assert.doesNotMatch(out, /Failed to get lease/);
      assert.ok(describeEvents(out).length > 0, 'node events after the fault');
    });

    test('get pods: the restarts and when the last one was', async () => {
      const table = parseTable(ok(await kubectl.run(['get', 'pods'])));
      assert.deepEqual(table.header, ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
      const crashy = table.rows.find((r) => r['NAME'] === 'crashy');
      assert.ok(crashy, 'a crashy row');
      assert.match(crashy['RESTARTS'] ?? '', /^[1-9]\d* \(\S+ ago\)$/);
      assert.match(crashy['STATUS'] ?? '', /^(CrashLoopBackOff|Error|Running|ContainerCreating)$/);
    });

    test('describe pod: the last state is an Error exit and the kubelet warns BackOff', async () => {
      const [pod, json] = await Promise.all([
        kubectl.run(['describe', 'pod', 'crashy']),
        kubectl.run(['get', 'pod', 'crashy', '-o', 'json']),
      ]);
      const uid = (JSON.parse(ok(json)) as { metadata: { uid: string } }).metadata.uid;
      const text = ok(pod);
      assert.match(text, /Last State:\s+Terminated\n\s+Reason:\s+Error\n/);
      assert.match(text, /Exit Code:\s+1\n/);
      const backOff = describeEvents(text).filter((e) => e['Reason'] === 'BackOff');
      assert.deepEqual(
        backOff.map((e) => [e['Type'], e['From'], e['Message']]),
        [
          [
            'Warning',
            'kubelet',
            `spec.containers{main}: Back-off restarting failed container main in pod crashy_default(${uid})`,
          ],
        ],
      );
    });

    test("logs --previous: the crashed container's log says why", async () => {
      const out = ok(await kubectl.run(['logs', 'crashy', '--previous']));
      assert.ok(out.includes(crashyDevice), `the log names ${crashyDevice}:\n${out}`);
      assert.match(out, /unhealthy/i);
    });
  });

  test('a kubelet restart: get pods -w carries on and streams a pod admitted afterwards', async () => {
    await f.sim.restart();
    await plugin.stop();
    await plugin.start();
    await plugin.register();
    // Back with its devices: crashy's stays unhealthy, so 3 of 4 are allocatable.
    await waitFor(
      () => f.sim.state().resources[GPU]?.registered && f.sim.state().resources[GPU]?.allocatable === 3,
      're-registration with the devices',
      10_000,
    );
    assert.equal(watch.exit, null, `kubectl get pods -w is still running (stderr: ${watch.stderr})`);
    await f.sim.admitPod(gpuPod('after-restart', 1));
    firstAfterRestart = await watch.next((l) => watchCells(l)[0] === 'after-restart', 'an after-restart row');
  });

  test('after the restart: the new pod reaches Running 1/1 in the watch', async () => {
    const running = (l: string) => watchCells(l)[0] === 'after-restart' && watchCells(l)[2] === 'Running';
    const line = running(firstAfterRestart)
      ? firstAfterRestart
      : await watch.next(running, 'after-restart Running', 10_000);
    assert.deepEqual(watchCells(line).slice(0, 4), ['after-restart', '1/1', 'Running', '0']);
  });

  test('after the restart: describe node shows the Lease and the kubelet Starting again', async () => {
    const node = ok(await kubectl.run(['describe', 'node', NODE]));
    assert.equal(describeValues(describeSection(node, 'Lease') ?? [])['HolderIdentity'], NODE);
    assert.ok(
      occurrences(describeEvents(node), 'Starting') >= 2,
      'the restarted kubelet says Starting again',
    );
  });
});
