// The DRA manager's device health cache (pkg/kubelet/cm/dra healthinfo.go, 1.37): the last health
// each driver reported on its NodeWatchResources stream, per `<pool>/<device>`. A device's health is
// Unknown when it was never reported or its last report is older than its timeout
// (health_check_timeout_seconds, 30 s when unset); a report is the driver's complete list, so
// devices missing from it turn Unknown once timed out. Kept in `dra_health_state` (JSON) so a
// restarted kubelet knows the last health until the drivers report again.

import type { CheckpointManager } from '../../checkpointmanager/checkpoint-manager.js';
import type { DeviceHealth, DeviceHealthStatus } from './state/state.js';

export const DRA_HEALTH_STATE_FILE = 'dra_health_state';
/** DefaultHealthTimeout. */
export const DEFAULT_HEALTH_TIMEOUT_MS = 30_000;
/** v1.ResourceHealthMessageMaxLength. */
export const HEALTH_MESSAGE_MAX_LENGTH = 1024;

/** truncateHealthMessage: beyond 1024 characters, 1021 and `...`. */
export function truncateHealthMessage(message: string): string {
  return message.length <= HEALTH_MESSAGE_MAX_LENGTH
    ? message
    : `${message.slice(0, HEALTH_MESSAGE_MAX_LENGTH - 3)}...`;
}

const deviceKey = (pool: string, device: string) => `${pool}/${device}`;

export class HealthInfoCache {
  /** driver → `<pool>/<device>` → health. */
  private readonly drivers = new Map<string, Map<string, DeviceHealth>>();
  /** Writes in order, one at a time (each takes the state when it starts). */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly checkpoints: CheckpointManager,
    private readonly now: () => number = Date.now,
  ) {}

  async load(): Promise<void> {
    this.drivers.clear();
    const blob = await this.checkpoints.getCheckpoint(DRA_HEALTH_STATE_FILE).catch(() => null);
    if (!blob) return;
    try {
      const data = JSON.parse(blob) as Record<string, { Devices?: Record<string, SavedHealth> }>;
      for (const [driver, { Devices = {} }] of Object.entries(data)) {
        const devices = new Map<string, DeviceHealth>();
        for (const [k, d] of Object.entries(Devices))
          devices.set(k, {
            poolName: d.PoolName,
            deviceName: d.DeviceName,
            health: d.Health,
            lastUpdated: Date.parse(d.LastUpdated),
            healthCheckTimeoutMs: (d.HealthCheckTimeout ?? 0) / 1e6 || DEFAULT_HEALTH_TIMEOUT_MS,
            message: d.Message ?? '',
          });
        this.drivers.set(driver, devices);
      }
    } catch {
      // A corrupt health checkpoint is not fatal: the drivers report again.
      this.drivers.clear();
    }
  }

  /** getHealthInfo: the device's health, Unknown if never reported or timed out. */
  get(driver: string, pool: string, device: string): { health: DeviceHealthStatus; message: string } {
    const d = this.drivers.get(driver)?.get(deviceKey(pool, device));
    if (!d || this.now() - d.lastUpdated > d.healthCheckTimeoutMs) return { health: 'Unknown', message: '' };
    return { health: d.health, message: d.message };
  }

  /**
   * updateHealthInfo: applies one report (the driver's complete list) and returns the devices whose
   * health changed, including unreported ones that timed out to Unknown.
   */
  async update(driver: string, reported: Omit<DeviceHealth, 'lastUpdated'>[]): Promise<DeviceHealth[]> {
    const now = this.now();
    let devices = this.drivers.get(driver);
    if (!devices) {
      devices = new Map();
      this.drivers.set(driver, devices);
    }
    const changed: DeviceHealth[] = [];
    const seen = new Set<string>();
    for (const r of reported) {
      const k = deviceKey(r.poolName, r.deviceName);
      seen.add(k);
      const next: DeviceHealth = { ...r, lastUpdated: now };
      const prev = devices.get(k);
      if (!prev || prev.health !== next.health) changed.push(next);
      devices.set(k, next);
    }
    for (const [k, d] of devices) {
      if (seen.has(k) || d.health === 'Unknown' || now - d.lastUpdated <= d.healthCheckTimeoutMs) continue;
      const unknown: DeviceHealth = { ...d, health: 'Unknown', lastUpdated: now };
      devices.set(k, unknown);
      changed.push(unknown);
    }
    if (changed.length > 0) await this.save();
    return changed;
  }

  /** clearDriver: the driver's stream ended. */
  async clearDriver(driver: string): Promise<void> {
    if (!this.drivers.delete(driver)) return;
    await this.save();
  }

  /** The earliest time (ms since the epoch) a reported, not yet Unknown device of `driver` times out. */
  nextExpiry(driver: string): number | null {
    let next: number | null = null;
    for (const d of this.drivers.get(driver)?.values() ?? []) {
      if (d.health === 'Unknown') continue;
      const at = d.lastUpdated + d.healthCheckTimeoutMs;
      if (next === null || at < next) next = at;
    }
    return next;
  }

  private save(): Promise<void> {
    const run = this.writing.then(() => this.write());
    this.writing = run.catch(() => undefined);
    return run;
  }

  private async write(): Promise<void> {
    const data = Object.fromEntries(
      [...this.drivers].map(([driver, devices]) => [
        driver,
        {
          Devices: Object.fromEntries(
            [...devices].map(([k, d]) => [
              k,
              {
                PoolName: d.poolName,
                DeviceName: d.deviceName,
                Health: d.health,
                LastUpdated: new Date(d.lastUpdated).toISOString(),
                HealthCheckTimeout: d.healthCheckTimeoutMs * 1e6,
                Message: d.message,
              } satisfies SavedHealth,
            ]),
          ),
        },
      ]),
    );
    await this.checkpoints.createCheckpoint(DRA_HEALTH_STATE_FILE, JSON.stringify(data));
  }
}

interface SavedHealth {
  PoolName: string;
  DeviceName: string;
  Health: DeviceHealthStatus;
  LastUpdated: string;
  /** A Go time.Duration: nanoseconds. */
  HealthCheckTimeout?: number;
  Message?: string;
}
