// The fidelity scenario format: one YAML file per scenario (packages/testbed/fidelity/scenarios/),
// run unchanged on kubelet-sim and on the real kubelet by run.ts. A scenario names what serves the
// node (Plugboard's device plugins, in the plugin config's `resources:` shape, and DRA drivers), then
// a list of steps: objects applied with the real kubectl, waits (kubectl wait: a watch, no sleeps),
// faults, kubelet restarts, unplugs and observations. Parsed with zod; an error names the file and
// the field.
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

const nonEmpty = z.string().min(1);
const kubeObject = z.looseObject({ apiVersion: nonEmpty, kind: nonEmpty, metadata: z.looseObject({}) });
const taintEffect = z.enum(['None', 'NoSchedule', 'NoExecute']);
const quantity = z.string().regex(/^[0-9]+(\.[0-9]+)?([KMGTPE]i?|[mkMGTPE])?$/, 'a quantity such as 40Gi');

const draDriver = z.strictObject({
  /** The driver's name; `{{ns}}` may not be used (ResourceSlices of a node are named after it). */
  driver: nonEmpty,
  count: z.int().min(1).max(16),
  idPrefix: nonEmpty.default('gpu'),
  /** NUMA node per device, spread as SimulatedSource spreads them (published as resource.kubernetes.io/numaNode). */
  numaNodes: z.array(z.int().min(0)).optional(),
  attributes: z
    .record(
      nonEmpty,
      z.strictObject({
        string: z.string().optional(),
        int: z.int().optional(),
        bool: z.boolean().optional(),
      }),
    )
    .optional(),
  /** A counter set per device with these counters, published as partitions of it (evenPartitions). */
  partitions: z.strictObject({ memory: quantity, splits: z.array(z.int().min(1)).min(1) }).optional(),
  /** One device shared by claims (allowMultipleAllocations) with consumable memory. */
  shared: z
    .strictObject({ memory: quantity, default: quantity, min: quantity, step: quantity.optional() })
    .optional(),
  /** Every NodePrepareResources of this driver fails with this message (the `prepare` hook throws). */
  prepareFails: nonEmpty.optional(),
  /** A fault may carry a taint of its own (DraDriverOptions.faultTaints). */
  faultTaints: z.boolean().default(false),
});
export type ScenarioDraDriver = z.infer<typeof draDriver>;

const targetFields = {
  /** A device plugin's resource name … */
  resource: nonEmpty.optional(),
  /** … or a DRA driver's name. */
  driver: nonEmpty.optional(),
  device: nonEmpty,
};
const oneTarget = [
  (t: { resource?: string; driver?: string }) => (t.resource === undefined) !== (t.driver === undefined),
  { message: 'names exactly one of resource (a device plugin) or driver (a DRA driver)' },
] as const;

/** One step: an object with one of these keys (`apply` may also have `rejected`). */
const stepSchemas = {
  /** kubectl apply of these objects (namespace, nodeSelector and image filled in, see run.ts); with
   * `rejected` the API server must refuse them and kubectl's error text is observed under `errors`. */
  apply: z.strictObject({ apply: z.array(kubeObject).min(1), rejected: nonEmpty.optional() }),
  /** kubectl delete of `kind/name` (in the scenario's namespace), waiting for it to go. */
  delete: z.strictObject({ delete: nonEmpty }),
  /** kubectl wait: `object` such as pod/train, or `node` (this node); `for` as kubectl's --for. */
  wait: z.strictObject({
    wait: z.strictObject({ object: nonEmpty, for: nonEmpty, timeoutSeconds: z.int().min(1).default(120) }),
  }),
  /** Waits (re-reading the namespace's Events) for an Event of `reason` about `object` (kind/name). */
  event: z.strictObject({
    event: z.strictObject({
      object: nonEmpty,
      reason: nonEmpty,
      timeoutSeconds: z.int().min(1).default(120),
    }),
  }),
  fault: z.strictObject({
    fault: z
      .strictObject({
        ...targetFields,
        reason: nonEmpty.default('simulated fault'),
        taint: taintEffect.optional(),
      })
      .refine(...oneTarget),
  }),
  clearFault: z.strictObject({ clearFault: z.strictObject(targetFields).refine(...oneTarget) }),
  restartKubelet: z.strictObject({ restartKubelet: z.literal(true) }),
  /** Removes a file of a paths-source device plugin (relative to the scenario's work directory). */
  unplug: z.strictObject({ unplug: nonEmpty }),
  plug: z.strictObject({ plug: nonEmpty }),
  /** Stops a device plugin for good (its socket goes, the kubelet's endpoint with it). */
  stopPlugin: z.strictObject({ stopPlugin: nonEmpty }),
  /** Captures the outcome here (observe.ts), under this label. */
  observe: z.strictObject({ observe: nonEmpty }),
} as const;
type StepSchemas = typeof stepSchemas;
export type ScenarioStep = { [K in keyof StepSchemas]: z.infer<StepSchemas[K]> }[keyof StepSchemas];

