// The chart's identity and policy on a real Kubernetes v1.37.2 API server (packages/local-cluster,
// the control plane `npm test` starts), not kubelet-sim's API slice:
// - every rendered object (default values: an observer; the chart's simulated-GPU example; the DRA
//   values docs/INSTALL.md documents; the RBAC options) is applied
//   with server-side apply and strict field validation into a namespace of its own, under a release
//   name of its own (the cluster-scoped objects carry it), and must be accepted;
// - the gateway's identity is its ServiceAccount's token from the TokenRequest API, bound to the
//   chart's own DaemonSet pod on a real node (as the pod's projected token is), in a kubeconfig that
//   holds that token alone. `kubectl auth can-i --list` with it, minus what a fresh ServiceAccount
//   with no bindings may (measured in the same namespace, in the same run), must equal the list in
//   the chart README (`gateway-permissions`), no more and no less;
// - the ValidatingAdmissionPolicy, with the node name the API server puts into that token: the
//   gateway writes (create, update, delete) its own node's ResourceSlices of its drivers; another
//   node's, a driver outside config.dra, and a token bound to no pod are refused with the policy's
//   messages.
// The DaemonSet's pods do not run anything: the nodes' container runtime is upstream's fake CRI,
// which records containers and runs none. The pods exist and are bound to the node, which is all the
// token needs; the identity and the policy checks are the real API server's.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import {
  realCluster,
  waitFor,
  type RealCluster,
  type RealNode,
  type ServiceAccountClient,
} from '@plugboard/testbed';
import { asArray, at, only, render, repoRoot, type K8sObject } from './helm.js';

const NODE_LABEL = 'plugboard.example/chart-test';
const README = join(repoRoot, 'deploy/helm/plugboard/README.md');
const INSTALL_MD = join(repoRoot, 'docs/INSTALL.md');

/** The `with` column of the README's permission list each install turns on. */
type PermissionCondition =
  | 'always'
  | 'config.dra'
  | 'config.dra[].deviceStatus'
  | 'auth.mode=kubernetes'
  | 'gateway.rbac.nodesProxy'
  | 'gateway.rbac.deviceTaintRules';

interface InstallCase {
  name: string;
  /** Values files (besides the per-node overrides the suite adds). */
  valuesFiles: () => string[];
  conditions: PermissionCondition[];
}

/** One permission as `kubectl auth can-i --list` shows it: `<namespace> <resource or URL> <verb>`. */
type Permission = string;

/** The values block of docs/INSTALL.md's "DRA drivers" section ("# plugboard-values.yaml: …"), as documented. */
function documentedDraValues(): string {
  const text = readFileSync(INSTALL_MD, 'utf8');
  const section = text.slice(text.indexOf('\n## 8. DRA drivers\n'));
  const block = /```yaml\n(# plugboard-values\.yaml[^\n]*\n[\s\S]*?)```/.exec(section)?.[1];
  if (!block || section.length === text.length + 1)
    throw new Error(
      'docs/INSTALL.md\'s "8. DRA drivers" has no ```yaml block starting "# plugboard-values.yaml"',
    );
  return block;
}

/** The README's documented gateway permissions, expanded per namespace and verb. */
function documentedPermissions(
  conditions: readonly PermissionCondition[],
  namespaces: string[],
  drivers: readonly string[],
): Permission[] {
  const text = readFileSync(README, 'utf8');
  const section = /<!-- gateway-permissions: begin[^>]*-->\n([\s\S]*?)<!-- gateway-permissions: end -->/.exec(
    text,
  )?.[1];
  if (!section) throw new Error('the chart README has no gateway-permissions list');
  const unquote = (cell: string): string => cell.trim().replace(/^`|`$/g, '');
  const out: Permission[] = [];
  for (const line of section.split('\n').slice(2)) {
    if (!line.startsWith('|')) continue;
    const [when, ns, resource, verbs] = line.split('|').slice(1, 5).map(unquote);
    if (!when || !ns || !resource || !verbs)
      throw new Error(`gateway-permissions: cannot read the row ${line}`);
    if (!conditions.includes(when as PermissionCondition)) continue;
    // `<driver>`: one row per driver of the install (the resourceNames of its rule).
    const resources = resource.includes('<driver>')
      ? drivers.map((d) => resource.replace('<driver>', d))
      : [resource];
    for (const n of ns === '*' ? namespaces : [ns])
      for (const r of resources)
        for (const verb of verbs.split(',').map(unquote)) out.push(`${n} ${r} ${verb}`);
  }
  return out.sort();
}

