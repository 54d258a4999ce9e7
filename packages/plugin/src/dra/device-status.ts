// The driver's part of KEP-4817 (DRAResourceClaimDeviceStatus, GA in 1.37): after a claim is
// prepared, one `status.devices` entry per prepared device — a `Ready` condition and whatever the
// driver author reports (more conditions, `data`, `networkData`). `status.devices` is a list map
// keyed by driver, pool, device and shareID whose entries are "owned by their respective drivers":
// the writer replaces its own entries and keeps everyone else's, so the API server's per-driver
// check (pkg/registry/resource/utils.go AuthorizedForDeviceStatus: `resourceclaims/driver`, verb
// `associated-node:patch` or `arbitrary-node:patch`, name = driver) only ever concerns this driver.
// The write is a JSON merge patch of the status subresource carrying the read resourceVersion
// (optimistic concurrency: a conflict reads the claim again), which kubelet-sim's API slice serves
// too; server-side apply would need managed fields the slice does not keep. Nothing is written on
// unprepare: the API server drops the entries of devices that leave the allocation
// (strategy.go dropDeallocatedStatusDevices), as upstream's drivers rely on.
import type { Condition } from '@plugboard/apimachinery';
import { PluginError } from '../errors.js';
import type { AllocatedDeviceStatus, NetworkDeviceData, ResourceClaim } from './api-types.js';
import { claimLabel, type ClaimRef } from './claims.js';
import type { PreparedDeviceResult } from './draplugin.js';
import { httpStatusOf, type DraKubeApi } from './kube-api.js';

/** What the driver reports for one prepared device beyond `Ready` (all optional). */
export interface DeviceStatusReport {
  /** More conditions, or a `Ready` of the driver's own (by type, these win over the default). */
  conditions?: readonly Omit<Condition, 'lastTransitionTime'>[];
  /** Any JSON object (at most 10 KiB as JSON). */
  data?: Record<string, unknown>;
  networkData?: NetworkDeviceData;
}

export interface DeviceStatusContext {
  claim: ClaimRef;
  device: PreparedDeviceResult;
}

export interface DeviceStatusOptions {
  /**
   * What to report for one prepared device (default: only `Ready`). A throw or rejection is a
   * status error of the claim (logged and emitted); the claim stays prepared.
   */
  report?: (
    context: DeviceStatusContext,
  ) => DeviceStatusReport | undefined | Promise<DeviceStatusReport | undefined>;
}

/** The condition every prepared device gets: the device is configured for the claim. */
export const DEVICE_READY_CONDITION = 'Ready';
export const DEVICE_READY_REASON = 'Prepared';

/** How many times a write whose claim changed meanwhile (409) reads it again. */
const CONFLICT_RETRIES = 5;

const entryKey = (e: Pick<AllocatedDeviceStatus, 'driver' | 'pool' | 'device' | 'shareID'>): string =>
  `${e.driver}/${e.pool}/${e.device}/${e.shareID ?? ''}`;

/** metav1.Time: RFC 3339 in UTC, whole seconds. */
const wholeSeconds = (d: Date): string => d.toISOString().replace(/\.\d+Z$/, 'Z');

/** The entry of one prepared device: `Ready` True, then the report's conditions by type, data, networkData. */
export function deviceStatusEntry(
  driverName: string,
  nodeName: string,
  device: PreparedDeviceResult,
  report: DeviceStatusReport | undefined,
  now: Date,
): AllocatedDeviceStatus {
  const at = wholeSeconds(now);
  const conditions = new Map<string, Condition>([
    [
      DEVICE_READY_CONDITION,
      {
        type: DEVICE_READY_CONDITION,
        status: 'True',
        reason: DEVICE_READY_REASON,
        message: `prepared by ${driverName} on ${nodeName}`,
        lastTransitionTime: at,
      },
    ],
  ]);
  for (const c of report?.conditions ?? []) conditions.set(c.type, { ...c, lastTransitionTime: at });
  return {
    driver: driverName,
    pool: device.poolName,
    device: device.deviceName,
    ...(device.shareId !== undefined ? { shareID: device.shareId } : {}),
    conditions: [...conditions.values()],
    ...(report?.data !== undefined ? { data: report.data } : {}),
    ...(report?.networkData !== undefined ? { networkData: report.networkData } : {}),
  };
}

