// The demo's description (examples/demo.yaml): which nodes to simulate, with which gateway config
// and kubelet shape, and which workloads to admit. Parsed once with zod; errors name file and field.
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

const workloadSchema = z.strictObject({
  node: dnsLabel,
  namespace: dnsLabel,
  name: dnsLabel,
  restartPolicy: z.enum(['Always', 'OnFailure', 'Never']).default('Always'),
  containers: z.array(z.strictObject({ name: dnsLabel, limits: z.record(z.string(), quantity) })).min(1),
});

export const demoSchema = z
  .strictObject({
    nodes: z.array(nodeSchema).min(1).max(50),
    workloads: z.array(workloadSchema).default([]),
  })
  .superRefine((doc, ctx) => {
    const names = new Set(doc.nodes.map((n) => n.name));
    if (names.size !== doc.nodes.length)
      ctx.addIssue({ code: 'custom', path: ['nodes'], message: 'node names must be unique' });
    doc.workloads.forEach((w, i) => {
      if (!names.has(w.node))
        ctx.addIssue({
          code: 'custom',
          path: ['workloads', i, 'node'],
          message: `no node named "${w.node}"`,
        });
    });
  });

export type DemoSpec = z.output<typeof demoSchema>;
export type DemoNodeSpec = DemoSpec['nodes'][number];
export type DemoWorkload = DemoSpec['workloads'][number];

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

/** The Pod object the kubelet-sim admits for a workload (requests default to limits, as the API server does). */
export function podFor(w: DemoWorkload): PodSpecInput {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: w.name,
      namespace: w.namespace,
      labels: { 'app.kubernetes.io/part-of': 'plugboard-demo' },
    },
    spec: {
      restartPolicy: w.restartPolicy,
      containers: w.containers.map((c) => ({
        name: c.name,
        image: 'registry.example/plugboard-demo:latest',
        resources: { limits: c.limits, requests: c.limits },
      })),
    },
  };
}
