// The plugin's YAML config, parsed once with zod: device plugins under `resources:`, DRA drivers
// under `dra:` (a section per driver, on the same device sources). Errors name the file, the field
// path and the reason. `pluginConfigSchema` is exported so the gateway can extend it with its
// `gateway:` key; the plugin accepts that key and ignores it, and rejects any other unknown key by
// name.
import { readFile } from 'node:fs/promises';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { PluginError } from './errors.js';
import { resourceNameProblem } from './resource-name.js';
import { TEMPLATE_VARIABLES, unknownPlaceholders } from './allocation/template.js';
import { driverNameProblem } from './dra/names.js';
import { ATTRIBUTE_MAX_VALUE_LENGTH, MAX_ATTRIBUTES_AND_CAPACITIES } from './dra/api-types.js';
import {
  allQuantities,
  REQUEST_POLICY_MAX_VALID_VALUES,
  requestPolicyProblems,
} from './dra/request-policy.js';
import { Quantity } from '@plugboard/apimachinery';

const templateString = z.string().superRefine((value, ctx) => {
  const unknown = unknownPlaceholders(value);
  if (unknown.length > 0) {
    ctx.addIssue({
      code: 'custom',
      message: `unknown template variable(s) ${unknown.map((u) => `{{${u}}}`).join(', ')}; known: ${TEMPLATE_VARIABLES.join(', ')}`,
    });
  }
});
const absolutePath = z.string().regex(/^\//, 'must be an absolute path');
const hexId = z.string().regex(/^0x[0-9a-fA-F]{1,6}$/, 'must be a hex ID such as "0x10de"');
const numaNodes = z.array(z.int().min(0).max(1023));
const pollIntervalMs = z.int().min(0).max(3_600_000);
const deviceId = z.string().min(1).max(63);

export const simulatedSourceSchema = z.strictObject({
  count: z.int().min(0).max(4096),
  numaNodes: numaNodes.optional(),
  idPrefix: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must start alphanumeric and use [A-Za-z0-9._-]')
    .max(40)
    .optional(),
  deviceNodePattern: z.string().optional(),
});

export const pathsSourceSchema = z.strictObject({
  patterns: z.array(absolutePath).min(1),
  sharedDeviceNodes: z.array(absolutePath).optional(),
  numaNodes: numaNodes.optional(),
  pollIntervalMs: pollIntervalMs.optional(),
});

export const sysfsPciSourceSchema = z.strictObject({
  root: absolutePath.optional(),
  vendor: hexId.optional(),
  devices: z.array(hexId).optional(),
  class: hexId.optional(),
  driver: z.string().min(1).optional(),
  deviceNodePattern: z.string().optional(),
  pollIntervalMs: pollIntervalMs.optional(),
});

export const allocateSchema = z.strictObject({
  env: z
    .record(z.string(), templateString)
    .superRefine((env, ctx) => {
      for (const key of Object.keys(env)) {
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key))
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: 'must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)',
          });
      }
    })
    .optional(),
  deviceNodes: z.boolean().optional(),
  deviceNodePermissions: z
    .string()
    .regex(/^[rwm]{1,3}$/, 'must be one or more of r, w, m')
    .optional(),
  devices: z
    .array(
      z.strictObject({
        hostPath: templateString,
        containerPath: templateString.optional(),
        permissions: z
          .string()
          .regex(/^[rwm]{1,3}$/, 'must be one or more of r, w, m')
          .optional(),
      }),
    )
    .optional(),
  mounts: z
    .array(
      z.strictObject({
        hostPath: templateString,
        containerPath: templateString,
        readOnly: z.boolean().optional(),
      }),
    )
    .optional(),
  annotations: z.record(z.string().min(1), templateString).optional(),
  cdi: z
    .strictObject({
      enabled: z.boolean().default(true),
      vendor: z
        .string()
        .regex(
          /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/,
          'must be a DNS-like vendor name such as "plugboard.example"',
        ),
      class: z
        .string()
        .regex(/^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$/, 'must be alphanumeric with - _ .'),
      specDir: absolutePath.optional(),
    })
    .optional(),
});

