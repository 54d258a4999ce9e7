// The default DRAPlugin of a DraDriver: prepares a claim by checking its allocation against this
// node's devices, writing a per-claim CDI spec and running the driver's prepare hook, and records
// it in the checkpoint (group commit: overlapping calls share one fsync'd write); unprepare runs the
// unprepare hook, removes the spec and the record. What upstream leaves to each driver behind
// kubeletplugin.DRAPlugin (PrepareResourceClaims / UnprepareResourceClaims), as the dra-example-
// driver does it with its CDI handler and checkpoint. A claim already in the checkpoint is answered
// from it (isPrepared: the Helper does not read it again).
import type { Logger } from 'pino';
import type { CdiContainerEdits } from '../cdi.js';
import { PluginError } from '../errors.js';
import type { PluginDevice } from '../types.js';
import type { ResourceClaim } from './api-types.js';
import { cdiDeviceId, removeClaimSpec, writeClaimSpec, type ClaimCdi } from './cdi.js';
import { readCheckpoint, writeCheckpoint, type PreparedClaim, type PreparedDevice } from './checkpoint.js';
import {
  baseRequestName,
  claimLabel,
  devicesToPrepare,
  type AllocatedDevice,
  type ClaimRef,
} from './claims.js';
import type { ClaimToPrepare, DRAPlugin, PrepareResult, UnprepareResult } from './draplugin.js';
import { draDeviceName } from './slice-devices.js';

/** The claim a prepare or unprepare hook works on. */
export interface DraClaimContext {
  claim: ClaimRef;
  /** The devices of the claim this driver prepared (empty in unprepare after a restart). */
  devices: { device: PluginDevice; deviceName: string; requestNames: string[]; shareId?: string }[];
}

/** What the preparer needs to know of the driver's devices. */
export interface PreparerDevices {
  /** The advertised device behind a ResourceSlice device name. */
  byName(name: string): PluginDevice | undefined;
  /** An advertised device by its source ID. */
  byId(id: string): PluginDevice | undefined;
  /** Keys of the taints the driver may put on this device: a result tolerating one may use it. */
  taintKeys(device: PluginDevice): readonly string[];
}

export interface CdiCheckpointPreparerOptions {
  driverName: string;
  nodeName: string;
  poolName: string;
  devices: PreparerDevices;
  cdi: ClaimCdi;
  checkpointPath: string;
  /** > 1: a device may be prepared for several claims at once. */
  replicas: number;
  containerEdits?: (device: PluginDevice, claim: ClaimRef) => CdiContainerEdits;
  prepare?: (context: DraClaimContext) => Promise<void>;
  unprepare?: (context: DraClaimContext) => Promise<void>;
  logger: Logger;
}

/** Env-var-safe form of a device name: gpu-0 → GPU_0. */
const envName = (name: string): string => name.toUpperCase().replace(/[^A-Z0-9]+/g, '_');

export function defaultContainerEdits(device: PluginDevice): CdiContainerEdits {
  return {
    env: [`PLUGBOARD_DRA_DEVICE_${envName(draDeviceName(device.id))}=${device.id}`],
    ...(device.deviceNodes.length ? { deviceNodes: device.deviceNodes.map((path) => ({ path })) } : {}),
  };
}

export class CdiCheckpointPreparer implements DRAPlugin {
  readonly #options: CdiCheckpointPreparerOptions;
  readonly #logger: Logger;
  #prepared = new Map<string, PreparedClaim>();
  /**
   * Checking, CDI specs and hooks of prepare and unprepare run one call at a time (upstream's helper
   * serialises them by default); the checkpoint write after them is shared (#commit).
   */
  #serial: Promise<unknown> = Promise.resolve();
  /** The checkpoint write in flight, and the one that will follow it. */
  #checkpointWrite: Promise<void> | null = null;
  #checkpointNext: Promise<void> | null = null;

  constructor(options: CdiCheckpointPreparerOptions) {
    this.#options = options;
    this.#logger = options.logger;
  }

  /** Reads the checkpoint: claims prepared by an earlier process stay prepared. */
  async start(): Promise<void> {
    this.#prepared = await readCheckpoint(this.#options.checkpointPath, this.#options.driverName);
  }

