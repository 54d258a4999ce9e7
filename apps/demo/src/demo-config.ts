// The demo's description (examples/demo.yaml): which nodes to simulate, with which gateway config
// and kubelet shape, the DRA objects an operator would create (DeviceClasses, ResourceClaimTemplates,
// ResourceClaims) and which workloads to admit. Parsed once with zod; errors name file and field.
// The DRA objects' `spec`s are Kubernetes' own (resource.k8s.io/v1), passed through as written:
// the kubelet-sim's API validates them the way the API server does.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { PodSpecInput } from '@plugboard/kubelet-sim';
import { DemoError } from './errors.js';

const dnsLabel = z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label');

const nodeSchema = z.strictObject({
  name: dnsLabel,
  /** Gateway config (plugin resources + gateway keys), relative to the demo file. */
  config: z.string().min(1),
  kubelet: z
    .strictObject({
      cpus: z.int().min(1).max(4096),
      numaNodes: z.int().min(1).max(16),
      memoryPerNumaGiB: z.number().positive().max(65536).optional(),
      /** The kubelet's Topology/CPU/Memory Manager settings (docs/KUBELET-SIM.md). */
      topologyManagerPolicy: z.enum(['none', 'best-effort', 'restricted', 'single-numa-node']).optional(),
      topologyManagerScope: z.enum(['container', 'pod']).optional(),
      cpuManagerPolicy: z.enum(['none', 'static']).optional(),
      memoryManagerPolicy: z.enum(['None', 'Static']).optional(),
      /** reservedSystemCPUs as a list of CPU IDs. */
      reservedCpus: z.array(z.int().min(0)).optional(),
    })
    .prefault({ cpus: 8, numaNodes: 1 }),
  /** File names of fake device nodes to create for a `paths` source (its `/dev/` is redirected). */
  deviceNodes: z.array(z.string().regex(/^[A-Za-z0-9._-]+$/, 'must be a plain file name')).default([]),
});

const quantity = z.union([z.string().min(1), z.int().nonnegative()]);

const dnsSubdomain = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'must be a DNS subdomain');
const kubeSpec = z.record(z.string(), z.unknown());

/**
 * A DeviceClass: cluster-scoped, so it is created in every node's API (each node is its own control
 * plane). `spec.extendedResourceName` (KEP-5004) is read here too: a workload asking for that name
 * (or the class's implicit `deviceclass.resource.kubernetes.io/<class>`) goes through the scheduler.
 */
const deviceClassSchema = z.strictObject({
  name: dnsSubdomain,
  spec: z.looseObject({ extendedResourceName: z.string().min(1).optional() }),
});

/**
 * A ResourceClaimTemplate (`spec` is its ResourceClaimTemplateSpec: `{ spec: <ResourceClaimSpec> }`) or
 * a ResourceClaim (`spec` is its ResourceClaimSpec), created in the API of each node whose workloads
 * name it.
 */
const namespacedDraObjectSchema = z.strictObject({ namespace: dnsLabel, name: dnsSubdomain, spec: kubeSpec });

/** Pod `spec.resourceClaims[]`: exactly one of a claim or a template. */
const podResourceClaimSchema = z.union([
  z.strictObject({ name: dnsLabel, resourceClaimName: dnsSubdomain }),
  z.strictObject({ name: dnsLabel, resourceClaimTemplateName: dnsSubdomain }),
]);

const workloadSchema = z.strictObject({
  node: dnsLabel,
  namespace: dnsLabel,
  name: dnsLabel,
  restartPolicy: z.enum(['Always', 'OnFailure', 'Never']).default('Always'),
  resourceClaims: z.array(podResourceClaimSchema).default([]),
  containers: z
    .array(
      z.strictObject({
        name: dnsLabel,
        limits: z.record(z.string(), quantity).default({}),
        /** Container `resources.claims`: which of the pod's claims (and requests) it uses. */
        claims: z.array(z.strictObject({ name: dnsLabel, request: dnsLabel.optional() })).default([]),
      }),
    )
    .min(1),
});

