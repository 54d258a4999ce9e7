// The demo file's DRA parts: DeviceClasses, templates, claims and workloads naming them — the
// references checked at load, the objects each node's API gets, the Pod a workload becomes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { demoSchema, draExtendedResourceNames, draObjectsFor, podFor } from './demo-config.js';

const claimSpec = { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu.example' } }] } };

const base = {
  nodes: [
    { name: 'node-a', config: 'a.yaml' },
    { name: 'node-b', config: 'b.yaml' },
  ],
  deviceClasses: [{ name: 'gpu.example', spec: { selectors: [] } }],
  resourceClaimTemplates: [{ namespace: 'ml', name: 'one-gpu', spec: { spec: claimSpec } }],
  resourceClaims: [{ namespace: 'ml', name: 'shared-gpu', spec: claimSpec }],
};

const workload = (extra: Record<string, unknown>) => ({
  node: 'node-a',
  namespace: 'ml',
  name: 'train',
  containers: [{ name: 'main', claims: [{ name: 'gpu' }] }],
  ...extra,
});

describe('demo config: DRA', () => {
  const cases: { name: string; workloads: unknown[]; issue: RegExp | null }[] = [
    {
      name: 'a template claim',
      workloads: [workload({ resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }] })],
      issue: null,
    },
    {
      name: 'a claim by name',
      workloads: [workload({ resourceClaims: [{ name: 'gpu', resourceClaimName: 'shared-gpu' }] })],
      issue: null,
    },
    {
      name: 'an unknown template',
      workloads: [workload({ resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'two-gpus' }] })],
      issue:
        /workloads\.0\.resourceClaims\.0: no entry of resourceClaimTemplates named "two-gpus" in namespace "ml"/,
    },
    {
      name: 'a claim of another namespace',
      workloads: [
        workload({ namespace: 'web', resourceClaims: [{ name: 'gpu', resourceClaimName: 'shared-gpu' }] }),
      ],
      issue: /no entry of resourceClaims named "shared-gpu" in namespace "web"/,
    },
    {
      name: 'both a claim and a template',
      workloads: [
        workload({
          resourceClaims: [
            { name: 'gpu', resourceClaimName: 'shared-gpu', resourceClaimTemplateName: 'one-gpu' },
          ],
        }),
      ],
      issue: /workloads\.0\.resourceClaims\.0/,
    },
    {
      name: 'a container naming no pod claim',
      workloads: [workload({ resourceClaims: [] })],
      issue: /workloads\.0\.containers\.0\.claims\.0\.name: the pod has no resourceClaims entry named "gpu"/,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const parsed = demoSchema.safeParse({ ...base, workloads: c.workloads });
      const issues = parsed.success
        ? ''
        : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n');
      if (c.issue) assert.match(issues, c.issue);
      else assert.equal(issues, '');
    });
  }

  it('gives every node the DeviceClasses and only the claims and templates its workloads name', () => {
    const spec = demoSchema.parse({
      ...base,
      workloads: [
        workload({ resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }] }),
        workload({ name: 'serve', resourceClaims: [{ name: 'gpu', resourceClaimName: 'shared-gpu' }] }),
      ],
    });
    const objects = (node: string) =>
      draObjectsFor(spec, node).map(
        (o) => `${o.plural} ${o.namespace ?? '-'}/${String(o.body.metadata['name'])}`,
      );
    assert.deepEqual(objects('node-a'), [
      'deviceclasses -/gpu.example',
      'resourceclaimtemplates ml/one-gpu',
      'resourceclaims ml/shared-gpu',
    ]);
    assert.deepEqual(objects('node-b'), ['deviceclasses -/gpu.example']);
    const [, template] = draObjectsFor(spec, 'node-a');
    assert.deepEqual(template!.body, {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceClaimTemplate',
      metadata: {
        name: 'one-gpu',
        namespace: 'ml',
        labels: { 'app.kubernetes.io/part-of': 'plugboard-demo' },
      },
      spec: { spec: claimSpec },
    });
  });

  it("makes a Pod with spec.resourceClaims and the containers' resources.claims", () => {
    const spec = demoSchema.parse({
      ...base,
      workloads: [
        workload({
          resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }],
          containers: [
            { name: 'main', limits: { cpu: '2' }, claims: [{ name: 'gpu' }] },
            { name: 'sidecar' },
          ],
        }),
      ],
    });
    const pod = podFor(spec.workloads[0]!);
    assert.deepEqual(pod.spec.resourceClaims, [{ name: 'gpu', resourceClaimTemplateName: 'one-gpu' }]);
    assert.deepEqual(pod.spec['nodeSelector'], { 'kubernetes.io/hostname': 'node-a' });
    assert.deepEqual(
      pod.spec.containers.map((c) => c.resources),
      [
        { limits: { cpu: '2' }, requests: { cpu: '2' }, claims: [{ name: 'gpu' }] },
        { limits: {}, requests: {} },
      ],
    );
  });

  it('sends a pod asking for an extended resource a DeviceClass maps through the scheduler, with no claim', () => {
    const spec = demoSchema.parse({
      ...base,
      deviceClasses: [
        { name: 'gpu.example', spec: { extendedResourceName: 'example.com/gpu', selectors: [] } },
        { name: 'fpga.example', spec: {} },
      ],
      workloads: [
        workload({ name: 'by-name', containers: [{ name: 'main', limits: { 'example.com/gpu': 1 } }] }),
        workload({
          name: 'implicit',
          containers: [{ name: 'main', limits: { 'deviceclass.resource.kubernetes.io/fpga.example': 1 } }],
        }),
        workload({ name: 'plugin', containers: [{ name: 'main', limits: { 'example.com/nic': 1 } }] }),
      ],
    });
    const names = draExtendedResourceNames(spec);
    assert.deepEqual([...names].sort(), [
      'deviceclass.resource.kubernetes.io/fpga.example',
      'deviceclass.resource.kubernetes.io/gpu.example',
      'example.com/gpu',
    ]);
    const [byName, implicit, plugin] = spec.workloads.map((w) => podFor(w, names));
    assert.deepEqual(byName!.spec['nodeSelector'], { 'kubernetes.io/hostname': 'node-a' });
    assert.equal(byName!.spec.resourceClaims, undefined);
    assert.deepEqual(byName!.spec.containers[0]!.resources, {
      limits: { 'example.com/gpu': 1 },
      requests: { 'example.com/gpu': 1 },
    });
    assert.deepEqual(implicit!.spec['nodeSelector'], { 'kubernetes.io/hostname': 'node-a' });
    assert.equal(plugin!.spec['nodeSelector'], undefined, 'a device-plugin-only pod arrives bound');
  });

  it('refuses an extendedResourceName that is not a string', () => {
    const parsed = demoSchema.safeParse({
      ...base,
      deviceClasses: [{ name: 'gpu.example', spec: { extendedResourceName: 3 } }],
    });
    assert.equal(parsed.success, false);
    assert.match(
      parsed.error.issues.map((i) => i.path.join('.')).join(),
      /deviceClasses\.0\.spec\.extendedResourceName/,
    );
  });
});