  /** Waits for calls in progress and the checkpoint write they share. */
  async stop(): Promise<void> {
    await this.#serial.catch(() => undefined);
    await (this.#checkpointNext ?? this.#checkpointWrite)?.catch(() => undefined);
  }

  /** Claims prepared on this node (from the checkpoint and since), by UID. */
  preparedClaims(): PreparedClaim[] {
    return [...this.#prepared.values()];
  }

  isPrepared(uid: string): boolean {
    return this.#prepared.has(uid);
  }

  async prepareResourceClaims(claims: readonly ClaimToPrepare[]): Promise<Map<string, PrepareResult>> {
    const results = new Map<string, PrepareResult>();
    const added: PreparedClaim[] = [];
    await this.#serialized(async () => {
      for (const { ref, claim } of claims) {
        const existing = this.#prepared.get(ref.uid);
        if (existing) {
          results.set(ref.uid, resultOf(existing));
          continue;
        }
        try {
          const prepared = await this.#prepareClaim(ref, claim);
          this.#prepared.set(ref.uid, prepared);
          added.push(prepared);
          results.set(ref.uid, resultOf(prepared));
        } catch (err) {
          results.set(ref.uid, { error: PluginError.from(err).message });
        }
      }
    });
    // Answer once the checkpoint holds what this call prepared (or what an earlier call that this
    // one found prepared still has in flight). Calls that overlap share one write.
    try {
      await this.#commit(added.length > 0);
    } catch (err) {
      // Not recorded: not prepared. Undo, so a later call starts over.
      const message = PluginError.from(err).message;
      for (const prepared of added) {
        if (this.#prepared.get(prepared.uid) === prepared) this.#prepared.delete(prepared.uid);
        await removeClaimSpec(this.#options.cdi, prepared.uid).catch(() => undefined);
        results.set(prepared.uid, { error: message });
      }
      this.#logger.error({ err: message }, 'checkpoint write failed: claims not prepared');
    }
    return results;
  }

  async unprepareResourceClaims(claims: readonly ClaimRef[]): Promise<Map<string, UnprepareResult>> {
    const results = new Map<string, UnprepareResult>();
    let changed = false;
    await this.#serialized(async () => {
      for (const ref of claims) {
        const prepared = this.#prepared.get(ref.uid);
        // Idempotent: unpreparing a claim that is not prepared (any more) succeeds.
        try {
          if (prepared) {
            if (this.#options.unprepare) await this.#options.unprepare(this.#context(ref, prepared.devices));
            this.#prepared.delete(ref.uid);
            changed = true;
          }
          await removeClaimSpec(this.#options.cdi, ref.uid);
          results.set(ref.uid, { error: null, devices: prepared?.devices.map((d) => d.deviceName) ?? [] });
          if (prepared) this.#logger.info({ claim: claimLabel(ref), uid: ref.uid }, 'claim unprepared');
        } catch (err) {
          const message = `unprepare claim ${claimLabel(ref)}: ${PluginError.from(err).message}`;
          results.set(ref.uid, { error: message });
          this.#logger.warn({ claim: claimLabel(ref), uid: ref.uid, err: message }, 'claim not unprepared');
        }
      }
    });
    await this.#commit(changed);
    return results;
  }

  /**
   * Group commit of the checkpoint: resolves once a write that started after this call has
   * finished (`changed`), or once the write in flight has (`!changed`: state made by an earlier call
   * this one relies on). Every call that changes state while a write runs shares the next write, so
   * concurrent prepares cost one fsync, not one each.
   */
  #commit(changed: boolean): Promise<void> {
    if (!changed)
      return (this.#checkpointNext ?? this.#checkpointWrite ?? Promise.resolve()).then(() => undefined);
    if (this.#checkpointNext) return this.#checkpointNext;
    const next = (this.#checkpointWrite ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => {
        // Changes from now on need another write.
        this.#checkpointNext = null;
        const write = writeCheckpoint(this.#options.checkpointPath, this.#options.driverName, this.#prepared);
        this.#checkpointWrite = write;
        void write
          .finally(() => {
            if (this.#checkpointWrite === write) this.#checkpointWrite = null;
          })
          .catch(() => undefined);
        return write;
      });
    this.#checkpointNext = next;
    return next;
  }

  #serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#serial.catch(() => undefined).then(fn);
    this.#serial = run;
    return run;
  }

  /** Checks one claim, writes its CDI spec and runs the prepare hook; the caller records it. */
  async #prepareClaim(ref: ClaimRef, claim: ResourceClaim | null): Promise<PreparedClaim> {
    const { driverName, poolName, nodeName, devices: known, cdi } = this.#options;
    const allocated = devicesToPrepare(ref, claim, {
      driverName,
      poolName,
      nodeName,
      deviceByName: (name) => known.byName(name),
      taintKeys: (device) => known.taintKeys(device),
    });
    this.#assertNotInUse(ref, allocated);
    const devices: PreparedDevice[] = allocated.map(({ result, device }) => {
      const cdiName = result.shareID ? `${result.device}-${result.shareID}` : result.device;
      return {
        requestNames: [baseRequestName(result.request)],
        poolName: result.pool,
        deviceName: result.device,
        deviceId: device.id,
        cdiDeviceIds: [cdiDeviceId(cdi, ref.uid, cdiName)],
        ...(result.shareID ? { shareId: result.shareID } : {}),
      };
    });
    const edits = this.#options.containerEdits ?? defaultContainerEdits;
    await writeClaimSpec(
      cdi,
      ref.uid,
      allocated.map(({ result, device }) => ({
        deviceName: result.shareID ? `${result.device}-${result.shareID}` : result.device,
        edits: edits(device, ref),
      })),
    );
    if (this.#options.prepare) {
      try {
        await this.#options.prepare(this.#context(ref, devices));
      } catch (err) {
        await removeClaimSpec(cdi, ref.uid).catch(() => undefined);
        throw new PluginError(
          'internal',
          `prepare hook for claim ${claimLabel(ref)} failed: ${PluginError.from(err).message}`,
          { cause: err },
        );
      }
    }
    this.#logger.info(
      { claim: claimLabel(ref), uid: ref.uid, devices: devices.map((d) => d.deviceName) },
      'claim prepared',
    );
    return {
      uid: ref.uid,
      namespace: ref.namespace,
      name: ref.name,
      devices,
      preparedAt: new Date().toISOString(),
    };
  }

  /**
   * The last line of defence upstream asks drivers for: a device prepared for another claim is not
   * handed out again, unless devices take multiple allocations (replicas), or both allocations are
   * shares (a result with a share ID: consumable capacity), each prepared with its own share.
   */
  #assertNotInUse(ref: ClaimRef, allocated: readonly AllocatedDevice[]): void {
    if (this.#options.replicas > 1) return;
    const holders = new Map<string, PreparedClaim>();
    for (const claim of this.#prepared.values())
      for (const d of claim.devices) if (d.shareId === undefined) holders.set(d.deviceName, claim);
    const busy = allocated
      .filter(({ result }) => result.shareID === undefined)
      .map(({ result }) => ({ device: result.device, holder: holders.get(result.device) }))
      .filter((b): b is { device: string; holder: PreparedClaim } => b.holder !== undefined);
    if (busy.length > 0) {
      throw new PluginError(
        'invalid-argument',
        busy
          .map(
            (b) =>
              `device ${b.device} is already prepared for claim ${claimLabel(b.holder)} (UID ${b.holder.uid})`,
          )
          .join('; '),
      );
    }
  }

  #context(ref: ClaimRef, devices: readonly PreparedDevice[]): DraClaimContext {
    return {
      claim: ref,
      devices: devices.flatMap((d) => {
        const device = this.#options.devices.byId(d.deviceId);
        return device
          ? [
              {
                device,
                deviceName: d.deviceName,
                requestNames: d.requestNames,
                ...(d.shareId !== undefined ? { shareId: d.shareId } : {}),
              },
            ]
          : [];
      }),
    };
  }
}

/** A prepared claim as the Helper answers the kubelet. */
function resultOf(claim: PreparedClaim): PrepareResult {
  return {
    devices: claim.devices.map((d) => ({
      requests: d.requestNames,
      poolName: d.poolName,
      deviceName: d.deviceName,
      cdiDeviceIds: d.cdiDeviceIds,
      ...(d.shareId !== undefined ? { shareId: d.shareId } : {}),
    })),
  };
}