/** JSON with every object's keys sorted: the stored entries come back in the API server's field order. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, x]) => [k, canonical(x)]),
  );
}

const sameJson = (a: unknown, b: unknown): boolean =>
  JSON.stringify(canonical(a ?? null)) === JSON.stringify(canonical(b ?? null));

/**
 * `status.devices` with `entries` in place of the stored ones of the same device (others kept, in
 * order; new ones appended). A condition whose status did not change keeps its lastTransitionTime
 * (meta.SetStatusCondition), so preparing again writes nothing.
 */
export function mergeDeviceStatus(
  stored: readonly AllocatedDeviceStatus[],
  entries: readonly AllocatedDeviceStatus[],
): AllocatedDeviceStatus[] {
  const next = new Map(entries.map((e) => [entryKey(e), e]));
  const keep = (entry: AllocatedDeviceStatus, old: AllocatedDeviceStatus): AllocatedDeviceStatus => ({
    ...entry,
    conditions: (entry.conditions ?? []).map((c) => {
      const was = old.conditions?.find((o) => o.type === c.type);
      return was && was.status === c.status ? { ...c, lastTransitionTime: was.lastTransitionTime } : c;
    }),
  });
  const out = stored.map((old) => {
    const entry = next.get(entryKey(old));
    if (!entry) return old;
    next.delete(entryKey(old));
    return keep(entry, old);
  });
  return [...out, ...next.values()];
}

export interface DeviceStatusWrite {
  claim: ClaimRef;
  /** Entries written (0: the stored status already said so). */
  written: number;
}

/** Writes the `status.devices` entries of prepared claims (one writer per driver). */
export class DeviceStatusWriter {
  constructor(
    private readonly driverName: string,
    private readonly nodeName: string,
    private readonly kube: DraKubeApi,
    private readonly options: DeviceStatusOptions,
  ) {}

  /**
   * Reports the claim's prepared devices. `claim` is the claim as prepare read it (null: read it
   * here). Rejects with a PluginError naming the claim (403 and 422 as the API server said them).
   */
  async write(
    ref: ClaimRef,
    devices: readonly PreparedDeviceResult[],
    claim: ResourceClaim | null,
  ): Promise<DeviceStatusWrite> {
    let entries: AllocatedDeviceStatus[];
    try {
      const now = new Date();
      entries = await Promise.all(
        devices.map(async (device) =>
          deviceStatusEntry(
            this.driverName,
            this.nodeName,
            device,
            await this.options.report?.({ claim: ref, device }),
            now,
          ),
        ),
      );
    } catch (err) {
      throw new PluginError(
        'internal',
        `device status of claim ${claimLabel(ref)}: the driver's report failed: ${PluginError.from(err).message}`,
        { cause: err },
      );
    }
    let current = claim?.metadata.resourceVersion ? claim : null;
    for (let attempt = 0; ; attempt++) {
      current ??= await this.kube.readResourceClaim(ref.namespace, ref.name);
      if (!current || current.metadata.uid !== ref.uid)
        throw new PluginError('not-found', `device status of claim ${claimLabel(ref)}: the claim is gone`);
      const stored = current.status?.devices ?? [];
      const devicesNext = mergeDeviceStatus(stored, entries);
      if (sameJson(devicesNext, stored)) return { claim: ref, written: 0 };
      try {
        await this.kube.patchResourceClaimStatus(ref.namespace, ref.name, {
          metadata: { uid: ref.uid, resourceVersion: current.metadata.resourceVersion ?? '' },
          status: { devices: devicesNext },
        });
        return { claim: ref, written: entries.length };
      } catch (err) {
        if (httpStatusOf(err) !== 409 || attempt >= CONFLICT_RETRIES) throw err;
        current = null;
      }
    }
  }
}