/** `kubectl auth can-i --list --namespace NS`, one entry per resource (or URL) and verb. */
async function canIList(sa: ServiceAccountClient, namespace: string): Promise<Permission[]> {
  const { stdout } = await sa.kubectl(['auth', 'can-i', '--list', '--namespace', namespace]);
  const [header, ...rows] = stdout.split('\n').filter((l) => l.trim() !== '');
  const col = (title: string): number => {
    const i = header?.indexOf(title) ?? -1;
    if (i < 0) throw new Error(`kubectl auth can-i --list printed no "${title}" column:\n${stdout}`);
    return i;
  };
  const [urlsAt, namesAt, verbsAt] = [col('Non-Resource URLs'), col('Resource Names'), col('Verbs')];
  const list = (cell: string): string[] =>
    cell
      .trim()
      .replace(/^\[|\]$/g, '')
      .split(' ')
      .filter(Boolean);
  const out = new Set<Permission>();
  for (const row of rows) {
    const resource = row.slice(0, urlsAt).trim();
    const names = list(row.slice(namesAt, verbsAt));
    const targets = resource
      ? (names.length ? names : ['']).map((n) => (n ? `${resource}/${n}` : resource))
      : list(row.slice(urlsAt, namesAt));
    for (const target of targets)
      for (const verb of list(row.slice(verbsAt))) out.add(`${namespace} ${target} ${verb}`);
  }
  return [...out].sort();
}

function resourceSlice(name: string, driver: string, nodeName: string, devices: string[]): string {
  return JSON.stringify({
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceSlice',
    metadata: { name },
    spec: {
      driver,
      nodeName,
      pool: { name: nodeName, generation: 1, resourceSliceCount: 1 },
      devices: devices.map((d) => ({ name: d })),
    },
  });
}

/** The error kubectl printed for a refused call (the refusal is the assertion; success is a failure). */
async function refusal(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  throw new Error('the API server accepted what it should have refused');
}

interface Installed {
  release: string;
  namespace: string;
  objects: K8sObject[];
  /** `<Kind>/<name>: <the server's message>` for every object the server refused. */
  refused: string[];
  /** The gateway's ServiceAccount with a token bound to its DaemonSet pod on the suite's node. */
  gateway: ServiceAccountClient;
  /** A fresh ServiceAccount of the same namespace with no bindings. */
  baseline: ServiceAccountClient;
  draDrivers: string[];
  remove(): Promise<void>;
}

