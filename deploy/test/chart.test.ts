// The Helm chart rendered by a real helm binary: lint, offline Kubernetes schema validation of every
// object, and the invariants the chart promises (host directories, dropped capabilities, least
// privilege RBAC, faults off by default, probes, config checksum, NetworkPolicy wiring).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import {
  asArray,
  at,
  find,
  fixture,
  helm,
  chartDir,
  installNotes,
  isObject,
  k8sSchemaError,
  KUBE_VERSION,
  only,
  render,
  strictFieldErrors,
  template,
  type K8sObject,
  type RenderOptions,
} from './helm.js';

const ALL_FEATURES = fixture('all-features.values.yaml');
const SIMULATED_GPUS = join(chartDir, 'examples/simulated-gpus.values.yaml');
const defaultValues: unknown = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8'));

const ALL =
  'all features (faults, kubernetes auth, every source, a DRA driver, privileged, ingress, servicemonitor, prometheusrule)';
const MINIMAL = 'token from an existing Secret, no Kubernetes API, no web';
const DRA_ONLY = 'DRA drivers only (no device plugin resources)';
/** Two DRA drivers and no device plugin. */
const draOnlyValues = {
  config: {
    resources: [],
    dra: [
      { driver: 'gpu.plugboard.example', simulated: { count: 4 }, taints: { effect: 'NoSchedule' } },
      {
        driver: 'nic.plugboard.example',
        paths: { patterns: ['/dev/nic*'] },
        faultDir: '/var/lib/kubelet/plugins/nic.plugboard.example/faults',
      },
    ],
  },
  gateway: { hostPaths: { dev: { enabled: true, path: '/dev' } } },
};

/** The renderings every invariant is checked against. */
const variants: Record<string, RenderOptions> = {
  defaults: {},
  [ALL]: { valuesFiles: [ALL_FEATURES], apiVersions: ['monitoring.coreos.com/v1'] },
  [MINIMAL]: {
    values: {
      auth: { token: { existingSecret: 'my-token', secretKey: 'bearer' } },
      gateway: { kubernetesApi: 'none' },
      web: { enabled: false },
      networkPolicy: { enabled: false },
    },
  },
  [DRA_ONLY]: { values: draOnlyValues },
};

const rendered = new Map(Object.entries(variants).map(([name, opts]) => [name, render(opts)]));
const defaults = rendered.get('defaults')!;
const allFeatures = rendered.get(ALL)!;
const minimal = rendered.get(MINIMAL)!;
const draOnly = rendered.get(DRA_ONLY)!;

function gatewayDaemonSet(objects: K8sObject[]): K8sObject {
  return only(objects, 'DaemonSet', '-gateway');
}

function podSpec(workload: K8sObject): Record<string, unknown> {
  const spec = at(workload, 'spec', 'template', 'spec');
  assert.ok(isObject(spec), `${workload.kind} ${workload.metadata.name} has a pod template`);
  return spec;
}

function container(workload: K8sObject, name: string): Record<string, unknown> {
  const c = asArray(podSpec(workload).containers).find((x) => at(x, 'name') === name);
  assert.ok(isObject(c), `${workload.metadata.name} has container ${name}`);
  return c;
}

function envValue(c: Record<string, unknown>, name: string): unknown {
  const entry = asArray(c.env).find((e) => at(e, 'name') === name);
  return at(entry, 'value') ?? at(entry, 'valueFrom');
}

function gatewayConfig(objects: K8sObject[]): Record<string, unknown> {
  const cm = only(objects, 'ConfigMap', '-gateway');
  const text = at(cm, 'data', 'config.yaml');
  assert.equal(typeof text, 'string');
  const config: unknown = parse(text as string);
  assert.ok(isObject(config));
  return config;
}

/** Whether a matchLabels selector selects the given labels. */
function selects(matchLabels: unknown, labels: unknown): boolean {
  if (!isObject(matchLabels) || !isObject(labels) || Object.keys(matchLabels).length === 0) return false;
  return Object.entries(matchLabels).every(([k, v]) => labels[k] === v);
}

function podLabels(workload: K8sObject): unknown {
  return at(workload, 'spec', 'template', 'metadata', 'labels');
}

