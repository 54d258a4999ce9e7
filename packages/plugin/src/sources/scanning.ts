// Base for sources that discover devices by scanning the filesystem: an initial scan, then a
// rescan on fs.watch events (debounced) and on a polling interval, because inotify misses events
// on hostPath and sysfs mounts. Listeners hear only real changes.
import { watch, type FSWatcher } from 'node:fs';
import type { DeviceSource, SourceDevice } from '../types.js';
import { ChangeListeners, sameDevices } from './listeners.js';

export abstract class ScanningSource implements DeviceSource {
  abstract readonly kind: string;
  #devices: readonly SourceDevice[] = [];
  readonly #listeners = new ChangeListeners();
  readonly #pollIntervalMs: number;
  #timer: NodeJS.Timeout | null = null;
  #debounce: NodeJS.Timeout | null = null;
  #watchers: FSWatcher[] = [];
  #scanning: Promise<void> | null = null;
  #rescanQueued = false;
  #stopped = false;

  constructor(pollIntervalMs: number) {
    this.#pollIntervalMs = pollIntervalMs;
  }

  /** Full device list as found on disk right now, sorted by ID. */
  protected abstract scan(): Promise<SourceDevice[]>;
  /** Directories whose changes should trigger a rescan. */
  protected abstract watchedDirs(): string[];

  async start(): Promise<void> {
    this.#devices = await this.scan();
    for (const dir of this.watchedDirs()) {
      try {
        const watcher = watch(dir, { persistent: false }, () => this.#scheduleRescan());
        watcher.on('error', () => watcher.close());
        this.#watchers.push(watcher);
      } catch {
        // A directory that does not exist yet is picked up by polling.
      }
    }
    if (this.#pollIntervalMs > 0) {
      this.#timer = setInterval(() => void this.rescan(), this.#pollIntervalMs);
      this.#timer.unref();
    }
  }

  list(): readonly SourceDevice[] {
    return this.#devices;
  }

  subscribe(listener: () => void): () => void {
    return this.#listeners.subscribe(listener);
  }

  /** Rescans now; concurrent calls collapse into one follow-up scan. */
  async rescan(): Promise<void> {
    if (this.#scanning) {
      this.#rescanQueued = true;
      return this.#scanning;
    }
    this.#scanning = (async () => {
      do {
        this.#rescanQueued = false;
        let next: SourceDevice[];
        try {
          next = await this.scan();
        } catch {
          // Keep the last good list: a transient read error must not drop every device.
          return;
        }
        if (this.#stopped) return;
        if (!sameDevices(this.#devices, next)) {
          this.#devices = next;
          this.#listeners.notify();
        }
      } while (this.#rescanQueued);
    })().finally(() => {
      this.#scanning = null;
    });
    return this.#scanning;
  }

  #scheduleRescan(): void {
    if (this.#debounce) return;
    this.#debounce = setTimeout(() => {
      this.#debounce = null;
      void this.rescan();
    }, 20);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    if (this.#debounce) clearTimeout(this.#debounce);
    for (const watcher of this.#watchers) watcher.close();
    this.#watchers = [];
    await this.#scanning;
  }
}