describe('the chart on a real API server (Kubernetes v1.37.2)', () => {
  let cluster: RealCluster;
  let node: RealNode;
  let work: string;
  const run = randomBytes(3).toString('hex');
  const installs: Installed[] = [];

  before(async () => {
    cluster = realCluster();
    work = mkdtempSync(join(tmpdir(), 'pb-chart-real-'));
    node = await cluster.addNode('chart');
    // The chart's pods go to this node only, never to the nodes of suites running beside this one.
    await cluster.kubectl(['label', 'node', node.name, `${NODE_LABEL}=${run}`]);
  });

  after(async () => {
    // Every step is tried; the first failure is reported after the rest ran.
    const failures: unknown[] = [];
    const attempt = async (step: () => Promise<void>): Promise<void> => {
      await step().catch((err: unknown) => void failures.push(err));
    };
    for (const i of installs) await attempt(() => i.remove());
    if (node) await attempt(() => node.remove());
    if (work) rmSync(work, { recursive: true, force: true });
    if (failures.length > 0) throw failures[0];
  });

  /** Renders the chart for the suite's node and applies every object; finds its gateway pod and identity. */
  async function install(c: InstallCase): Promise<Installed> {
    const ns = await cluster.namespace('chart');
    const release = `pbc-${randomBytes(3).toString('hex')}`;
    const onThisNode = { nodeSelector: { [NODE_LABEL]: run } };
    const objects = render({
      release,
      namespace: ns.name,
      includeTests: false,
      valuesFiles: c.valuesFiles(),
      values: {
        gateway: {
          ...onThisNode,
          // The node's own kubelet directories (its kubelet runs with a root dir of its own).
          hostPaths: {
            devicePlugins: node.devicePluginDir,
            podResources: dirname(node.podResourcesSocket),
            state: join(node.dir, `plugboard-${release}`),
            plugins: node.pluginsDir,
            pluginsRegistry: { path: node.pluginsRegistryDir },
            cdi: { path: node.cdiDir },
          },
        },
        web: onThisNode,
      },
    });
    const outside = objects.filter((o) => o.metadata.namespace !== ns.name);
    const installed: Installed = {
      release,
      namespace: ns.name,
      objects,
      refused: [],
      gateway: undefined as unknown as ServiceAccountClient,
      baseline: undefined as unknown as ServiceAccountClient,
      // The drivers the gateway runs: the `dra:` list of the config the chart gives it.
      draDrivers: asArray(
        at(parse(at(only(objects, 'ConfigMap', '-gateway'), 'data', 'config.yaml') as string), 'dra'),
      ).map((d) => at(d, 'driver') as string),
      remove: async () => {
        // Cluster-scoped objects and the Role in `default`; the namespace takes the rest.
        for (const o of outside)
          await cluster.kubectl(
            [
              'delete',
              '-n',
              o.metadata.namespace ?? ns.name,
              '--ignore-not-found',
              '--wait=false',
              '-f',
              '-',
            ],
            { input: JSON.stringify(o) },
          );
        await ns.remove();
      },
    };
    installs.push(installed);
    for (const o of objects) {
      try {
        await cluster.kubectl(
          [
            'apply',
            '--server-side',
            '--validate=strict',
            '--field-manager=plugboard-chart-test',
            '-n',
            o.metadata.namespace ?? ns.name,
            '-f',
            '-',
          ],
          { input: JSON.stringify(o) },
        );
      } catch (err) {
        installed.refused.push(
          `${o.kind}/${o.metadata.name}: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
    const ds = only(objects, 'DaemonSet', '-gateway');
    const selector = Object.entries(at(ds, 'spec', 'selector', 'matchLabels') as Record<string, string>)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const pod = await waitFor(`the gateway DaemonSet's pod on ${node.name}`, async () => {
      const pods = await cluster.kubectlJson<{
        items: { metadata: { name: string }; spec: { nodeName?: string } }[];
      }>(['get', 'pods', '-n', ns.name, '-l', selector]);
      return pods.items.find((p) => p.spec.nodeName === node.name)?.metadata.name;
    });
    const saName = at(ds, 'spec', 'template', 'spec', 'serviceAccountName') as string;
    installed.gateway = await cluster.serviceAccount(ns.name, saName, { dir: work, boundPod: pod });
    await cluster.kubectl(['create', 'serviceaccount', 'baseline', '-n', ns.name]);
    installed.baseline = await cluster.serviceAccount(ns.name, 'baseline', { dir: work });
    return installed;
  }

  /** What the gateway may beyond a fresh ServiceAccount, in the release namespace and in `default`. */
  async function measuredPermissions(i: Installed): Promise<Permission[]> {
    const out: Permission[] = [];
    for (const ns of [i.namespace, 'default']) {
      const baseline = new Set(await canIList(i.baseline, ns));
      out.push(...(await canIList(i.gateway, ns)).filter((p) => !baseline.has(p)));
    }
    return out.sort();
  }

  const cases: InstallCase[] = [
    // The default values: an observer, with no plugin or driver of its own.
    { name: 'default values (an observer)', valuesFiles: () => [], conditions: ['always'] },
    {
      // Device plugins of its own need nothing more from the API server than the observer.
      name: "the chart's examples/simulated-gpus.values.yaml",
      valuesFiles: () => [join(repoRoot, 'deploy/helm/plugboard/examples/simulated-gpus.values.yaml')],
      conditions: ['always'],
    },
    {
      name: 'the DRA values of docs/INSTALL.md',
      valuesFiles: () => {
        const file = join(work, 'dra-values.yaml');
        writeFileSync(file, documentedDraValues());
        return [file];
      },
      conditions: ['always', 'config.dra', 'config.dra[].deviceStatus'],
    },
    {
      name: 'auth.mode=kubernetes and gateway.rbac.nodesProxy',
      valuesFiles: () => {
        const file = join(work, 'rbac-options-values.json');
        writeFileSync(
          file,
          JSON.stringify({ auth: { mode: 'kubernetes' }, gateway: { rbac: { nodesProxy: true } } }),
        );
        return [file];
      },
      conditions: ['always', 'auth.mode=kubernetes', 'gateway.rbac.nodesProxy'],
    },
    {
      name: 'DeviceTaintRule drills (faults.enabled, gateway.rbac.deviceTaintRules)',
      valuesFiles: () => {
        const file = join(work, 'drills-values.json');
        writeFileSync(
          file,
          JSON.stringify({ faults: { enabled: true }, gateway: { rbac: { deviceTaintRules: true } } }),
        );
        return [file];
      },
      conditions: ['always', 'gateway.rbac.deviceTaintRules'],
    },
  ];

  for (const c of cases) {
    describe(c.name, () => {
      let i: Installed;
      before(async () => {
        i = await install(c);
      });

      it('every rendered object is accepted by the API server (server-side apply, strict field validation)', () => {
        assert.ok(i.objects.length > 0);
        assert.deepEqual(i.refused, []);
      });

      it("the gateway's token, bound to its DaemonSet pod, is its ServiceAccount on the pod's node", async () => {
        const review = JSON.parse((await i.gateway.kubectl(['auth', 'whoami', '-o', 'json'])).stdout) as {
          status: { userInfo: { username: string; extra?: Record<string, string[]> } };
        };
        assert.equal(review.status.userInfo.username, i.gateway.username);
        assert.deepEqual(review.status.userInfo.extra?.['authentication.kubernetes.io/node-name'], [
          node.name,
        ]);
      });

      it("`kubectl auth can-i --list` as the gateway equals the README's gateway-permissions, no more", async () => {
        // RBAC is served from the API server's informers: wait until the chart's bindings are seen.
        await waitFor('the gateway ClusterRoleBinding in effect', async () => {
          await i.gateway.kubectl(['auth', 'can-i', 'watch', 'pods', '--all-namespaces']);
          return true;
        });
        assert.deepEqual(
          await measuredPermissions(i),
          documentedPermissions(c.conditions, [i.namespace, 'default'], i.draDrivers),
        );
      });

      if (c.conditions.includes('config.dra')) describePolicy(() => i);
    });
  }

  /** The ResourceSlice admission policy, with the gateway's pod-bound token. */
  function describePolicy(get: () => Installed): void {
    describe('the ResourceSlice admission policy', () => {
      let i: Installed;
      let driver: string;
      let policy: string;
      const slice = (what: string): string => `${what}-${run}`;

      before(async () => {
        i = get();
        driver = i.draDrivers[0] ?? '';
        assert.ok(driver, 'the DRA values run a driver');
        policy = only(i.objects, 'ValidatingAdmissionPolicy').metadata.name;
        // The policy is enforced once the API server's admission informers have it: until then a
        // foreign write passes. A server-side dry run goes through admission without writing.
        await waitFor(`policy ${policy} enforced`, async () =>
          (
            await refusal(
              i.gateway.kubectl(['create', '--dry-run=server', '-f', '-'], {
                input: resourceSlice(slice('probe'), driver, `elsewhere-${run}`, ['d0']),
              }),
            )
          ).includes(policy),
        );
      });

      it("lets the gateway create, update and delete its own node's ResourceSlice of its driver", async () => {
        const name = slice('own');
        await i.gateway.kubectl(['create', '-f', '-'], {
          input: resourceSlice(name, driver, node.name, ['gpu-0']),
        });
        // Read back as the admin: the drivers never GET a slice, so the gateway may not.
        const obj = await cluster.kubectlJson<{ spec: { devices: { name: string }[] } }>([
          'get',
          'resourceslice',
          name,
        ]);
        obj.spec.devices.push({ name: 'gpu-1' });
        // The driver updates with PUT (its ClusterRole has no patch): `kubectl replace`.
        await i.gateway.kubectl(['replace', '-f', '-'], { input: JSON.stringify(obj) });
        const updated = await cluster.kubectlJson<{ spec: { devices: { name: string }[] } }>([
          'get',
          'resourceslice',
          name,
        ]);
        assert.deepEqual(
          updated.spec.devices.map((d) => d.name),
          ['gpu-0', 'gpu-1'],
        );
        await i.gateway.kubectl(['delete', 'resourceslice', name, '--wait=false']);
      });

      it("refuses another node's ResourceSlice, naming both nodes", async () => {
        const other = `elsewhere-${run}`;
        const message = await refusal(
          i.gateway.kubectl(['create', '-f', '-'], {
            input: resourceSlice(slice('foreign-node'), driver, other, ['gpu-0']),
          }),
        );
        assert.match(message, new RegExp(`ValidatingAdmissionPolicy '${policy}'`));
        assert.match(
          message,
          new RegExp(
            `the Plugboard gateway on node '${node.name}' may not modify resourceslices on node '${other}'`,
          ),
        );
      });

      it('refuses a driver outside config.dra, naming the drivers it may write', async () => {
        const foreign = `other-${run}.plugboard.example`;
        const message = await refusal(
          i.gateway.kubectl(['create', '-f', '-'], {
            input: resourceSlice(slice('foreign-driver'), foreign, node.name, ['gpu-0']),
          }),
        );
        assert.match(message, new RegExp(`ValidatingAdmissionPolicy '${policy}'`));
        assert.match(
          message,
          new RegExp(
            `may only modify resourceslices of its drivers ${i.draDrivers.join(', ')}, not of '${foreign}'`,
          ),
        );
      });

      it('refuses the gateway ServiceAccount with a token bound to no pod (no node in it)', async () => {
        const unbound = await cluster.serviceAccount(i.namespace, i.gateway.username.split(':').at(-1)!, {
          dir: work,
        });
        const message = await refusal(
          unbound.kubectl(['create', '-f', '-'], {
            input: resourceSlice(slice('no-node'), driver, node.name, ['gpu-0']),
          }),
        );
        assert.match(message, /no node association found for the Plugboard gateway/);
      });

      it("leaves everyone else's writes alone (the cluster admin writes any node's slice of any driver)", async () => {
        const name = slice('admin');
        await cluster.kubectl(['create', '-f', '-'], {
          input: resourceSlice(name, `other-${run}.plugboard.example`, `elsewhere-${run}`, ['gpu-0']),
        });
        await cluster.kubectl(['delete', 'resourceslice', name, '--wait=false']);
      });
    });
  }
});
