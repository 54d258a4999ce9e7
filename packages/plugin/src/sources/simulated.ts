// Simulated devices: N devices spread evenly over NUMA nodes with stable IDs (`<prefix>-<i>`), and
// an API to make one unhealthy, heal it or flap it. Used by the demo, tests and benchmarks.
import { PluginError } from '../errors.js';
import type { DeviceHealth, DeviceSource, SourceDevice } from '../types.js';
import { ChangeListeners } from './listeners.js';

export interface SimulatedSourceOptions {
  count: number;
  /** NUMA nodes to spread over in contiguous blocks (8 devices on [0, 1]: 0-3 on 0, 4-7 on 1). */
  numaNodes?: number[];
  /** ID prefix: devices are `<idPrefix>-0` … `<idPrefix>-<count-1>`. */
  idPrefix: string;
  /** Optional device node per device; `{id}` and `{index}` are replaced. */
  deviceNodePattern?: string;
}

export class SimulatedSource implements DeviceSource {
  readonly kind = 'simulated';
  readonly #devices: SourceDevice[];
  readonly #listeners = new ChangeListeners();
  readonly #flapTimers = new Set<NodeJS.Timeout>();
  readonly #flapping = new Set<() => void>();

  constructor(options: SimulatedSourceOptions) {
    const numa = options.numaNodes ?? [];
    this.#devices = Array.from({ length: options.count }, (_, index) => {
      const id = `${options.idPrefix}-${index}`;
      const node = numa.length > 0 ? numa[Math.floor((index * numa.length) / options.count)] : undefined;
      return {
        id,
        health: 'Healthy' as const,
        reason: null,
        numaNodes: node === undefined ? [] : [node],
        deviceNodes: options.deviceNodePattern
          ? [options.deviceNodePattern.replaceAll('{id}', id).replaceAll('{index}', String(index))]
          : [],
      };
    });
  }

  async start(): Promise<void> {}

  list(): readonly SourceDevice[] {
    return this.#devices;
  }

  subscribe(listener: () => void): () => void {
    return this.#listeners.subscribe(listener);
  }

  /** Sets a device's health as the hardware would report it. */
  setHealth(id: string, health: DeviceHealth, reason: string | null = null): void {
    const index = this.#devices.findIndex((d) => d.id === id);
    if (index < 0) throw new PluginError('not-found', `simulated device "${id}" does not exist`);
    const current = this.#devices[index]!;
    const nextReason = health === 'Healthy' ? null : reason;
    if (current.health === health && current.reason === nextReason) return;
    // Replace rather than mutate so a list handed out earlier stays a consistent snapshot.
    this.#devices[index] = { ...current, health, reason: nextReason };
    this.#listeners.notify();
  }

  markUnhealthy(id: string, reason: string): void {
    this.setHealth(id, 'Unhealthy', reason);
  }

  heal(id: string): void {
    this.setHealth(id, 'Healthy');
  }

  /** Alternates Unhealthy/Healthy `times` times, `intervalMs` apart, ending Healthy. */
  flap(id: string, options: { times?: number; intervalMs?: number; reason?: string } = {}): Promise<void> {
    const times = options.times ?? 3;
    const intervalMs = options.intervalMs ?? 500;
    const reason = options.reason ?? 'flapping';
    this.markUnhealthy(id, reason);
    return new Promise((resolve) => {
      this.#flapping.add(resolve);
      let step = 1;
      const tick = (): void => {
        if (step >= times * 2) {
          this.#flapping.delete(resolve);
          resolve();
          return;
        }
        if (step % 2 === 1) this.heal(id);
        else this.markUnhealthy(id, reason);
        step++;
        schedule();
      };
      const schedule = (): void => {
        const timer = setTimeout(() => {
          this.#flapTimers.delete(timer);
          tick();
        }, intervalMs);
        this.#flapTimers.add(timer);
      };
      schedule();
    });
  }

  stop(): Promise<void> {
    for (const timer of this.#flapTimers) clearTimeout(timer);
    this.#flapTimers.clear();
    // A flap cut short by stop() still settles.
    for (const resolve of this.#flapping) resolve();
    this.#flapping.clear();
    return Promise.resolve();
  }
}