export const demoSchema = z
  .strictObject({
    nodes: z.array(nodeSchema).min(1).max(50),
    deviceClasses: z.array(deviceClassSchema).default([]),
    resourceClaimTemplates: z.array(namespacedDraObjectSchema).default([]),
    resourceClaims: z.array(namespacedDraObjectSchema).default([]),
    workloads: z.array(workloadSchema).default([]),
  })
  .superRefine((doc, ctx) => {
    const names = new Set(doc.nodes.map((n) => n.name));
    if (names.size !== doc.nodes.length)
      ctx.addIssue({ code: 'custom', path: ['nodes'], message: 'node names must be unique' });
    const templates = new Set(doc.resourceClaimTemplates.map((t) => `${t.namespace}/${t.name}`));
    const claims = new Set(doc.resourceClaims.map((c) => `${c.namespace}/${c.name}`));
    doc.workloads.forEach((w, i) => {
      if (!names.has(w.node))
        ctx.addIssue({
          code: 'custom',
          path: ['workloads', i, 'node'],
          message: `no node named "${w.node}"`,
        });
      w.resourceClaims.forEach((rc, j) => {
        const [kind, name, known] =
          'resourceClaimName' in rc
            ? (['resourceClaims', rc.resourceClaimName, claims] as const)
            : (['resourceClaimTemplates', rc.resourceClaimTemplateName, templates] as const);
        if (!known.has(`${w.namespace}/${name}`))
          ctx.addIssue({
            code: 'custom',
            path: ['workloads', i, 'resourceClaims', j],
            message: `no entry of ${kind} named "${name}" in namespace "${w.namespace}"`,
          });
      });
      const podClaims = new Set(w.resourceClaims.map((rc) => rc.name));
      w.containers.forEach((c, j) =>
        c.claims.forEach((claim, k) => {
          if (!podClaims.has(claim.name))
            ctx.addIssue({
              code: 'custom',
              path: ['workloads', i, 'containers', j, 'claims', k, 'name'],
              message: `the pod has no resourceClaims entry named "${claim.name}"`,
            });
        }),
      );
    });
  });

export type DemoSpec = z.output<typeof demoSchema>;
export type DemoNodeSpec = DemoSpec['nodes'][number];
export type DemoWorkload = DemoSpec['workloads'][number];
export type DemoDeviceClass = DemoSpec['deviceClasses'][number];
export type DemoNamespacedDraObject = DemoSpec['resourceClaimTemplates'][number];

export interface LoadedDemo {
  file: string;
  spec: DemoSpec;
  /** Gateway config document per node (the YAML as written; runtime paths are filled in at start). */
  nodeDocuments: Map<string, { file: string; document: Record<string, unknown> }>;
}

function readYaml(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new DemoError('config', `${file}: cannot read: ${(err as Error).message}`, { cause: err });
  }
  try {
    return parseYaml(text);
  } catch (err) {
    throw new DemoError('config', `${file}: invalid YAML: ${(err as Error).message}`, { cause: err });
  }
}

export function loadDemo(file: string): LoadedDemo {
  const parsed = demoSchema.safeParse(readYaml(file));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${file}: ${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new DemoError('config', lines.join('\n'));
  }
  const nodeDocuments = new Map<string, { file: string; document: Record<string, unknown> }>();
  for (const node of parsed.data.nodes) {
    const nodeFile = resolve(dirname(file), node.config);
    const document = readYaml(nodeFile);
    if (!document || typeof document !== 'object' || Array.isArray(document)) {
      throw new DemoError('config', `${nodeFile}: (root): must be a mapping with resources and gateway keys`);
    }
    nodeDocuments.set(node.name, { file: nodeFile, document: document as Record<string, unknown> });
  }
  return { file, spec: parsed.data, nodeDocuments };
}

const DEMO_LABELS = { 'app.kubernetes.io/part-of': 'plugboard-demo' };

/** The implicit extended resource name every DeviceClass answers (KEP-5004). */
export const IMPLICIT_EXTENDED_RESOURCE_PREFIX = 'deviceclass.resource.kubernetes.io/';

/**
 * The extended resource names the demo's DeviceClasses map to DRA: each class's
 * `extendedResourceName` and its implicit name. A pod asking for one of them with no claim is given
 * one by the scheduler wherever no device plugin serves the name.
 */