describe('helm lint --strict', () => {
  for (const [name, args] of [
    ['defaults', []],
    ['all features', ['--values', ALL_FEATURES]],
  ] as const) {
    it(`passes with ${name}`, () => {
      const res = helm(['lint', '--strict', chartDir, '--kube-version', KUBE_VERSION, ...args]);
      assert.equal(res.status, 0, `${res.stdout}\n${res.stderr}`);
      assert.match(res.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    });
  }
});

describe('every rendered object is valid Kubernetes', () => {
  for (const [name, objects] of rendered) {
    it(`validates against the Kubernetes OpenAPI schemas: ${name}`, async () => {
      assert.ok(objects.length > 0);
      for (const obj of objects) {
        assert.ok(obj.metadata.name.length <= 63, `${obj.kind} name ${obj.metadata.name} fits 63 characters`);
        assert.equal(
          obj.metadata.labels?.['app.kubernetes.io/managed-by'],
          'Helm',
          `${obj.kind} carries chart labels`,
        );
        if (obj.kind === 'ServiceMonitor') {
          // Beyond the CRD schema: the fields Prometheus needs to find the gateways.
          assert.ok(isObject(at(obj, 'spec', 'selector', 'matchLabels')));
          assert.equal(at(obj, 'spec', 'endpoints', 0, 'port'), 'http');
          assert.equal(at(obj, 'spec', 'endpoints', 0, 'path'), '/metrics');
        }
        const error = await k8sSchemaError(obj);
        assert.equal(error, undefined, `${obj.kind}/${obj.metadata.name}: ${error}`);
      }
    });
  }

  it('has no unknown or mistyped field at any depth (TypeScript excess property checks)', () => {
    const labelled = [...rendered].flatMap(([variant, objects]) =>
      objects.map((object) => ({ label: `${variant}: ${object.kind}/${object.metadata.name}`, object })),
    );
    // One sabotaged copy proves the check can fail: a misspelt field deep in a container.
    const broken = structuredClone(gatewayDaemonSet(defaults));
    const gw = asArray(podSpec(broken).containers)[0];
    assert.ok(isObject(gw) && isObject(gw.securityContext));
    gw.securityContext.readOnlyRootFilesytem = true;
    const errors = strictFieldErrors([...labelled, { label: 'sabotaged', object: broken }]);
    assert.equal(errors.length, 1, errors.join('\n'));
    assert.match(errors[0]!, /^sabotaged: .*readOnlyRootFilesytem/s);
  });

  it('the schema validation itself rejects a broken object', async () => {
    const ds = structuredClone(gatewayDaemonSet(defaults));
    const volumes = asArray(podSpec(ds).volumes);
    const hostVolume = volumes.find((v) => isObject(at(v, 'hostPath')));
    assert.ok(isObject(hostVolume));
    hostVolume.hostPath = { path: '/var/lib/kubelet/device-plugins', type: 'Folder' };
    assert.match((await k8sSchemaError(ds)) ?? '', /hostPath\/type/);
  });
});

describe('gateway DaemonSet', () => {
  for (const [name, objects] of rendered) {
    describe(name, () => {
      const ds = gatewayDaemonSet(objects);
      const spec = podSpec(ds);
      const gw = container(ds, 'gateway');

      it('mounts host directories only, each with type Directory or DirectoryOrCreate', () => {
        const hostVolumes = asArray(spec.volumes).filter((v) => isObject(at(v, 'hostPath')));
        assert.ok(hostVolumes.length >= 3);
        for (const v of hostVolumes) {
          const path = at(v, 'hostPath', 'path');
          assert.ok(typeof path === 'string' && path.startsWith('/'), `absolute host path ${String(path)}`);
          assert.ok(!path.endsWith('.sock'), `${path} is a directory, not a socket file`);
          assert.ok(
            ['Directory', 'DirectoryOrCreate'].includes(at(v, 'hostPath', 'type') as string),
            `${String(at(v, 'name'))} (${path}) has type ${String(at(v, 'hostPath', 'type'))}`,
          );
        }
        const byPath = new Map(hostVolumes.map((v) => [at(v, 'hostPath', 'path'), at(v, 'name')]));
        const mounts = asArray(gw.volumeMounts);
        const mountOf = (hostPath: string) => mounts.find((m) => at(m, 'name') === byPath.get(hostPath));
        assert.equal(
          at(mountOf('/var/lib/kubelet/device-plugins'), 'mountPath'),
          '/var/lib/kubelet/device-plugins',
        );
        assert.equal(
          at(mountOf('/var/lib/kubelet/device-plugins'), 'readOnly'),
          undefined,
          'device-plugins is writable',
        );
        assert.equal(at(mountOf('/var/lib/kubelet/pod-resources'), 'readOnly'), true);
        for (const m of mounts)
          assert.equal(at(m, 'subPath') === undefined || at(m, 'name') === 'config', true);
      });

      it('takes NODE_NAME from the downward API and passes it to the gateway', () => {
        assert.deepEqual(envValue(gw, 'NODE_NAME'), { fieldRef: { fieldPath: 'spec.nodeName' } });
        assert.ok(asArray(gw.args).includes('--node-name=$(NODE_NAME)'));
      });

      it('is node-critical, tolerates CriticalAddonsOnly and rolls one node at a time by default', () => {
        assert.equal(spec.priorityClassName, 'system-node-critical');
        assert.ok(
          asArray(spec.tolerations).some(
            (t) => at(t, 'key') === 'CriticalAddonsOnly' && at(t, 'operator') === 'Exists',
          ),
        );
        assert.equal(at(ds, 'spec', 'updateStrategy', 'type'), 'RollingUpdate');
        assert.equal(at(ds, 'spec', 'updateStrategy', 'rollingUpdate', 'maxSurge'), 0);
        assert.ok(at(ds, 'spec', 'updateStrategy', 'rollingUpdate', 'maxUnavailable') !== undefined);
      });

      it('probes /healthz (liveness, startup) and /readyz (readiness) on the http port', () => {
        assert.equal(at(gw, 'livenessProbe', 'httpGet', 'path'), '/healthz');
        assert.equal(at(gw, 'startupProbe', 'httpGet', 'path'), '/healthz');
        assert.equal(at(gw, 'readinessProbe', 'httpGet', 'path'), '/readyz');
        for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
          assert.equal(at(gw, probe, 'httpGet', 'port'), 'http');
        }
        assert.equal(at(gw, 'ports', 0, 'name'), 'http');
      });

      it('sets resource requests and a memory limit', () => {
        assert.ok(at(gw, 'resources', 'requests', 'cpu'));
        assert.ok(at(gw, 'resources', 'requests', 'memory'));
        assert.ok(at(gw, 'resources', 'limits', 'memory'));
      });

      it('drops every capability, keeps the root filesystem read-only and runs as root only for the kubelet dirs', () => {
        assert.deepEqual(at(gw, 'securityContext', 'capabilities', 'drop'), ['ALL']);
        assert.equal(at(gw, 'securityContext', 'capabilities', 'add'), undefined);
        assert.equal(at(gw, 'securityContext', 'readOnlyRootFilesystem'), true);
        assert.equal(at(gw, 'securityContext', 'runAsUser'), 0);
        assert.equal(at(spec, 'hostNetwork'), undefined);
        assert.equal(at(spec, 'hostPID'), undefined);
        const privileged = at(gw, 'securityContext', 'privileged');
        if (privileged === true) {
          assert.equal(name, ALL, 'privileged only when gateway.privileged is set');
        } else {
          assert.equal(privileged, false);
          assert.equal(at(gw, 'securityContext', 'allowPrivilegeEscalation'), false);
        }
      });

      it('rolls when the config changes: checksum annotation of the ConfigMap', () => {
        assert.match(
          String(at(ds, 'spec', 'template', 'metadata', 'annotations', 'checksum/config')),
          /^[a-f0-9]{64}$/,
        );
      });
    });
  }

  it('mounts /dev and /sys read-only and the CDI dir writable only when enabled', () => {
    const mountPaths = (objects: K8sObject[]) =>
      new Map(
        asArray(container(gatewayDaemonSet(objects), 'gateway').volumeMounts).map((m) => [
          at(m, 'mountPath'),
          m,
        ]),
      );
    const off = mountPaths(defaults);
    for (const p of ['/dev', '/sys', '/var/run/cdi', '/var/lib/kubelet/plugins_registry'])
      assert.ok(!off.has(p), `${p} not mounted by default`);
    const on = mountPaths(allFeatures);
    assert.equal(at(on.get('/dev'), 'readOnly'), true);
    assert.equal(at(on.get('/sys'), 'readOnly'), true);
    assert.ok(on.has('/var/run/cdi'));
    assert.ok(on.has('/var/lib/kubelet/plugins_registry'));
  });

  it('passes the CLI flags of the gateway contract', () => {
    const args = asArray(container(gatewayDaemonSet(defaults), 'gateway').args);
    assert.deepEqual(args, [
      '--config=/etc/plugboard/config.yaml',
      '--device-plugin-dir=/var/lib/kubelet/device-plugins',
      '--pod-resources-socket=/var/lib/kubelet/pod-resources/kubelet.sock',
      '--listen=0.0.0.0:9400',
      '--node-name=$(NODE_NAME)',
      '--in-cluster',
      '--state-dir=/var/lib/plugboard',
      '--auth-token-file=/etc/plugboard/auth/token',
    ]);
    const noKube = asArray(container(gatewayDaemonSet(minimal), 'gateway').args);
    assert.ok(noKube.includes('--no-kube') && !noKube.includes('--in-cluster'));
    assert.ok(noKube.includes('--auth-token-file=/etc/plugboard/auth/bearer'));
    const k8sAuth = asArray(container(gatewayDaemonSet(allFeatures), 'gateway').args);
    assert.ok(!k8sAuth.some((a) => String(a).startsWith('--auth-token-file')));
    const v6 = render({ values: { gateway: { listenAddress: '::', extraArgs: ['--verbose'] } } });
    const v6args = asArray(container(gatewayDaemonSet(v6), 'gateway').args);
    assert.ok(v6args.includes('--listen=[::]:9400'));
    assert.equal(v6args.at(-1), '--verbose');
  });

  it('sets the memory tuning env (heap cap, malloc arenas) with room for it under the memory limit', () => {
    const gw = container(gatewayDaemonSet(render({})), 'gateway');
    const nodeOptions = String(envValue(gw, 'NODE_OPTIONS'));
    assert.equal(nodeOptions, at(defaultValues, 'gateway', 'nodeOptions'));
    assert.equal(envValue(gw, 'MALLOC_ARENA_MAX'), '2');
    // The heap cap plus code, stacks and the node binary (~60 MiB) must fit twice under the limit.
    const capMiB = Number(/--max-old-space-size=(\d+)/.exec(nodeOptions)?.[1]);
    const limit = String(at(gw, 'resources', 'limits', 'memory'));
    const limitMiB = Number(/^(\d+)Mi$/.exec(limit)?.[1]);
    assert.ok(
      capMiB > 0 && limitMiB >= 2 * capMiB + 60,
      `limit ${limit} leaves room for a ${capMiB} MiB heap`,
    );

    const plain = container(
      gatewayDaemonSet(render({ values: { gateway: { nodeOptions: '', mallocArenaMax: 0 } } })),
      'gateway',
    );
    assert.equal(envValue(plain, 'NODE_OPTIONS'), undefined);
    assert.equal(envValue(plain, 'MALLOC_ARENA_MAX'), undefined);
  });

  it('adds vendor tolerations and affinity from values', () => {
    const spec = podSpec(gatewayDaemonSet(allFeatures));
    assert.ok(asArray(spec.tolerations).some((t) => at(t, 'key') === 'nvidia.com/gpu'));
    assert.ok(isObject(at(spec, 'affinity', 'nodeAffinity')));
    assert.equal(
      at(gatewayDaemonSet(allFeatures), 'spec', 'updateStrategy', 'rollingUpdate', 'maxUnavailable'),
      '10%',
    );
  });
});