export const preStartSchema = z
  .strictObject({
    command: z.array(z.string().min(1)).min(1).optional(),
    delayMs: z.int().min(0).max(600_000).optional(),
    timeoutMs: z.int().min(1).max(600_000).default(30_000),
  })
  .refine(
    (p) => p.command !== undefined || p.delayMs !== undefined,
    'needs "command" (a reset hook) or "delayMs" (a simulated reset)',
  );

/**
 * One resource. A plain object schema so it can be extended; the cross-field checks (exactly one
 * source, …) run where it is used inside pluginConfigSchema.
 */
export const resourceConfigSchema = z.strictObject({
  name: z.string().superRefine((name, ctx) => {
    const problem = resourceNameProblem(name);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  }),
  simulated: simulatedSourceSchema.optional(),
  paths: pathsSourceSchema.optional(),
  sysfsPci: sysfsPciSourceSchema.optional(),
  socketName: z
    .string()
    .regex(/^[A-Za-z0-9._-]+\.sock$/, 'must be a file name ending in .sock')
    .optional(),
  exclude: z.array(deviceId).default([]),
  replicas: z.int().min(1).max(1024).default(1),
  failRequestsGreaterThanOne: z.boolean().default(false),
  preferredAllocation: z.boolean().default(true),
  allocate: allocateSchema.optional(),
  preStart: preStartSchema.optional(),
});

/** The device sources a resource or a DRA driver can take its devices from (exactly one). */
type SourceSections = Partial<
  Record<'simulated' | 'paths' | 'sysfsPci', z.output<typeof simulatedSourceSchema> | object>
>;

function checkOneSource(entry: SourceSections, ctx: z.RefinementCtx): void {
  const sources = (['simulated', 'paths', 'sysfsPci'] as const).filter((k) => entry[k] !== undefined);
  if (sources.length !== 1) {
    ctx.addIssue({
      code: 'custom',
      path: sources.length > 1 ? [sources[1]!] : [],
      message: `needs exactly one device source (simulated, paths or sysfsPci), found ${sources.length === 0 ? 'none' : sources.join(' and ')}`,
    });
  }
}

function checkResource(resource: z.output<typeof resourceConfigSchema>, ctx: z.RefinementCtx): void {
  checkOneSource(resource, ctx);
  if (resource.failRequestsGreaterThanOne && resource.replicas === 1) {
    ctx.addIssue({
      code: 'custom',
      path: ['failRequestsGreaterThanOne'],
      message: 'only applies to shared resources (replicas > 1)',
    });
  }
}

function checkUnique(resources: z.output<typeof resourceConfigSchema>[], ctx: z.RefinementCtx): void {
  const seenNames = new Map<string, number>();
  const seenSockets = new Map<string, number>();
  resources.forEach((r, i) => {
    const first = seenNames.get(r.name);
    if (first !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: [i, 'name'],
        message: `duplicates resources[${first}].name "${r.name}"`,
      });
    else seenNames.set(r.name, i);
    if (r.socketName) {
      const other = seenSockets.get(r.socketName);
      if (other !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: [i, 'socketName'],
          message: `duplicates resources[${other}].socketName`,
        });
      else seenSockets.set(r.socketName, i);
    }
  });
}

// --- DRA drivers (`dra:`) --------------------------------------------------------------------

/** DRA attribute/capacity names: a C identifier of at most 32 characters, optionally `domain/`-qualified. */
const qualifiedName = z
  .string()
  .regex(
    /^(([a-z0-9]([-a-z0-9]*[a-z0-9])?)(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z][A-Za-z0-9_]{0,31}$/,
    'must be a C identifier of at most 32 characters, optionally prefixed with a DNS domain and "/"',
  )
  .refine(
    (name) => !name.includes('/') || name.indexOf('/') <= 63,
    'the domain must be at most 63 characters',
  );

/** Template variables of DRA attribute strings. */
export const DRA_ATTRIBUTE_VARIABLES = ['id', 'name', 'numaNode'] as const;

const attributeString = z
  .string()
  .max(ATTRIBUTE_MAX_VALUE_LENGTH)
  .superRefine((value, ctx) => {
    const unknown = unknownPlaceholders(value, DRA_ATTRIBUTE_VARIABLES);
    if (unknown.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: `unknown template variable(s) ${unknown.map((u) => `{{${u}}}`).join(', ')}; known: ${DRA_ATTRIBUTE_VARIABLES.join(', ')}`,
      });
    }
  });

