// A resource's advertised devices: the source's list minus excluded IDs, with the fault overlay
// applied (faults enter here, so they travel the real ListAndWatch path), expanded into replicas
// when the resource is shared, and with each device's last transition time and reason.
// The overlay is the one owner of "which devices are faulted": a fault holds its device ID until it
// is cleared, whatever the source does meanwhile. A device that vanishes keeps its fault and comes
// back Unhealthy in the same list that re-adds it, so the kubelet can never allocate it in between.
import { EventEmitter } from 'node:events';
import { PluginError } from './errors.js';
import type { DeviceHealth, DeviceSource, PluginDevice } from './types.js';
import { sameDevices } from './sources/listeners.js';

export const REPLICA_SEPARATOR = '::';

export interface DeviceStateOptions {
  source: DeviceSource;
  exclude?: readonly string[];
  /** Advertise every physical device this many times as `<id>::<k>` (k from 0). 1 = no sharing. */
  replicas?: number;
  now?: () => Date;
}

interface DeviceStateEvents {
  devices: [devices: PluginDevice[]];
  health: [event: { deviceId: string; health: DeviceHealth; reason: string | null; at: string }];
}

export class DeviceState extends EventEmitter<DeviceStateEvents> {
  readonly #source: DeviceSource;
  readonly #exclude: ReadonlySet<string>;
  readonly #replicas: number;
  readonly #now: () => Date;
  /** Fault overlay: advertised or physical ID → reason. */
  readonly #faults = new Map<string, string>();
  /** Last health transition per advertised ID. */
  readonly #since = new Map<string, { health: DeviceHealth; at: string }>();
  #devices: PluginDevice[] = [];
  #byId = new Map<string, PluginDevice>();
  #version = 0;
  #unsubscribe: (() => void) | null = null;

  constructor(options: DeviceStateOptions) {
    super();
    this.#source = options.source;
    this.#exclude = new Set(options.exclude ?? []);
    this.#replicas = Math.max(1, options.replicas ?? 1);
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * Starts the source (its initial discovery), then attaches. A source that fails to start is a
   * `source-failed` PluginError naming `owner` (the resource or the driver) and the source's kind.
   */
  async start(owner: string): Promise<void> {
    try {
      await this.#source.start();
    } catch (err) {
      throw new PluginError(
        'source-failed',
        `${owner}: ${this.#source.kind} source failed to start: ${PluginError.from(err).message}`,
        { cause: err },
      );
    }
    this.attach();
  }

  /** Subscribes to the source and computes the first list. */
  attach(): void {
    this.#unsubscribe ??= this.#source.subscribe(() => this.refresh());
    this.refresh();
  }

  detach(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
  }

  get version(): number {
    return this.#version;
  }

  get shared(): boolean {
    return this.#replicas > 1;
  }

  devices(): PluginDevice[] {
    return this.#devices;
  }

  get(id: string): PluginDevice | undefined {
    return this.#byId.get(id);
  }

  /** Physical ID of an advertised ID (itself when not a replica). */
  physicalId(id: string): string {
    return this.#byId.get(id)?.replicaOf ?? id;
  }

  /**
   * Holds `deviceId` Unhealthy until cleared. The device must be advertised now unless `absentOk`
   * (a fault restored after a restart, whose device may be unplugged at that moment).
   */
  injectFault(deviceId: string, reason: string, options: { absentOk?: boolean } = {}): void {
    if (this.#exclude.has(deviceId)) {
      throw new PluginError('not-found', `device "${deviceId}" is excluded from this resource`);
    }
    if (!options.absentOk) this.#assertKnown(deviceId);
    this.#faults.set(deviceId, reason);
    this.refresh();
  }

  /** Releases a held device (advertised or absent). */
  clearFault(deviceId: string): void {
    if (!this.#faults.has(deviceId)) this.#assertKnown(deviceId);
    this.#faults.delete(deviceId);
    this.refresh();
  }

  faults(): ReadonlyMap<string, string> {
    return this.#faults;
  }

  /** Whether a held ID is advertised now (as itself or through its replicas). */
  present(deviceId: string): boolean {
    return this.#byId.has(deviceId) || this.#devices.some((d) => d.replicaOf === deviceId);
  }

  #assertKnown(deviceId: string): void {
    const physical = this.#source.list().some((d) => d.id === deviceId && !this.#exclude.has(d.id));
    if (!physical && !this.#byId.has(deviceId)) {
      throw new PluginError('not-found', `device "${deviceId}" is not advertised by this resource`);
    }
  }

  /** Recomputes the advertised list; emits 'health' per transition and 'devices' on any change. */
  refresh(): void {
    const at = this.#now().toISOString();
    const next: PluginDevice[] = [];
    const transitions: DeviceStateEvents['health'][0][] = [];
    const push = (
      id: string,
      replicaOf: string | null,
      health: DeviceHealth,
      reason: string | null,
      numaNodes: number[],
      deviceNodes: string[],
    ): void => {
      const previous = this.#since.get(id);
      let since = previous?.at ?? at;
      if (previous && previous.health !== health) {
        since = at;
        transitions.push({ deviceId: id, health, reason, at });
      }
      if (!previous || previous.health !== health || previous.at !== since) {
        this.#since.set(id, { health, at: since });
      }
      // An unchanged device keeps its object: fewer allocations per refresh (a fault touches one
      // device of possibly thousands), and consumers can tell unchanged devices by identity.
      const old = this.#byId.get(id);
      next.push(
        old &&
          old.health === health &&
          old.reason === reason &&
          old.since === since &&
          old.replicaOf === replicaOf &&
          old.numaNodes === numaNodes &&
          old.deviceNodes === deviceNodes
          ? old
          : { id, health, reason, since, numaNodes, replicaOf, deviceNodes },
      );
    };
    for (const device of this.#source.list()) {
      if (this.#exclude.has(device.id)) continue;
      // Source health wins over a cleared fault: clearing never heals broken hardware.
      const physicalFault = this.#faults.get(device.id);
      const health: DeviceHealth =
        device.health === 'Unhealthy' || physicalFault !== undefined ? 'Unhealthy' : 'Healthy';
      const reason =
        device.health === 'Unhealthy'
          ? (device.reason ?? 'reported unhealthy by source')
          : (physicalFault ?? null);
      if (this.#replicas === 1) {
        push(device.id, null, health, reason, device.numaNodes, device.deviceNodes);
        continue;
      }
      for (let k = 0; k < this.#replicas; k++) {
        const id = `${device.id}${REPLICA_SEPARATOR}${k}`;
        const replicaFault = this.#faults.get(id);
        const replicaHealth: DeviceHealth =
          health === 'Unhealthy' || replicaFault !== undefined ? 'Unhealthy' : 'Healthy';
        push(
          id,
          device.id,
          replicaHealth,
          reason ?? replicaFault ?? null,
          device.numaNodes,
          device.deviceNodes,
        );
      }
    }
    // Forget the transition times of devices that are gone (a re-added device starts a new
    // history); faults stay: the overlay holds them until they are cleared.
    const ids = new Set(next.map((d) => d.id));
    for (const id of this.#since.keys()) if (!ids.has(id)) this.#since.delete(id);
    if (this.#version > 0 && sameDevices(this.#devices, next)) return;
    this.#devices = next;
    this.#byId = new Map(next.map((d) => [d.id, d]));
    this.#version++;
    for (const t of transitions) this.emit('health', t);
    this.emit('devices', next);
  }
}
