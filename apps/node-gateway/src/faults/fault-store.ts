// Active simulated faults: the operator's intent, with TTLs, persisted in the state directory so a
// gateway restart neither loses a fault nor leaves an expired one on. The store drives an actuator
// (the plugins' fault overlay) per device: inject on the first fault of a device, clear on the last.
// The overlay then holds the device whatever its source does (unplugged, back), so nothing here
// re-applies faults; what the kubelet was told is the model's to report (FaultRecord.state).
import { mkdirSync, readFileSync, writeFileSync, unlinkSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { FaultRecord, FaultTaintRule } from '@plugboard/api';
import { REPLICA_SEPARATOR } from '@plugboard/plugin';
import { GatewayError } from '../errors.js';

/** The taint a fault on a DRA device may ask for (FaultRecord.taint). */
export type FaultTaint = NonNullable<FaultRecord['taint']>;

/** Applies faults at the device source; both throw a GatewayError when the plugin refuses. */
export interface FaultActuator {
  /**
   * `absentOk`: the device may be absent now (a fault restored after a restart); `taint`: a DRA
   * device also gets that taint in its ResourceSlice (a device plugin refuses it); `taintRule`: the
   * device is another driver's, the fault is that DeviceTaintRule (faults/taint-rules.ts).
   */
  inject(
    resource: string,
    deviceId: string,
    reason: string,
    options?: { absentOk?: boolean; taint?: FaultTaint | null; taintRule?: FaultTaintRule | null },
  ): void;
  clear(resource: string, deviceId: string, options?: { taintRule?: FaultTaintRule | null }): void;
  /** The ID a fault is kept under (a DRA device's ResourceSlice name → its source ID). */
  resolve?(resource: string, deviceId: string): string;
}

export interface NewFault {
  resource: string;
  deviceId: string;
  reason: string;
  ttlSeconds?: number | null;
  scenarioId?: string | null;
  /** DRA devices only: taint the device in its ResourceSlice too (or through `taintRule`). */
  taint?: FaultTaint | null;
  /** A device of a DRA driver this gateway does not run: the DeviceTaintRule the fault is. */
  taintRule?: FaultTaintRule | null;
}

const taintOf = (f: FaultRecord): { taint?: FaultTaint; taintRule?: FaultTaintRule } => ({
  ...(f.taint ? { taint: f.taint } : {}),
  ...(f.taintRule ? { taintRule: f.taintRule } : {}),
});

export type FaultClearCause = 'deleted' | 'expired' | 'scenario-stopped' | 'expired-while-down';

export interface FaultStoreEvents {
  onInjected?: (fault: FaultRecord) => void;
  onCleared?: (fault: FaultRecord, cause: FaultClearCause) => void;
  onChange?: (faults: FaultRecord[]) => void;
  /** Releasing a fault's device failed (its resource is gone); the fault is removed regardless. */
  onActuatorError?: (fault: FaultRecord, message: string) => void;
  /** Persistence turned off (write failed) or back on (a later write succeeded). */
  onPersistenceChange?: (persistence: { enabled: boolean; reason?: string }) => void;
}

export interface FaultStoreOptions extends FaultStoreEvents {
  stateDir: string | null;
  maxActive: number;
  now?: () => Date;
}

const FILE = 'faults.json';
const FILE_VERSION = 1;
const PERSIST_DELAY_MS = 50;

export class FaultStore {
  private readonly faults = new Map<string, FaultRecord>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private actuator: FaultActuator | null = null;
  private readonly now: () => Date;
  private persistTimer: NodeJS.Timeout | null = null;
  /** The write loop while it runs; `dirty` asks it for one more write of the current list. */
  private persisting: Promise<void> | null = null;
  private dirty = false;
  /** Whether faults survive a restart, and why not. */
  persistence: { enabled: boolean; reason?: string };
  /** The state dir was usable at start; writes are attempted (and may fail later, e.g. disk full). */
  private readonly canPersist: boolean;

  constructor(private readonly options: FaultStoreOptions) {
    this.now = options.now ?? (() => new Date());
    this.persistence = this.checkStateDir();
    this.canPersist = this.persistence.enabled;
  }

  private checkStateDir(): { enabled: boolean; reason?: string } {
    const dir = this.options.stateDir;
    if (!dir) return { enabled: false, reason: 'no state directory configured (--state-dir)' };
    try {
      mkdirSync(dir, { recursive: true });
      const probe = join(dir, `.write-test-${process.pid}`);
      writeFileSync(probe, 'ok');
      unlinkSync(probe);
      return { enabled: true };
    } catch (err) {
      return { enabled: false, reason: `state directory ${dir} is not writable: ${(err as Error).message}` };
    }
  }

  /** Faults saved by a previous run; expired ones are returned separately (already dropped). */
  loadPersisted(): { restored: FaultRecord[]; expired: FaultRecord[]; error: string | null } {
    if (!this.canPersist || !this.options.stateDir) return { restored: [], expired: [], error: null };
    let raw: string;
    try {
      raw = readFileSync(join(this.options.stateDir, FILE), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { restored: [], expired: [], error: null };
      return { restored: [], expired: [], error: (err as Error).message };
    }
    let list: FaultRecord[];
    try {
      const parsed = JSON.parse(raw) as { version?: number; faults?: FaultRecord[] };
      if (parsed.version !== FILE_VERSION || !Array.isArray(parsed.faults))
        throw new Error(`unsupported format`);
      list = parsed.faults.filter(
        (f) => typeof f?.id === 'string' && typeof f.resource === 'string' && typeof f.deviceId === 'string',
      );
    } catch (err) {
      return { restored: [], expired: [], error: `${FILE} is unreadable: ${(err as Error).message}` };
    }
    const now = this.now().getTime();
    const restored: FaultRecord[] = [];
    const expired: FaultRecord[] = [];
    for (const f of list) (f.expiresAt && Date.parse(f.expiresAt) <= now ? expired : restored).push(f);
    return { restored, expired, error: null };
  }

  /**
   * Connects the actuator and re-applies `restored` faults (from loadPersisted) through it. A fault
   * the plugin refuses now (its resource is no longer served) stays listed with its `failure`.
   */
  attach(actuator: FaultActuator, restored: FaultRecord[] = [], expired: FaultRecord[] = []): void {
    this.actuator = actuator;
    for (const f of expired) this.options.onCleared?.(f, 'expired-while-down');
    for (const f of restored) {
      let failure: string | null = null;
      try {
        actuator.inject(f.resource, f.deviceId, f.reason, { absentOk: true, ...taintOf(f) });
      } catch (err) {
        failure = `could not be restored: ${(err as Error).message}`;
      }
      this.insert({ ...f, simulated: true, failure });
    }
    if (restored.length || expired.length) this.changed();
  }

  /**
   * Faults, optionally of one resource and one device. A device filter also matches faults on its
   * replicas (`<id>::<k>`), so one request clears a shared device's tile; with a resource, a DRA
   * device may be named by its ResourceSlice name.
   */
  list(filter: { resource?: string; deviceId?: string } = {}): FaultRecord[] {
    let deviceId = filter.deviceId;
    if (deviceId && filter.resource) {
      try {
        deviceId = this.actuator?.resolve?.(filter.resource, deviceId) ?? deviceId;
      } catch {
        // Not a resource the actuator knows: the filter matches what it says.
      }
    }
    const replicaPrefix = deviceId ? `${deviceId}${REPLICA_SEPARATOR}` : null;
    return [...this.faults.values()].filter(
      (f) =>
        (!filter.resource || f.resource === filter.resource) &&
        (!deviceId || f.deviceId === deviceId || f.deviceId.startsWith(replicaPrefix!)),
    );
  }

  /** Clears every fault `list(filter)` returns; the answer lists them. */
  removeAll(filter: { resource?: string; deviceId?: string } = {}): FaultRecord[] {
    return this.list(filter).map((f) => this.remove(f.id, 'deleted')!);
  }

  get(id: string): FaultRecord | undefined {
    return this.faults.get(id);
  }

  get size(): number {
    return this.faults.size;
  }

  add(input: NewFault): FaultRecord {
    if (this.faults.size >= this.options.maxActive) {
      throw new GatewayError(
        'conflict',
        `too many active faults (faults.maxActive is ${this.options.maxActive})`,
      );
    }
    const now = this.now();
    const fault: FaultRecord = {
      id: randomUUID(),
      resource: input.resource,
      deviceId: this.actuator?.resolve?.(input.resource, input.deviceId) ?? input.deviceId,
      reason: input.reason,
      createdAt: now.toISOString(),
      expiresAt: input.ttlSeconds ? new Date(now.getTime() + input.ttlSeconds * 1000).toISOString() : null,
      scenarioId: input.scenarioId ?? null,
      simulated: true,
      ...(input.taint ? { taint: input.taint } : {}),
      ...(input.taintRule ? { taintRule: input.taintRule } : {}),
    };
    // The plugin takes the fault first: a refusal is the caller's error and nothing is kept.
    this.actuator?.inject(fault.resource, fault.deviceId, fault.reason, taintOf(fault));
    this.insert(fault);
    this.changed();
    return fault;
  }

  remove(id: string, cause: FaultClearCause = 'deleted'): FaultRecord | undefined {
    const fault = this.faults.get(id);
    if (!fault) return undefined;
    this.faults.delete(id);
    clearTimeout(this.timers.get(id));
    this.timers.delete(id);
    // A fault the plugin never took (failure) has nothing to release.
    if (!fault.failure) {
      const others = this.deviceFaults(fault.resource, fault.deviceId).filter((f) => !f.failure);
      try {
        if (others.length === 0) this.actuator?.clear(fault.resource, fault.deviceId, taintOf(fault));
        // Another fault still holds the device; keep its reason (and taint) current.
        else {
          const last = others.at(-1)!;
          this.actuator?.inject(fault.resource, fault.deviceId, last.reason, {
            absentOk: true,
            ...taintOf(last),
          });
        }
      } catch (err) {
        // The resource went away under the fault: nothing holds the device any more either way.
        this.options.onActuatorError?.(fault, (err as Error).message);
      }
    }
    this.options.onCleared?.(fault, cause);
    this.changed();
    return fault;
  }

  /** Stops TTL timers and flushes persistence; faults stay on the devices until the plugins stop. */
  async close(): Promise<void> {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    if (this.persistTimer) {
      clearTimeout(this.persistTimer);
      this.persistTimer = null;
    }
    if (this.dirty || this.persisting) await this.persist();
  }

  private deviceFaults(resource: string, deviceId: string): FaultRecord[] {
    return [...this.faults.values()].filter((f) => f.resource === resource && f.deviceId === deviceId);
  }

  private insert(fault: FaultRecord): void {
    this.faults.set(fault.id, fault);
    if (fault.expiresAt) {
      const delay = Math.max(0, Date.parse(fault.expiresAt) - this.now().getTime());
      // setTimeout caps at 2^31-1 ms; longer TTLs re-arm on expiry check.
      const timer = setTimeout(() => this.expire(fault.id), Math.min(delay, 2 ** 31 - 1));
      timer.unref();
      this.timers.set(fault.id, timer);
    }
    this.options.onInjected?.(fault);
  }

  private expire(id: string): void {
    const fault = this.faults.get(id);
    if (!fault?.expiresAt) return;
    const left = Date.parse(fault.expiresAt) - this.now().getTime();
    if (left > 5) {
      const timer = setTimeout(() => this.expire(id), Math.min(left, 2 ** 31 - 1));
      timer.unref();
      this.timers.set(id, timer);
      return;
    }
    this.remove(id, 'expired');
  }

  private changed(): void {
    this.options.onChange?.(this.list());
    if (!this.canPersist) return;
    this.dirty = true;
    this.schedulePersist();
  }

  /** Coalesce bursts (scenarios, flapping) into one write; close() flushes a pending one. */
  private schedulePersist(): void {
    if (this.persistTimer || this.persisting) return;
    this.persistTimer = setTimeout(() => {
      this.persistTimer = null;
      void this.persist();
    }, PERSIST_DELAY_MS);
    this.persistTimer.unref();
  }

  /**
   * Writes the current list (write + rename, off the event loop's critical path) until no change is
   * pending; one loop at a time, so writes land in order.
   */
  private persist(): Promise<void> {
    this.persisting ??= (async () => {
      while (this.dirty) {
        this.dirty = false;
        await this.writeFile(JSON.stringify({ version: FILE_VERSION, faults: this.list() }, null, 2));
      }
    })().finally(() => {
      this.persisting = null;
      // A change that arrived after the loop's last check but before this callback.
      if (this.dirty) this.schedulePersist();
    });
    return this.persisting;
  }

  private async writeFile(body: string): Promise<void> {
    const dir = this.options.stateDir;
    if (!dir) return;
    const file = join(dir, FILE);
    const tmp = `${file}.${process.pid}.tmp`;
    let next: { enabled: boolean; reason?: string };
    try {
      await writeFile(tmp, body);
      await rename(tmp, file);
      next = { enabled: true };
    } catch (err) {
      next = {
        enabled: false,
        reason: `cannot write ${file}: ${(err as Error).message}; faults are kept in memory only`,
      };
    }
    if (next.enabled !== this.persistence.enabled || next.reason !== this.persistence.reason) {
      this.persistence = next;
      this.options.onPersistenceChange?.(next);
    }
  }
}