/** A device attribute value, as in a ResourceSlice: exactly one of int, bool, string, version. */
export const draAttributeSchema = z
  .strictObject({
    int: z.int().optional(),
    bool: z.boolean().optional(),
    string: attributeString.optional(),
    version: z
      .string()
      .regex(
        /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/,
        'must be a semantic version such as "1.2.3"',
      )
      .optional(),
  })
  .refine(
    (a) => Object.values(a).filter((v) => v !== undefined).length === 1,
    'needs exactly one of int, bool, string, version',
  );

/** A resource.Quantity such as 80Gi, 1500m or 2. */
const quantity = z
  .string()
  .regex(
    /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/,
    'must be a quantity such as "80Gi", "4" or "500m"',
  );

const dnsSubdomain = z
  .string()
  .max(253)
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
    'must be a lower-case DNS subdomain',
  );

/** Counter names (and counter sets, named after devices): DNS labels, as the API server checks them. */
const counterName = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label such as "memory"');

/** The API's limits on partitionable devices (resource.k8s.io/v1). */
export const MAX_COUNTERS_PER_COUNTER_SET = 32;
export const MAX_COUNTER_SETS_PER_SLICE = 8;
/** The most partitions one even split may make (a slice of devices consuming counters holds 64). */
export const MAX_EVEN_SPLIT = 64;

/**
 * Partitionable devices (KEP-4815): every device holds `counters` (its counter set, named after
 * it) and is published as the partitions of the `even` splits (1: whole, 2: halves, 4: quarters…),
 * each consuming its share of every counter.
 */
export const draPartitionsSchema = z.strictObject({
  counters: z
    .record(counterName, quantity)
    .refine((c) => Object.keys(c).length >= 1, 'needs at least one counter, such as "memory: 40Gi"')
    .refine(
      (c) => Object.keys(c).length <= MAX_COUNTERS_PER_COUNTER_SET,
      `a counter set may have at most ${MAX_COUNTERS_PER_COUNTER_SET} counters`,
    ),
  even: z
    .array(z.int().min(1).max(MAX_EVEN_SPLIT))
    .min(1)
    .superRefine((splits, ctx) => {
      splits.forEach((n, i) => {
        if (splits.indexOf(n) < i)
          ctx.addIssue({
            code: 'custom',
            path: [i],
            message: `duplicates the split ${n} (same partition names)`,
          });
      });
    }),
});

/** How much one allocation of a shared device's capacity takes (resource.k8s.io/v1 CapacityRequestPolicy). */
export const capacityRequestPolicySchema = z.strictObject({
  default: quantity.optional(),
  validRange: z
    .strictObject({ min: quantity, max: quantity.optional(), step: quantity.optional() })
    .optional(),
  validValues: z.array(quantity).min(1).max(REQUEST_POLICY_MAX_VALID_VALUES).optional(),
});

/**
 * Consumable capacity (KEP-5075): devices taking several allocations at once, each consuming part
 * of a `capacity` as its requestPolicy says.
 */
export const draSharingSchema = z.strictObject({
  allowMultipleAllocations: z.boolean().default(false),
  requestPolicy: z.record(qualifiedName, capacityRequestPolicySchema).default({}),
});