describe('gateway config', () => {
  it('keeps faults off by default and makes the gateway an observer: no resource, no DRA driver', () => {
    const config = gatewayConfig(defaults);
    assert.equal(at(config, 'gateway', 'faults', 'enabled'), false);
    assert.deepEqual(at(config, 'gateway', 'auth'), {}, 'token mode: the token file is a flag');
    assert.equal(at(config, 'gateway', 'podResources', 'pollIntervalMs'), 1000);
    assert.deepEqual(config.resources, []);
    assert.equal(config.dra, undefined, 'no dra: key without drivers');
    assert.equal(
      envValue(container(only(defaults, 'Deployment', '-web'), 'web'), 'PLUGBOARD_FAULTS_ENABLED'),
      'false',
    );
  });

  it('examples/simulated-gpus.values.yaml brings back the demo: eight simulated GPUs on two NUMA nodes', () => {
    const config = gatewayConfig(render({ valuesFiles: [SIMULATED_GPUS] }));
    assert.deepEqual(config.resources, [
      { name: 'plugboard.example/gpu', simulated: { count: 8, numaNodes: [0, 1] } },
    ]);
  });

  it('turns faults and kubernetes auth on, and merges config.gateway verbatim', () => {
    const config = gatewayConfig(allFeatures);
    assert.equal(at(config, 'gateway', 'faults', 'enabled'), true);
    assert.deepEqual(at(config, 'gateway', 'auth'), {
      kubernetes: { enabled: true, group: 'plugboard.io', resource: 'faults', verb: 'create' },
    });
    assert.deepEqual(at(config, 'gateway', 'stream'), { allowedOrigins: [], heartbeatMs: 15000 });
    assert.equal(asArray(config.resources).length, 3);
  });

  it('changes the checksum annotation exactly when the config changes', () => {
    const checksum = (opts: RenderOptions) =>
      at(gatewayDaemonSet(render(opts)), 'spec', 'template', 'metadata', 'annotations', 'checksum/config');
    const base = checksum({});
    assert.equal(checksum({}), base, 'stable across renders');
    assert.equal(
      checksum({ values: { web: { replicas: 5 } } }),
      base,
      'unrelated values do not roll the gateways',
    );
    assert.notEqual(checksum({ values: { faults: { enabled: true } } }), base);
    assert.notEqual(
      checksum({
        values: {
          config: { resources: [{ name: 'plugboard.example/gpu', simulated: { count: 4, numaNodes: [0] } }] },
        },
      }),
      base,
    );
  });
});

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };

/** Every RBAC rule the chart grants, keyed by `<Kind>/<name>` of the role. */
function rbacRules(objects: K8sObject[]): Map<string, Rule[]> {
  const roles = objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role');
  return new Map(roles.map((r) => [`${r.kind}/${r.metadata.name}`, asArray(r.rules) as Rule[]]));
}

