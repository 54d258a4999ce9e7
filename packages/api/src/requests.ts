// Request bodies of the gateway's REST API as zod schemas: the gateway validates with them, and a
// client can check a body before sending it. Errors name the field (docs/API.md, "Errors").
import { z } from 'zod';

/** A Pod object, as far as the gateway checks it; kubelet-sim validates the rest (422 passes through). */
export const podBodySchema = z
  .object({
    metadata: z
      .object({ name: z.string().min(1).max(253), namespace: z.string().min(1).max(63).optional() })
      .loose(),
    spec: z.object({ containers: z.array(z.object({ name: z.string().min(1) }).loose()).min(1) }).loose(),
  })
  .loose();

export const faultBodySchema = z
  .object({
    resource: z.string().min(1).max(253),
    deviceId: z.string().min(1).max(253),
    reason: z.string().min(1).max(512),
    ttlSeconds: z
      .number()
      .int()
      .min(1)
      .max(30 * 24 * 3600)
      .nullable()
      .optional(),
    /**
     * DRA devices only: also taint the device with this effect — in its ResourceSlice for a driver
     * this gateway runs, through a DeviceTaintRule for any other driver (None: a dry run, the rule's
     * status says how many pods NoExecute would evict).
     */
    taint: z.enum(['None', 'NoSchedule', 'NoExecute']).nullable().optional(),
  })
  .strict();

export type FaultBody = z.output<typeof faultBodySchema>;