export function draExtendedResourceNames(spec: Pick<DemoSpec, 'deviceClasses'>): Set<string> {
  return new Set(
    spec.deviceClasses.flatMap((c) => [
      `${IMPLICIT_EXTENDED_RESOURCE_PREFIX}${c.name}`,
      ...(c.spec.extendedResourceName ? [c.spec.extendedResourceName] : []),
    ]),
  );
}

/**
 * The Pod object the kubelet-sim admits for a workload (requests default to limits, as the API server
 * does). `draNames` (draExtendedResourceNames): a pod asking for one of them goes through the
 * scheduler, as a pod with claims does.
 */
export function podFor(w: DemoWorkload, draNames: ReadonlySet<string> = new Set()): PodSpecInput {
  const scheduled =
    w.resourceClaims.length > 0 ||
    w.containers.some((c) => Object.keys(c.limits).some((n) => draNames.has(n)));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: w.name,
      namespace: w.namespace,
      labels: DEMO_LABELS,
    },
    spec: {
      restartPolicy: w.restartPolicy,
      // A pod with claims, or with an extended resource a DeviceClass maps, goes through the
      // scheduler (the others arrive bound): pinned to its node by hostname, as a workload for one
      // node is in a cluster — which is also how that node's gateway knows a pod still Pending is
      // waiting for it.
      ...(scheduled ? { nodeSelector: { 'kubernetes.io/hostname': w.node } } : {}),
      ...(w.resourceClaims.length > 0 ? { resourceClaims: w.resourceClaims } : {}),
      containers: w.containers.map((c) => ({
        name: c.name,
        image: 'registry.example/plugboard-demo:latest',
        resources: {
          limits: c.limits,
          requests: c.limits,
          ...(c.claims.length > 0 ? { claims: c.claims } : {}),
        },
      })),
    },
  };
}

/** A resource.k8s.io/v1 object to POST to a node's API: `plural` names its collection. */
export interface DraObject {
  plural: 'deviceclasses' | 'resourceclaimtemplates' | 'resourceclaims';
  namespace: string | null;
  body: { apiVersion: 'resource.k8s.io/v1'; kind: string; metadata: Record<string, unknown>; spec: unknown };
}

function draObject(
  plural: DraObject['plural'],
  kind: string,
  o: { namespace?: string; name: string; spec: unknown },
): DraObject {
  const namespace = o.namespace ?? null;
  return {
    plural,
    namespace,
    body: {
      apiVersion: 'resource.k8s.io/v1',
      kind,
      metadata: { name: o.name, ...(namespace ? { namespace } : {}), labels: DEMO_LABELS },
      spec: o.spec,
    },
  };
}

/**
 * The DRA objects to create in `node`'s API before its workloads, in dependency order: every
 * DeviceClass (cluster-scoped), then the templates and claims its workloads name.
 */
export function draObjectsFor(spec: DemoSpec, node: string): DraObject[] {
  const refs = spec.workloads
    .filter((w) => w.node === node)
    .flatMap((w) => w.resourceClaims.map((rc) => ({ namespace: w.namespace, rc })));
  const templates = new Set(
    refs.flatMap(({ namespace, rc }) =>
      'resourceClaimTemplateName' in rc ? [`${namespace}/${rc.resourceClaimTemplateName}`] : [],
    ),
  );
  const claims = new Set(
    refs.flatMap(({ namespace, rc }) =>
      'resourceClaimName' in rc ? [`${namespace}/${rc.resourceClaimName}`] : [],
    ),
  );
  return [
    ...spec.deviceClasses.map((c) => draObject('deviceclasses', 'DeviceClass', c)),
    ...spec.resourceClaimTemplates
      .filter((t) => templates.has(`${t.namespace}/${t.name}`))
      .map((t) => draObject('resourceclaimtemplates', 'ResourceClaimTemplate', t)),
    ...spec.resourceClaims
      .filter((c) => claims.has(`${c.namespace}/${c.name}`))
      .map((c) => draObject('resourceclaims', 'ResourceClaim', c)),
  ];
}
