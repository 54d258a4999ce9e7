// Base for sources that discover devices by scanning the filesystem: an initial scan, then a
// rescan on fs.watch events (debounced) and on a polling interval, because inotify misses events
// on hostPath and sysfs mounts. Where fs.watch fails (inotify instances exhausted, a directory not
// there yet) the polling carries on alone — or, with polling turned off, the directory is polled
// anyway — and the log and `watchMode` say so. Listeners hear only real changes.
import {
  watchDirectory,
  type DirectoryWatch,
  type DirectoryWatchLogger,
  type DirectoryWatchMode,
  type WatchFactory,
} from '@plugboard/proto';
import type { DeviceSource, SourceDevice } from '../types.js';
import { ChangeListeners, sameDevices } from './listeners.js';

/** How a scanning source watches its directories. */
export interface ScanningWatchOptions {
  /** fs.watch unless a test injects a failing one. */
  watch?: WatchFactory;
  /** Where a directory watch falling back to polling is reported. */
  logger?: DirectoryWatchLogger;
}

/** Poll interval of a directory that cannot be watched when the source's own polling is off. */
const FALLBACK_POLL_MS = 1000;

export abstract class ScanningSource implements DeviceSource {
  abstract readonly kind: string;
  #devices: readonly SourceDevice[] = [];
  readonly #listeners = new ChangeListeners();
  readonly #pollIntervalMs: number;
  #timer: NodeJS.Timeout | null = null;
  #debounce: NodeJS.Timeout | null = null;
  #watchers: DirectoryWatch[] = [];
  readonly #watchOptions: ScanningWatchOptions;
  #scanning: Promise<void> | null = null;
  #rescanQueued = false;
  #stopped = false;

  constructor(pollIntervalMs: number, watchOptions: ScanningWatchOptions = {}) {
    this.#pollIntervalMs = pollIntervalMs;
    this.#watchOptions = watchOptions;
  }

  /** Full device list as found on disk right now, sorted by ID. */
  protected abstract scan(): Promise<SourceDevice[]>;
  /** Directories whose changes should trigger a rescan. */
  protected abstract watchedDirs(): string[];

  async start(): Promise<void> {
    this.#devices = await this.scan();
    for (const dir of this.watchedDirs()) {
      this.#watchers.push(
        watchDirectory(dir, () => this.#scheduleRescan(), {
          // The source's own polling covers a failed watch; without it, the directory is polled.
          pollMs: this.#pollIntervalMs > 0 ? null : FALLBACK_POLL_MS,
          ...(this.#watchOptions.watch ? { watch: this.#watchOptions.watch } : {}),
          ...(this.#watchOptions.logger ? { logger: this.#watchOptions.logger } : {}),
        }),
      );
    }
    if (this.#pollIntervalMs > 0) {
      this.#timer = setInterval(() => void this.rescan(), this.#pollIntervalMs);
      this.#timer.unref();
    }
  }

  /** `poll` (with the first reason) when any directory is followed by polling alone. */
  get watchMode(): { mode: DirectoryWatchMode; reason: string | null } {
    const failed = this.#watchers.find((w) => w.mode === 'poll');
    return failed ? { mode: 'poll', reason: failed.reason } : { mode: 'watch', reason: null };
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