export const scenarioSchema = z.strictObject({
  description: nonEmpty,
  node: z
    .strictObject({
      topologyManagerPolicy: z.enum(['none', 'best-effort', 'restricted', 'single-numa-node']).optional(),
    })
    .default({}),
  /** Files created in the scenario's work directory before the plugins start (paths sources). */
  files: z.array(nonEmpty).default([]),
  /** Plugboard device plugins: the plugin config's `resources:` entries; `{{work}}` is the work directory. */
  devicePlugins: z.array(z.looseObject({ name: nonEmpty })).default([]),
  draDrivers: z.array(draDriver).default([]),
  /** Cluster-scoped objects made for the scenario (DeviceClasses …) are named `{{ns}}-…`, deleted at the end. */
  steps: z.array(z.looseObject({})).min(1),
});
export type Scenario = Omit<z.infer<typeof scenarioSchema>, 'steps'> & {
  name: string;
  file: string;
  steps: ScenarioStep[];
};

/** An error in a scenario file, naming the file and the field. */
export class ScenarioError extends Error {
  override name = 'ScenarioError';
}

function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (s, p) => (typeof p === 'number' ? `${s}[${p}]` : s ? `${s}.${String(p)}` : String(p)),
    '',
  );
}

/** Parses one scenario's YAML text; `file` names it in errors and gives the scenario its name. */
export function parseScenario(text: string, file: string): Scenario {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new ScenarioError(`${file}: not YAML: ${(err as Error).message}`, { cause: err });
  }
  const result = scenarioSchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${fieldPath(i.path) || '(top)'}: ${i.message}`);
    throw new ScenarioError(`${file}: ${problems.join('; ')}`);
  }
  const problems: string[] = [];
  const steps: ScenarioStep[] = [];
  result.data.steps.forEach((raw, i) => {
    const key = Object.keys(raw).find((k): k is keyof StepSchemas => k in stepSchemas);
    if (!key) {
      problems.push(`steps[${i}]: expected one of ${Object.keys(stepSchemas).join(', ')}`);
      return;
    }
    const parsed = stepSchemas[key].safeParse(raw);
    if (parsed.success) steps.push(parsed.data);
    else
      for (const issue of parsed.error.issues)
        problems.push(`${fieldPath(['steps', i, ...issue.path])}: ${issue.message}`);
  });
  if (problems.length > 0) throw new ScenarioError(`${file}: ${problems.join('; ')}`);
  const s = { ...result.data, steps };
  const labels = new Set<string>();
  const plugins = new Set(s.devicePlugins.map((p) => p.name));
  const drivers = new Set(s.draDrivers.map((d) => d.driver));
  s.steps.forEach((st, i) => {
    const at = `steps[${i}]`;
    if ('observe' in st) {
      if (labels.has(st.observe)) problems.push(`${at}.observe: label "${st.observe}" used twice`);
      labels.add(st.observe);
    }
    const t = 'fault' in st ? st.fault : 'clearFault' in st ? st.clearFault : undefined;
    if (t?.resource !== undefined && !plugins.has(t.resource))
      problems.push(`${at}: resource "${t.resource}" is not one of devicePlugins`);
    if (t?.driver !== undefined && !drivers.has(t.driver))
      problems.push(`${at}: driver "${t.driver}" is not one of draDrivers`);
    if ('stopPlugin' in st && !plugins.has(st.stopPlugin))
      problems.push(`${at}.stopPlugin: "${st.stopPlugin}" is not one of devicePlugins`);
  });
  if (labels.size === 0) problems.push('steps: needs at least one observe step');
  if (problems.length > 0) throw new ScenarioError(`${file}: ${problems.join('; ')}`);
  return { ...s, name: basename(file).replace(/\.ya?ml$/, ''), file };
}

/** Every `*.yaml` scenario in `dir`, by name. */
export function loadScenarios(dir: string): Scenario[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => parseScenario(readFileSync(join(dir, f), 'utf8'), join(dir, f)));
}