export const draDriverConfigSchema = z.strictObject({
  driver: z.string().superRefine((name, ctx) => {
    const problem = driverNameProblem(name);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  }),
  simulated: simulatedSourceSchema.optional(),
  paths: pathsSourceSchema.optional(),
  sysfsPci: sysfsPciSourceSchema.optional(),
  exclude: z.array(deviceId).default([]),
  replicas: z.int().min(1).max(1024).default(1),
  pool: dnsSubdomain.optional(),
  attributes: z.record(qualifiedName, draAttributeSchema).default({}),
  capacity: z.record(qualifiedName, quantity).default({}),
  taints: z
    .strictObject({
      effect: z.enum(['NoSchedule', 'NoExecute']),
      key: z
        .string()
        .regex(
          /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/,
          'must be a label name such as "gpu.example.com/unhealthy"',
        )
        .optional(),
    })
    .optional(),
  cdi: z
    .strictObject({
      vendor: z
        .string()
        .regex(
          /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/,
          'must be a DNS-like vendor name such as "k8s.gpu.example.com"',
        )
        .optional(),
      class: z
        .string()
        .regex(/^[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?$/, 'must be alphanumeric with - and _')
        .optional(),
    })
    .optional(),
  healthCheckTimeoutSeconds: z.int().min(0).max(3600).optional(),
  faultDir: absolutePath.optional(),
  /** Report each prepared device in its claim's status.devices (a Ready condition; needs resourceclaims/driver). */
  deviceStatus: z.boolean().default(false),
  partitions: draPartitionsSchema.optional(),
  sharing: draSharingSchema.optional(),
});

function checkDraDriver(driver: z.output<typeof draDriverConfigSchema>, ctx: z.RefinementCtx): void {
  checkOneSource(driver, ctx);
  // id, numaNode and (sysfsPci) pciBusID are added to every device; replicas add `shares` capacity,
  // partitions the `partition` attribute.
  const builtIn = 2 + (driver.sysfsPci ? 1 : 0) + (driver.replicas > 1 ? 1 : 0) + (driver.partitions ? 1 : 0);
  const total = Object.keys(driver.attributes).length + Object.keys(driver.capacity).length + builtIn;
  if (total > MAX_ATTRIBUTES_AND_CAPACITIES) {
    ctx.addIssue({
      code: 'custom',
      path: ['attributes'],
      message: `a device may have at most ${MAX_ATTRIBUTES_AND_CAPACITIES} attributes and capacities; with the ${builtIn} the driver adds this is ${total}`,
    });
  }
  if (driver.partitions) checkPartitions(driver, driver.partitions, ctx);
  if (driver.sharing) checkSharing(driver, driver.sharing, ctx);
}

function checkPartitions(
  driver: z.output<typeof draDriverConfigSchema>,
  partitions: z.output<typeof draPartitionsSchema>,
  ctx: z.RefinementCtx,
): void {
  // The counter sets of all devices go in one slice, which the API server caps.
  const devices = driver.simulated ? driver.simulated.count : 0;
  if (devices > MAX_COUNTER_SETS_PER_SLICE)
    ctx.addIssue({
      code: 'custom',
      path: ['partitions'],
      message: `a counter set per device: the API server takes at most ${MAX_COUNTER_SETS_PER_SLICE} in a slice, this driver has ${devices} devices`,
    });
  for (const [name, value] of Object.entries(partitions.counters)) {
    if (!allQuantities([value])) continue; // the quantity rule reports it
    const units = Quantity.parse(value).value();
    // Splits out of range are reported by their own rule.
    const split = partitions.even.find((n) => Number.isInteger(n) && n >= 1 && units / BigInt(n) === 0n);
    if (split !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['partitions', 'counters', name],
        message: `${value} split ${split} ways leaves a partition 0 (partitions consume whole units)`,
      });
  }
}

function checkSharing(
  driver: z.output<typeof draDriverConfigSchema>,
  sharing: z.output<typeof draSharingSchema>,
  ctx: z.RefinementCtx,
): void {
  // replicas > 1 publishes the devices with allowMultipleAllocations too.
  const multiple = sharing.allowMultipleAllocations || driver.replicas > 1;
  for (const [name, policy] of Object.entries(sharing.requestPolicy)) {
    const path = ['sharing', 'requestPolicy', name];
    const capacity = driver.capacity[name];
    if (!multiple) {
      ctx.addIssue({
        code: 'custom',
        path,
        message: 'allowMultipleAllocations must be true (or replicas > 1) for a requestPolicy',
      });
    } else if (capacity === undefined) {
      ctx.addIssue({ code: 'custom', path, message: `names no capacity; add "${name}" under capacity` });
    } else {
      for (const p of requestPolicyProblems(capacity, policy))
        ctx.addIssue({ code: 'custom', path: [...path, ...p.path], message: p.message });
    }
  }
}

