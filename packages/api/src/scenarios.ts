// Fault scenarios: the document POST /api/v1/scenarios and the demo's `--scenario FILE` take (a
// timeline of steps with a TTL), as zod schemas, and the state of a running scenario as the gateway
// reports it. Format: docs/API.md ("Scenarios").
import { z } from 'zod';

/** "10s", "1.5s", "500ms", "2m", "1h" or a number of seconds. */
export const durationSchema = z.union([
  z
    .number()
    .nonnegative()
    .transform((s) => Math.round(s * 1000)),
  z
    .string()
    .regex(
      /^\d+(\.\d+)?(ms|s|m|h)$/,
      'must be a duration such as "500ms", "10s", "2m" or a number of seconds',
    )
    .transform((s) => {
      const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(s)!;
      const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
      return Math.round(Number(m[1]) * unit);
    }),
]);

const reason = z.string().min(1).max(512).optional();
const resource = z.string().min(1).max(253);
const deviceId = z.string().min(1).max(253);
const numaNode = z.number().int().min(0).max(1023);
/** DRA devices only: the taint a failed device gets in its ResourceSlice (see FaultRecord.taint). */
const taint = z.enum(['NoSchedule', 'NoExecute']).optional();

const stepBase = { at: durationSchema.default(0), node: z.string().min(1).max(253).optional() };

export const scenarioStepSchema = z.discriminatedUnion('action', [
  z
    .object({
      ...stepBase,
      action: z.literal('fail-numa-node'),
      numaNode,
      resource: resource.optional(),
      reason,
      taint,
    })
    .strict(),
  z
    .object({ ...stepBase, action: z.literal('heal-numa-node'), numaNode, resource: resource.optional() })
    .strict(),
  z
    .object({
      ...stepBase,
      action: z.literal('fail-devices'),
      resource,
      deviceIds: z.array(deviceId).min(1).max(4096).optional(),
      count: z.number().int().min(1).max(4096).optional(),
      reason,
      taint,
    })
    .strict()
    .refine(
      (s) => (s.deviceIds === undefined) !== (s.count === undefined),
      'give exactly one of deviceIds or count',
    ),
  z
    .object({
      ...stepBase,
      action: z.literal('heal-devices'),
      resource: resource.optional(),
      deviceIds: z.array(deviceId).max(4096).optional(),
    })
    .strict(),
  z
    .object({
      ...stepBase,
      action: z.literal('flap-device'),
      resource,
      deviceId,
      periodMs: z.number().int().min(10).max(3_600_000),
      duration: durationSchema.optional(),
      reason,
    })
    .strict(),
  z.object({ ...stepBase, action: z.literal('heal-all') }).strict(),
  z.object({ ...stepBase, action: z.literal('restart-kubelet') }).strict(),
]);

export type ScenarioStep = z.output<typeof scenarioStepSchema>;

const ttlSeconds = z
  .number()
  .int()
  .min(1)
  .max(7 * 24 * 3600);

export const scenarioDocumentSchema = z
  .object({
    name: z.string().min(1).max(128).default('scenario'),
    description: z.string().max(4096).optional(),
    ttlSeconds: ttlSeconds.optional(),
    seed: z.number().int().optional(),
    steps: z.array(scenarioStepSchema).min(1).max(1000),
  })
  .strict();

export type ScenarioDocument = z.output<typeof scenarioDocumentSchema>;

/**
 * A scenario body: a timeline document (`steps`), or one step given inline with its TTL, e.g.
 * `{"action":"fail-devices","resource":"r","count":2,"ttlSeconds":60}`.
 */
export const scenarioBodySchema = z.union([
  scenarioDocumentSchema,
  z
    .looseObject({
      action: z.string(),
      ttlSeconds,
      seed: z.number().int().optional(),
      name: z.string().min(1).max(128).optional(),
    })
    .transform((body, ctx) => {
      const { ttlSeconds: ttl, seed, name, ...step } = body;
      const parsed = scenarioStepSchema.safeParse(step);
      if (!parsed.success) {
        for (const issue of parsed.error.issues)
          ctx.addIssue({ ...issue, code: 'custom', message: issue.message });
        return z.NEVER;
      }
      const doc: ScenarioDocument = {
        name: name ?? parsed.data.action,
        ttlSeconds: ttl,
        seed,
        steps: [parsed.data],
      };
      return doc;
    }),
]);

export type StepStatus = 'pending' | 'done' | 'skipped' | 'failed';

export interface ScenarioStepState {
  at: number;
  action: ScenarioStep['action'];
  node: string | null;
  status: StepStatus;
  detail: string | null;
}

export interface ScenarioState {
  id: string;
  name: string;
  startedAt: string;
  expiresAt: string;
  steps: ScenarioStepState[];
  /** Fault IDs currently held by the scenario. */
  faultIds: string[];
}