describe('RBAC: least privilege, exactly as listed', () => {
  // Every install, the observer's whole ClusterRole: the informers of sources/kube.ts (list + watch,
  // no get) and the Events it creates (never patches).
  const gatewayRead = { apiGroups: [''], resources: ['nodes', 'pods'], verbs: ['list', 'watch'] };
  const draRead = {
    apiGroups: ['resource.k8s.io'],
    resources: ['resourceslices', 'resourceclaims', 'devicetaintrules', 'deviceclasses'],
    verbs: ['list', 'watch'],
  };
  const observer = [gatewayRead, draRead];
  const events = { apiGroups: [''], resources: ['events'], verbs: ['create'] };
  const webDiscovery = { apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch'] };
  // config.dra: exactly the calls of packages/plugin/src/dra/kube-api.ts (read the Node's UID and a
  // claim; create, replace = update, delete with preconditions; no patch, no claim status).
  const drivers = [
    { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
    { apiGroups: ['resource.k8s.io'], resources: ['resourceclaims'], verbs: ['get'] },
    { apiGroups: ['resource.k8s.io'], resources: ['resourceslices'], verbs: ['create', 'update', 'delete'] },
  ];
  // gateway.rbac.deviceTaintRules: the calls of apps/node-gateway/src/faults/taint-rules.ts.
  const drills = {
    apiGroups: ['resource.k8s.io'],
    resources: ['devicetaintrules'],
    verbs: ['get', 'create', 'update', 'delete'],
  };
  // For people, not bound by the chart: what `kubectl plugboard` needs to use the pod proxy.
  const kubectlPlugin: [string, Rule[]] = [
    'Role/pb-plugboard-kubectl',
    [
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
      { apiGroups: [''], resources: ['pods/proxy'], verbs: ['get', 'create', 'delete'] },
    ],
  ];

  it('defaults (an observer): gateway lists/watches its node, pods and the DRA objects and creates events, writes nothing else; web lists/watches pods', () => {
    assert.deepEqual(
      rbacRules(defaults),
      new Map([
        ['ClusterRole/pb-plugboard-gateway', observer],
        ['Role/pb-plugboard-gateway-events', [events]],
        ['Role/pb-plugboard-web', [webDiscovery]],
        kubectlPlugin,
      ]),
    );
    assert.equal(only(defaults, 'Role', '-gateway-events').metadata.namespace, 'default');
    assert.equal(only(defaults, 'Role', '-web').metadata.namespace, 'plugboard');
  });

  it('kubernetes auth adds tokenreviews/subjectaccessreviews create and the fault-operator role; nodesProxy adds get on nodes/proxy; config.dra adds the driver calls; deviceTaintRules the drills', () => {
    assert.deepEqual(
      rbacRules(allFeatures),
      new Map([
        [
          'ClusterRole/pb-plugboard-gateway',
          [
            ...observer,
            { apiGroups: [''], resources: ['nodes/proxy'], verbs: ['get'] },
            ...drivers,
            drills,
            { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
            { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
          ],
        ],
        [
          'ClusterRole/pb-plugboard-fault-operator',
          [{ apiGroups: ['plugboard.io'], resources: ['faults'], verbs: ['create'] }],
        ],
        ['Role/pb-plugboard-gateway-events', [events]],
        ['Role/pb-plugboard-web', [webDiscovery]],
        kubectlPlugin,
      ]),
    );
  });

  it('gateway.rbac.nodesProxy grants get on nodes/proxy only (no other verb), and turns configz on in the gateway', () => {
    const objects = render({ values: { gateway: { rbac: { nodesProxy: true } } } });
    assert.deepEqual(rbacRules(objects).get('ClusterRole/pb-plugboard-gateway'), [
      ...observer,
      { apiGroups: [''], resources: ['nodes/proxy'], verbs: ['get'] },
    ]);
    assert.equal(at(gatewayConfig(objects), 'gateway', 'topology', 'configz', 'enabled'), true);
    // Off (the default): no permission, and the gateway is told not to ask.
    assert.equal(at(gatewayConfig(defaults), 'gateway', 'topology', 'configz', 'enabled'), false);
    // The gateway's own RBAC left to the operator: the value still tells the gateway to read configz.
    const external = render({ values: { gateway: { rbac: { create: false, nodesProxy: true } } } });
    assert.equal(rbacRules(external).get('ClusterRole/pb-plugboard-gateway'), undefined);
    assert.equal(at(gatewayConfig(external), 'gateway', 'topology', 'configz', 'enabled'), true);
  });

  it('a config.dra driver with deviceStatus adds patch on resourceclaims/status and associated-node:patch on resourceclaims/driver named after it (and only it)', () => {
    const objects = render({
      values: {
        ...draOnlyValues,
        config: {
          ...draOnlyValues.config,
          dra: draOnlyValues.config.dra.map((d, i) => (i === 0 ? { ...d, deviceStatus: true } : d)),
        },
      },
    });
    assert.deepEqual(rbacRules(objects).get('ClusterRole/pb-plugboard-gateway'), [
      ...observer,
      ...drivers,
      { apiGroups: ['resource.k8s.io'], resources: ['resourceclaims/status'], verbs: ['patch'] },
      {
        apiGroups: ['resource.k8s.io'],
        resources: ['resourceclaims/driver'],
        resourceNames: ['gpu.plugboard.example'],
        verbs: ['associated-node:patch'],
      },
    ]);
  });

  it('config.dra grants the Node and claim reads and the ResourceSlice writes the drivers make, nothing else', () => {
    assert.deepEqual(
      rbacRules(draOnly),
      new Map([
        ['ClusterRole/pb-plugboard-gateway', [...observer, ...drivers]],
        ['Role/pb-plugboard-gateway-events', [events]],
        ['Role/pb-plugboard-web', [webDiscovery]],
        kubectlPlugin,
      ]),
    );
    for (const objects of [defaults, minimal]) {
      const verbs = [...rbacRules(objects).values()]
        .flat()
        .filter((r) => r.apiGroups.includes('resource.k8s.io'))
        .flatMap((r) => r.verbs);
      assert.ok(
        verbs.every((v) => v === 'list' || v === 'watch'),
        'no resource.k8s.io write (or get) without config.dra',
      );
    }
  });

  it('gateway.rbac.deviceTaintRules adds get/create/update/delete on devicetaintrules, nothing else', () => {
    const objects = render({
      values: { faults: { enabled: true }, gateway: { rbac: { deviceTaintRules: true } } },
    });
    assert.deepEqual(rbacRules(objects).get('ClusterRole/pb-plugboard-gateway'), [...observer, drills]);
    assert.deepEqual(rbacRules(objects).get('Role/pb-plugboard-gateway-events'), [events]);
  });

  it('no Kubernetes API: no gateway RBAC and no ServiceAccount token', () => {
    const objects = minimal;
    assert.deepEqual(rbacRules(objects), new Map([kubectlPlugin]));
    assert.equal(podSpec(gatewayDaemonSet(objects)).automountServiceAccountToken, false);
  });

  it('binds every role to the chart ServiceAccounts only, never with wildcards', () => {
    for (const objects of [defaults, allFeatures, draOnly]) {
      for (const rules of rbacRules(objects).values()) {
        for (const rule of rules) {
          for (const field of [rule.apiGroups, rule.resources, rule.verbs]) assert.ok(!field.includes('*'));
        }
      }
      const serviceAccounts = new Set(find(objects, 'ServiceAccount').map((sa) => sa.metadata.name));
      for (const binding of objects.filter(
        (o) => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding',
      )) {
        for (const subject of asArray(binding.subjects)) {
          assert.equal(at(subject, 'kind'), 'ServiceAccount');
          assert.ok(
            serviceAccounts.has(at(subject, 'name') as string),
            `${binding.metadata.name} binds a chart ServiceAccount`,
          );
          assert.equal(at(subject, 'namespace'), 'plugboard');
        }
        const roleName = at(binding, 'roleRef', 'name');
        assert.ok(
          rbacRules(objects).has(`${String(at(binding, 'roleRef', 'kind'))}/${String(roleName)}`),
          `${String(roleName)} exists`,
        );
      }
    }
  });
});

describe('DRA drivers (config.dra)', () => {
  const PLUGINS = '/var/lib/kubelet/plugins';
  /** hostPath volumes of the gateway by host path, with their mount (same name) in the container. */
  function hostMounts(objects: K8sObject[]): Map<string, { type: unknown; mount: unknown }> {
    const ds = gatewayDaemonSet(objects);
    const mounts = asArray(container(ds, 'gateway').volumeMounts);
    return new Map(
      asArray(podSpec(ds).volumes)
        .filter((v) => isObject(at(v, 'hostPath')))
        .map((v) => [
          String(at(v, 'hostPath', 'path')),
          {
            type: at(v, 'hostPath', 'type'),
            mount: mounts.find((m) => at(m, 'name') === at(v, 'name')),
          },
        ]),
    );
  }
  const policies = (objects: K8sObject[]) =>
    objects.filter((o) => o.apiVersion.startsWith('admissionregistration.k8s.io/'));

  it('off by default: no DRA mounts, no admission policy, no `dra:` in the config (its checksum unchanged)', () => {
    for (const objects of [defaults, minimal]) {
      const paths = [...hostMounts(objects).keys()];
      assert.ok(!paths.some((p) => p.startsWith(`${PLUGINS}/`) || p === PLUGINS), paths.join(', '));
      assert.deepEqual(policies(objects), []);
      assert.ok(!('dra' in gatewayConfig(objects)));
    }
    assert.ok(!hostMounts(defaults).has('/var/lib/kubelet/plugins_registry'));
    assert.ok(!hostMounts(defaults).has('/var/run/cdi'));
  });

  it("mounts plugins_registry, the CDI directory and each driver's own plugins directory read-write, never the whole plugins directory", () => {
    const mounts = hostMounts(draOnly);
    for (const [path, type, mountPath] of [
      ['/var/lib/kubelet/plugins_registry', 'Directory', '/var/lib/kubelet/plugins_registry'],
      ['/var/run/cdi', 'DirectoryOrCreate', '/var/run/cdi'],
      [`${PLUGINS}/gpu.plugboard.example`, 'DirectoryOrCreate', `${PLUGINS}/gpu.plugboard.example`],
      [`${PLUGINS}/nic.plugboard.example`, 'DirectoryOrCreate', `${PLUGINS}/nic.plugboard.example`],
    ] as const) {
      const m = mounts.get(path);
      assert.ok(m, `${path} is mounted`);
      assert.equal(m.type, type, `${path} type`);
      assert.equal(at(m.mount, 'mountPath'), mountPath, `${path} mount path`);
      assert.equal(at(m.mount, 'readOnly'), undefined, `${path} is writable`);
    }
    assert.ok(!mounts.has(PLUGINS), 'not the whole plugins directory');
    // Moved plugins_registry and CDI directories are mounted where the gateway looks for them.
    const moved = hostMounts(
      render({
        values: {
          ...draOnlyValues,
          gateway: {
            hostPaths: {
              pluginsRegistry: { enabled: false, path: '/k/plugins_registry' },
              cdi: { enabled: false, path: '/etc/cdi' },
            },
          },
        },
      }),
    );
    assert.equal(
      at(moved.get('/k/plugins_registry')?.mount, 'mountPath'),
      '/var/lib/kubelet/plugins_registry',
    );
    assert.equal(at(moved.get('/etc/cdi')?.mount, 'mountPath'), '/var/run/cdi');
  });

  /** The gateway's DRA directory flags, in order. */
  const draArgs = (objects: K8sObject[]) =>
    asArray(container(gatewayDaemonSet(objects), 'gateway').args)
      .map(String)
      .filter((a) => /^--(plugins-dir|plugins-registry-dir|cdi-dir)=/.test(a));

  it('tells the gateway the three DRA directories where they are mounted, and only with config.dra', () => {
    assert.deepEqual(draArgs(draOnly), [
      `--plugins-dir=${PLUGINS}`,
      '--plugins-registry-dir=/var/lib/kubelet/plugins_registry',
      '--cdi-dir=/var/run/cdi',
    ]);
    // Each names the container side of the volume the chart mounts for it.
    const mounts = hostMounts(draOnly);
    assert.equal(
      at(mounts.get('/var/lib/kubelet/plugins_registry')?.mount, 'mountPath'),
      '/var/lib/kubelet/plugins_registry',
    );
    assert.equal(at(mounts.get('/var/run/cdi')?.mount, 'mountPath'), '/var/run/cdi');
    for (const d of draOnlyValues.config.dra) {
      assert.equal(at(mounts.get(`${PLUGINS}/${d.driver}`)?.mount, 'mountPath'), `${PLUGINS}/${d.driver}`);
    }
    for (const objects of [defaults, minimal]) assert.deepEqual(draArgs(objects), []);
    // The CDI directory enabled for device plugins alone is no reason to pass the DRA flags.
    const cdiOnly = render({ values: { gateway: { hostPaths: { cdi: { enabled: true } } } } });
    assert.deepEqual(draArgs(cdiOnly), []);
  });

  it('follows a moved kubelet plugins directory: per-driver mounts at the new host path, --plugins-dir names it', () => {
    const objects = render({
      values: {
        ...draOnlyValues,
        config: {
          ...draOnlyValues.config,
          dra: [
            draOnlyValues.config.dra[0],
            { ...draOnlyValues.config.dra[1], faultDir: '/k/plugins/nic.plugboard.example/faults' },
          ],
        },
        gateway: {
          hostPaths: {
            plugins: '/k/plugins',
            pluginsRegistry: { enabled: false, path: '/k/plugins_registry' },
          },
        },
      },
    });
    const mounts = hostMounts(objects);
    for (const driver of ['gpu.plugboard.example', 'nic.plugboard.example']) {
      const m = mounts.get(`/k/plugins/${driver}`);
      assert.ok(m, `/k/plugins/${driver} is mounted`);
      assert.equal(m.type, 'DirectoryOrCreate');
      assert.equal(at(m.mount, 'mountPath'), `/k/plugins/${driver}`, 'at the same path as on the host');
      assert.ok(!mounts.has(`${PLUGINS}/${driver}`), `nothing under ${PLUGINS}`);
    }
    assert.ok(!mounts.has('/k/plugins'), 'not the whole plugins directory');
    assert.deepEqual(draArgs(objects), [
      '--plugins-dir=/k/plugins',
      '--plugins-registry-dir=/var/lib/kubelet/plugins_registry',
      '--cdi-dir=/var/run/cdi',
    ]);
    assert.equal(
      at(mounts.get('/k/plugins_registry')?.mount, 'mountPath'),
      '/var/lib/kubelet/plugins_registry',
    );
    const trailingSlash = render({
      values: {
        config: { dra: [draOnlyValues.config.dra[0]] },
        gateway: { hostPaths: { plugins: '/k/plugins/' } },
      },
    });
    assert.equal(draArgs(trailingSlash)[0], '--plugins-dir=/k/plugins');
    assert.ok(hostMounts(trailingSlash).has('/k/plugins/gpu.plugboard.example'));
    // A fault directory under the old default is no longer the driver's own.
    const res = template({
      values: {
        config: {
          dra: [
            {
              driver: 'gpu.plugboard.example',
              simulated: { count: 1 },
              faultDir: `${PLUGINS}/gpu.plugboard.example/faults`,
            },
          ],
        },
        gateway: { hostPaths: { plugins: '/k/plugins' } },
      },
    });
    assert.notEqual(res.status, 0);
    assert.match(
      res.stderr,
      /config\.dra\[0\]\.faultDir: .* use a directory below \/k\/plugins\/gpu\.plugboard\.example\//,
    );
  });

  it('renders the drivers verbatim into the gateway config, template variables included, and rolls the gateways', () => {
    assert.deepEqual(gatewayConfig(draOnly).dra, draOnlyValues.config.dra);
    assert.deepEqual(gatewayConfig(draOnly).resources, []);
    assert.equal(
      at(gatewayConfig(allFeatures), 'dra', 0, 'attributes', 'productName', 'string'),
      'Plugboard PB-100 ({{name}})',
    );
    const checksum = (objects: K8sObject[]) =>
      at(gatewayDaemonSet(objects), 'spec', 'template', 'metadata', 'annotations', 'checksum/config');
    assert.notEqual(checksum(draOnly), checksum(defaults));
  });

  it("limits the gateway's ResourceSlice writes to its own node and drivers (ValidatingAdmissionPolicy, Deny)", () => {
    const objects = render({
      namespace: 'gpu-ops',
      values: { ...draOnlyValues, gateway: { serviceAccount: { name: 'gw' } } },
    });
    const policy = only(objects, 'ValidatingAdmissionPolicy');
    const binding = only(objects, 'ValidatingAdmissionPolicyBinding');
    assert.equal(policy.metadata.name, 'pb-plugboard-gateway-resourceslices');
    assert.equal(at(policy, 'spec', 'failurePolicy'), 'Fail');
    assert.deepEqual(at(policy, 'spec', 'matchConstraints', 'resourceRules'), [
      {
        apiGroups: ['resource.k8s.io'],
        apiVersions: ['v1beta1', 'v1beta2', 'v1'],
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        resources: ['resourceslices'],
      },
    ]);
    // Only the gateway's own requests are judged, by the ServiceAccount the DaemonSet runs as.
    assert.equal(podSpec(gatewayDaemonSet(objects)).serviceAccountName, 'gw');
    assert.deepEqual(asArray(at(policy, 'spec', 'matchConditions')), [
      {
        name: 'isGateway',
        expression: 'request.userInfo.username == "system:serviceaccount:gpu-ops:gw"',
      },
    ]);
    const variables = new Map(
      asArray(at(policy, 'spec', 'variables')).map((v) => [at(v, 'name'), at(v, 'expression')]),
    );
    assert.match(
      String(variables.get('userNodeName')),
      /request\.userInfo\.extra\[\?'authentication\.kubernetes\.io\/node-name'\]/,
    );
    assert.deepEqual(JSON.parse(String(variables.get('drivers'))), [
      'gpu.plugboard.example',
      'nic.plugboard.example',
    ]);
    assert.match(String(variables.get('slices')), /UPDATE.*\[oldObject, object\]/);
    const validations = asArray(at(policy, 'spec', 'validations')).map((v) => at(v, 'expression'));
    assert.deepEqual(validations, [
      'variables.userNodeName != ""',
      'variables.foreignNodes.size() == 0',
      'variables.foreignDrivers.size() == 0',
    ]);
    assert.deepEqual(at(binding, 'spec'), {
      policyName: 'pb-plugboard-gateway-resourceslices',
      validationActions: ['Deny'],
    });
    // RBAC left to the operator: no policy either (both are cluster-scoped objects the chart grants with).
    const external = render({ values: { ...draOnlyValues, gateway: { rbac: { create: false } } } });
    assert.deepEqual(policies(external), []);
  });
});

describe('web', () => {
  const web = only(defaults, 'Deployment', '-web');
  const c = container(web, 'web');

  it('runs non-root with a read-only root filesystem and no capabilities', () => {
    assert.equal(at(podSpec(web), 'securityContext', 'runAsNonRoot'), true);
    assert.equal(at(c, 'securityContext', 'readOnlyRootFilesystem'), true);
    assert.equal(at(c, 'securityContext', 'allowPrivilegeEscalation'), false);
    assert.deepEqual(at(c, 'securityContext', 'capabilities', 'drop'), ['ALL']);
    // Everything Next writes at run time (found by running the image layout) is an emptyDir.
    const writable = asArray(c.volumeMounts).map((m) => at(m, 'mountPath'));
    for (const path of ['/tmp', '/app/apps/web/.next/cache', '/app/apps/web/.next/server/route-cache']) {
      assert.ok(writable.includes(path), `${path} is writable`);
    }
  });

  it('probes its health endpoint on the http port', () => {
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
      assert.equal(at(c, probe, 'httpGet', 'path'), '/api/healthz');
      assert.equal(at(c, probe, 'httpGet', 'port'), 'http');
    }
    assert.equal(at(c, 'ports', 0, 'containerPort'), 3000);
  });

  it('discovers exactly the gateway pods: selector, namespace and port match the DaemonSet', () => {
    const ds = gatewayDaemonSet(defaults);
    const selector = String(envValue(c, 'PLUGBOARD_GATEWAY_SELECTOR'));
    const matchLabels: Record<string, string> = Object.fromEntries(
      selector.split(',').map((kv): [string, string] => {
        const [key = '', value = ''] = kv.split('=');
        return [key, value];
      }),
    );
    assert.ok(selects(matchLabels, podLabels(ds)), `${selector} selects the gateway pods`);
    assert.ok(!selects(matchLabels, podLabels(web)), `${selector} does not select the web pods`);
    assert.deepEqual(envValue(c, 'PLUGBOARD_GATEWAY_NAMESPACE'), {
      fieldRef: { fieldPath: 'metadata.namespace' },
    });
    assert.equal(
      envValue(c, 'PLUGBOARD_GATEWAY_PORT'),
      String(at(container(ds, 'gateway'), 'ports', 0, 'containerPort')),
    );
    assert.equal(envValue(c, 'PLUGBOARD_GATEWAY_DISCOVERY'), 'kubernetes');
  });

  it('never holds the gateway token nor fault permissions: operators present their own', () => {
    for (const objects of [defaults, allFeatures]) {
      const w = only(objects, 'Deployment', '-web');
      assert.ok(!asArray(podSpec(w).volumes).some((v) => isObject(at(v, 'secret'))), 'no Secret volume');
      assert.ok(!asArray(container(w, 'web').env).some((e) => String(at(e, 'name')).includes('TOKEN')));
      for (const binding of objects.filter((o) => o.kind.endsWith('Binding'))) {
        if (at(binding, 'subjects', 0, 'name') === 'pb-plugboard-web') {
          assert.equal(
            at(binding, 'roleRef', 'name'),
            'pb-plugboard-web',
            'the web is bound to its discovery Role only',
          );
        }
      }
    }
  });

  it('Service, PodDisruptionBudget and Ingress select and route to the web pods', () => {
    const svc = only(defaults, 'Service', '-web');
    assert.ok(selects(at(svc, 'spec', 'selector'), podLabels(web)));
    assert.equal(at(svc, 'spec', 'ports', 0, 'targetPort'), 'http');
    const pdb = only(defaults, 'PodDisruptionBudget', '-web');
    assert.ok(selects(at(pdb, 'spec', 'selector', 'matchLabels'), podLabels(web)));
    assert.equal(at(pdb, 'spec', 'maxUnavailable'), 1);
    assert.equal(find(defaults, 'Ingress').length, 0, 'no Ingress by default');
    const ingress = only(allFeatures, 'Ingress', '-web');
    assert.equal(
      at(ingress, 'spec', 'rules', 0, 'http', 'paths', 0, 'backend', 'service', 'name'),
      'pb-plugboard-web',
    );
    assert.equal(at(ingress, 'spec', 'tls', 0, 'secretName'), 'plugboard-tls');
  });
});

describe('NetworkPolicy', () => {
  it('admits only the web pods and the test pod to the gateways, plus configured metrics peers', () => {
    for (const objects of [defaults, allFeatures]) {
      const np = only(objects, 'NetworkPolicy', '-gateway');
      assert.ok(selects(at(np, 'spec', 'podSelector', 'matchLabels'), podLabels(gatewayDaemonSet(objects))));
      assert.deepEqual(at(np, 'spec', 'policyTypes'), ['Ingress']);
      const rules = asArray(at(np, 'spec', 'ingress'));
      assert.equal(rules.length, 1);
      assert.deepEqual(at(rules[0], 'ports'), [{ port: 'http', protocol: 'TCP' }]);
      const peers = asArray(at(rules[0], 'from'));
      const web = only(objects, 'Deployment', '-web');
      const testPod = only(objects, 'Pod', '-test-gateway-readyz');
      assert.ok(selects(at(peers[0], 'podSelector', 'matchLabels'), podLabels(web)), 'web pods admitted');
      assert.ok(
        selects(at(peers[1], 'podSelector', 'matchLabels'), testPod.metadata.labels),
        'test pod admitted',
      );
      for (const peer of peers.slice(0, 2))
        assert.equal(at(peer, 'namespaceSelector'), undefined, 'same namespace only');
      assert.equal(peers.length, objects === defaults ? 2 : 3);
    }
    assert.equal(
      at(
        only(allFeatures, 'NetworkPolicy'),
        'spec',
        'ingress',
        0,
        'from',
        2,
        'namespaceSelector',
        'matchLabels',
        'kubernetes.io/metadata.name',
      ),
      'monitoring',
    );
  });
});

describe('helm test hook', () => {
  it('checks /readyz on every gateway behind the headless Service, non-root', () => {
    const pod = only(defaults, 'Pod', '-test-gateway-readyz');
    assert.equal(pod.metadata.annotations?.['helm.sh/hook'], 'test');
    const svc = only(defaults, 'Service', '-gateway');
    assert.equal(at(svc, 'spec', 'clusterIP'), 'None');
    assert.ok(selects(at(svc, 'spec', 'selector'), podLabels(gatewayDaemonSet(defaults))));
    const script = String(at(pod, 'spec', 'containers', 0, 'args', 0));
    assert.match(script, /pb-plugboard-gateway\.plugboard\.svc/);
    assert.match(script, /const port = 9400;/);
    assert.match(script, /\/readyz/);
    assert.equal(at(pod, 'spec', 'securityContext', 'runAsNonRoot'), true);
    assert.deepEqual(at(pod, 'spec', 'containers', 0, 'securityContext', 'capabilities', 'drop'), ['ALL']);
  });
});

describe('token auth Secret', () => {
  it('is generated when no existing Secret is named, and mounted read-only into the gateway', () => {
    const secret = only(defaults, 'Secret', '-auth');
    const token = Buffer.from(String(at(secret, 'data', 'token')), 'base64').toString();
    assert.match(token, /^[A-Za-z0-9]{48}$/);
    const ds = gatewayDaemonSet(defaults);
    const volume = asArray(podSpec(ds).volumes).find((v) => at(v, 'name') === 'auth-token');
    assert.equal(at(volume, 'secret', 'secretName'), 'pb-plugboard-auth');
    assert.equal(at(volume, 'secret', 'defaultMode'), 0o400);
    const mounts = asArray(container(ds, 'gateway').volumeMounts);
    assert.ok(mounts.some((m) => at(m, 'name') === 'auth-token' && at(m, 'readOnly') === true));
  });

  it('uses an existing Secret without rendering one', () => {
    const objects = minimal;
    assert.equal(find(objects, 'Secret').length, 0);
    const volume = asArray(podSpec(gatewayDaemonSet(objects)).volumes).find(
      (v) => at(v, 'name') === 'auth-token',
    );
    assert.equal(at(volume, 'secret', 'secretName'), 'my-token');
    assert.deepEqual(at(volume, 'secret', 'items'), [{ key: 'bearer', path: 'bearer' }]);
  });

  it('kubernetes mode renders no token Secret and mounts none', () => {
    assert.equal(find(allFeatures, 'Secret').length, 0);
    assert.ok(
      !asArray(podSpec(gatewayDaemonSet(allFeatures)).volumes).some((v) => at(v, 'name') === 'auth-token'),
    );
  });
});

describe('values the schema cannot judge fail the render with a reason', () => {
  const draDriver = { driver: 'gpu.plugboard.example', simulated: { count: 1 } };
  for (const [name, values, expected] of [
    [
      'kubernetes auth without the Kubernetes API',
      { auth: { mode: 'kubernetes' }, gateway: { kubernetesApi: 'none' } },
      /auth\.mode=kubernetes needs gateway\.kubernetesApi=in-cluster/,
    ],
    [
      'DeviceTaintRule drills without faults',
      { gateway: { rbac: { deviceTaintRules: true } } },
      /gateway\.rbac\.deviceTaintRules needs faults\.enabled=true/,
    ],
    [
      'DeviceTaintRule drills without the Kubernetes API',
      { faults: { enabled: true }, gateway: { kubernetesApi: 'none', rbac: { deviceTaintRules: true } } },
      /gateway\.rbac\.deviceTaintRules needs gateway\.kubernetesApi=in-cluster/,
    ],
    [
      'the same resource twice',
      { config: { resources: [{ name: 'a.example/x' }, { name: 'a.example/x' }] } },
      /config\.resources\[1\]\.name: "a\.example\/x" is listed twice/,
    ],
    [
      'the same DRA driver twice',
      { config: { dra: [draDriver, draDriver] } },
      /config\.dra\[1\]\.driver: "gpu\.plugboard\.example" is listed twice/,
    ],
    [
      'a DRA driver without the Kubernetes API',
      { config: { dra: [draDriver] }, gateway: { kubernetesApi: 'none' } },
      /config\.dra needs gateway\.kubernetesApi=in-cluster/,
    ],
    [
      "a DRA fault directory outside the driver's own directory",
      { config: { dra: [{ ...draDriver, faultDir: '/var/lib/kubelet/plugins/other/faults' }] } },
      /config\.dra\[0\]\.faultDir: .* not writable in the gateway pod; use a directory below \/var\/lib\/kubelet\/plugins\/gpu\.plugboard\.example\//,
    ],
  ] as const) {
    it(name, () => {
      const res = template({ values });
      assert.notEqual(res.status, 0);
      assert.match(res.stderr, expected);
    });
  }
});

describe('NOTES.txt', () => {
  it('tells how to open the dashboard, check the gateways and get the token', () => {
    const notes = installNotes({ release: 'plugboard' });
    assert.match(notes, /kubectl -n plugboard port-forward service\/plugboard-web 8080:80/);
    assert.match(notes, /helm test plugboard -n plugboard/);
    assert.match(notes, /rollout status daemonset\/plugboard-gateway/);
    assert.match(notes, /Fault injection: disabled/);
    assert.match(notes, /get secret plugboard-auth -o jsonpath='\{\.data\.token\}' \| base64 -d/);
    assert.match(notes, /set networkPolicy\.metricsFrom/);
  });

  it('names the Ingress URL, warns that faults are live and names the fault-operator role', () => {
    const notes = installNotes({ release: 'plugboard', valuesFiles: [ALL_FEATURES] });
    assert.match(notes, /https:\/\/plugboard\.example\.com\//);
    assert.doesNotMatch(notes, /port-forward/);
    assert.match(notes, /Fault injection: ENABLED/);
    assert.match(notes, /"create" on "faults\.plugboard\.io" \(ClusterRole plugboard-fault-operator\)/);
    assert.doesNotMatch(notes, /metricsFrom/);
  });

  it('says an install with nothing to serve is an observer, and one with devices is not', () => {
    assert.match(installNotes({ release: 'plugboard' }), /Observer: the gateways run no device plugin/);
    assert.doesNotMatch(installNotes({ release: 'plugboard', valuesFiles: [ALL_FEATURES] }), /Observer:/);
  });

  it('warns, only when DeviceTaintRule drills are on, that NoExecute evicts and None is the dry run', () => {
    const off = installNotes({ release: 'plugboard', values: { faults: { enabled: true } } });
    assert.doesNotMatch(off, /DeviceTaintRule/);
    const on = installNotes({
      release: 'plugboard',
      values: { faults: { enabled: true }, gateway: { rbac: { deviceTaintRules: true } } },
    });
    assert.match(on, /WARNING: DeviceTaintRule drills are ENABLED/);
    assert.match(on, /With taint NoExecute, the device taint eviction controller EVICTS every pod/);
    assert.match(on, /taint None first: a dry run/);
    assert.match(
      on,
      /kubectl get devicetaintrules -l app\.kubernetes\.io\/managed-by=plugboard,plugboard\.dev\/fault=simulated/,
    );
  });
});

describe('Grafana dashboard ConfigMap', () => {
  it('is off by default and, when on, carries the dashboard JSON with the sidecar label', () => {
    assert.equal(find(defaults, 'ConfigMap', '-grafana-dashboard').length, 0);
    const cm = only(allFeatures, 'ConfigMap', '-grafana-dashboard');
    assert.equal(cm.metadata.namespace, 'monitoring');
    assert.equal(cm.metadata.labels?.grafana_dashboard, '1');
    const dashboard: unknown = JSON.parse(String(at(cm, 'data', 'plugboard.json')));
    assert.equal(at(dashboard, 'uid'), 'plugboard-devices');
    assert.ok(asArray(at(dashboard, 'panels')).length >= 10);
  });
});

describe('web topology spread', () => {
  it("fills in the web pods' label selector only where a constraint has none", () => {
    const objects = render({
      values: {
        web: {
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: 'zone',
              whenUnsatisfiable: 'DoNotSchedule',
              labelSelector: { matchLabels: { x: 'y' } },
            },
            { maxSkew: 2, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway' },
          ],
        },
      },
    });
    const web = only(objects, 'Deployment', '-web');
    const constraints = asArray(podSpec(web).topologySpreadConstraints);
    assert.deepEqual(at(constraints[0], 'labelSelector'), { matchLabels: { x: 'y' } });
    assert.ok(selects(at(constraints[1], 'labelSelector', 'matchLabels'), podLabels(web)));
  });
});