function checkUniqueDrivers(drivers: z.output<typeof draDriverConfigSchema>[], ctx: z.RefinementCtx): void {
  const seen = new Map<string, number>();
  drivers.forEach((d, i) => {
    const first = seen.get(d.driver);
    if (first !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: [i, 'driver'],
        message: `duplicates dra[${first}].driver "${d.driver}"`,
      });
    else seen.set(d.driver, i);
  });
}

/**
 * The whole file. A plain (strict) object schema, refinements live on its fields, so the gateway
 * can `pluginConfigSchema.extend({ gateway: … })`. The one cross-field rule (something to run)
 * is checked by parseConfigWith (unless `allowNothingToServe`: the gateway's observer mode).
 */
export const pluginConfigSchema = z.strictObject({
  resources: z.array(resourceConfigSchema.superRefine(checkResource)).default([]).superRefine(checkUnique),
  /** DRA drivers, a section each; `plugboard-plugin` runs them beside the device plugins. */
  dra: z.array(draDriverConfigSchema.superRefine(checkDraDriver)).default([]).superRefine(checkUniqueDrivers),
  /** The node gateway's section; the plugin ignores it. */
  gateway: z.unknown().optional(),
});

export type PluginConfig = z.output<typeof pluginConfigSchema>;
export type ResourceConfig = z.output<typeof resourceConfigSchema>;
export type DraDriverConfig = z.output<typeof draDriverConfigSchema>;

/** `resources[0].simulated.count` */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `${out ? '.' : ''}${String(key)}`;
  return out || '(root)';
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

export interface ParseConfigOptions {
  /**
   * Accept a document with no resource and no DRA driver. A plugin process with nothing to serve
   * is an error (the default); the node gateway allows it: with nothing of its own it observes the
   * kubelet's and the API server's view of the node.
   */
  allowNothingToServe?: boolean;
}

/**
 * Parses YAML text or an already-parsed object with any zod schema (the gateway passes its
 * extension of pluginConfigSchema). Throws `config-invalid` naming source, field and reason.
 */
export function parseConfigWith<S extends z.ZodType>(
  schema: S,
  input: unknown,
  source = '<inline>',
  options: ParseConfigOptions = {},
): z.output<S> {
  let raw = input;
  if (typeof input === 'string') {
    try {
      raw = parseYaml(input);
    } catch (err) {
      const where = err instanceof YAMLParseError && err.linePos ? ` (line ${err.linePos[0].line})` : '';
      throw new PluginError(
        'config-invalid',
        `${source}${where}: invalid YAML: ${(err as Error).message.split('\n')[0]}`,
        { cause: err },
      );
    }
  }
  const result = schema.safeParse(raw ?? {});
  if (result.success && !options.allowNothingToServe) {
    const parsed = result.data as { resources?: unknown[]; dra?: unknown[] };
    if ((parsed.resources?.length ?? 0) === 0 && (parsed.dra?.length ?? 0) === 0) {
      throw new PluginError(
        'config-invalid',
        `${source}: resources: needs at least one resource (or a driver under dra)`,
      );
    }
  }
  if (!result.success) {
    const lines = result.error.issues.map((issue) => {
      const keys = issue.code === 'unrecognized_keys' ? issue.keys : null;
      const reason = keys
        ? `unknown key${keys.length > 1 ? 's' : ''} ${keys.map((k) => `"${k}"`).join(', ')}`
        : issue.code === 'invalid_key'
          ? `invalid name: ${issue.issues.map((i) => i.message).join('; ')}`
          : issue.message;
      return `${source}: ${formatPath(issue.path)}: ${reason}`;
    });
    throw new PluginError('config-invalid', lines.join('\n'), { cause: result.error });
  }
  return deepFreeze(result.data);
}

export function parsePluginConfig(input: unknown, source = '<inline>'): PluginConfig {
  return parseConfigWith(pluginConfigSchema, input, source);
}

export async function loadPluginConfig(file: string): Promise<PluginConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new PluginError('config-invalid', `${file}: cannot read config: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return parsePluginConfig(text, file);
}
