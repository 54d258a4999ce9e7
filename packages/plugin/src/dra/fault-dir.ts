// Fault injection for harnesses outside the process: a directory per driver (by default
// <plugins dir>/<driver>/faults) where a file named after a device (its ID or its ResourceSlice
// name) holds that device faulted, with the file's first line as the reason, and removing the file
// heals it. The driver's fault overlay does the rest, exactly as for an in-process injectFault:
// health message at once, taint if configured. `.status.json` in the same directory says what is
// in effect (written atomically after every change), so a harness — or `plugboard-plugin fault` —
// can wait for it instead of sleeping. fs.watch gives the fast path; a poll covers filesystems
// where inotify events do not arrive, and carries on alone where fs.watch fails (inotify instances
// exhausted), which the log and the status's `watch` say. Faults held by files come back after a
// restart of the driver.
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { watchDirectory, type DirectoryWatch, type WatchFactory } from '@plugboard/proto';
import { writeFileAtomic } from '../atomic-file.js';
import { PluginError } from '../errors.js';
import type { PluginDevice } from '../types.js';
import { draDeviceName } from './slice-devices.js';

export const FAULT_DIR_NAME = 'faults';
export const FAULT_STATUS_FILE = '.status.json';
const MAX_REASON = 256;

/** What `.status.json` holds. */
export interface FaultDirStatus {
  driver: string;
  at: string;
  /** Active faults of the driver's overlay by device ID (whoever injected them). */
  faults: Record<string, { name: string; reason: string; present: boolean; fromFile: string | null }>;
  /** Files that name no device of the driver. */
  unknown: string[];
  /** `poll`: fs.watch is unavailable (the reason says why), changes take up to the poll interval. */
  watch: { mode: 'watch' | 'poll'; reason: string | null };
}

/** The part of a DraDriver the fault directory drives. */
export interface FaultTarget {
  readonly driverName: string;
  devices(): PluginDevice[];
  injectFault(deviceId: string, reason: string): void;
  clearFault(deviceId: string): void;
  faults(): Map<string, { reason: string; present: boolean }>;
  on(event: 'devices', listener: () => void): unknown;
  off(event: 'devices', listener: () => void): unknown;
}

export class FaultDir {
  readonly dir: string;
  readonly #target: FaultTarget;
  readonly #logger: Logger;
  readonly #pollMs: number;
  /** File name → the device ID and reason this file holds a fault on. */
  readonly #applied = new Map<string, { id: string; reason: string }>();
  readonly #watch: WatchFactory | undefined;
  #watcher: DirectoryWatch | null = null;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #again = false;
  #stopped = false;
  /** The status last written, without its time: unchanged content is not written again. */
  #lastStatus = '';
  readonly #onDevices = (): void => void this.sync();

  constructor(target: FaultTarget, dir: string, logger: Logger, pollMs = 1000, watch?: WatchFactory) {
    this.#target = target;
    this.#watch = watch;
    this.dir = dir;
    this.#logger = logger.child({ component: 'fault-dir' });
    this.#pollMs = pollMs;
  }

  async start(): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o755 });
    } catch (err) {
      throw new PluginError(
        'internal',
        `cannot create the fault directory ${this.dir}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    // The poll below runs in every mode: a failed watch needs no poll of its own.
    this.#watcher = watchDirectory(
      this.dir,
      (name) => {
        if (name !== FAULT_STATUS_FILE && !name?.endsWith('.tmp')) void this.sync();
      },
      { pollMs: null, logger: this.#logger, ...(this.#watch ? { watch: this.#watch } : {}) },
    );
    await this.sync();
    this.#timer = setInterval(() => void this.sync(), this.#pollMs);
    this.#timer.unref();
    // A file naming a device that is absent now takes effect when the device appears.
    this.#target.on('devices', this.#onDevices);
    this.#logger.info({ dir: this.dir, mode: this.#watcher.mode }, 'fault directory watched');
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#watcher?.close();
    if (this.#timer) clearInterval(this.#timer);
    this.#target.off('devices', this.#onDevices);
    await this.#running;
  }

  /** Applies the directory's content (coalescing calls that arrive while one runs). */
  sync(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      do {
        this.#again = false;
        await this.#syncOnce().catch((err: unknown) =>
          this.#logger.warn({ err: PluginError.from(err).message }, 'reading the fault directory failed'),
        );
      } while (this.#again && !this.#stopped);
    })().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  async #syncOnce(): Promise<void> {
    if (this.#stopped) return;
    const files = new Map<string, string>();
    for (const entry of await readdir(this.dir, { withFileTypes: true })) {
      if (!entry.isFile() || entry.name.startsWith('.') || entry.name.endsWith('.tmp')) continue;
      const text = await readFile(join(this.dir, entry.name), 'utf8').catch(() => null);
      if (text === null) continue;
      const reason =
        text.split('\n')[0]!.trim().slice(0, MAX_REASON) ||
        `fault injected through ${join(this.dir, entry.name)}`;
      files.set(entry.name, reason);
    }
    const devices = this.#target.devices();
    const byName = new Map(devices.map((d) => [draDeviceName(d.id), d.id]));
    const ids = new Set(devices.map((d) => d.id));
    const unknown: string[] = [];
    // Removed (or renamed) files first: heal what they held.
    for (const [file, held] of [...this.#applied]) {
      if (files.has(file)) continue;
      this.#applied.delete(file);
      if (this.#target.faults().has(held.id)) this.#target.clearFault(held.id);
      this.#logger.info({ device: held.id, file }, 'fault file removed: device healed');
    }
    for (const [file, reason] of files) {
      const id = ids.has(file) ? file : byName.get(file);
      if (id === undefined) {
        unknown.push(file);
        continue;
      }
      const held = this.#applied.get(file);
      if (held?.id === id && held.reason === reason && this.#target.faults().get(id)?.reason === reason)
        continue;
      this.#target.injectFault(id, reason);
      this.#applied.set(file, { id, reason });
      this.#logger.info({ device: id, file, reason }, 'fault file: device faulted');
    }
    await this.#writeStatus(unknown, byName);
  }

  async #writeStatus(unknown: string[], byName: Map<string, string>): Promise<void> {
    const fromFile = new Map([...this.#applied].map(([file, held]) => [held.id, file]));
    const names = new Map([...byName].map(([name, id]) => [id, name]));
    const content = {
      faults: Object.fromEntries(
        [...this.#target.faults()].map(([id, f]) => [
          id,
          {
            name: names.get(id) ?? draDeviceName(id),
            reason: f.reason,
            present: f.present,
            fromFile: fromFile.get(id) ?? null,
          },
        ]),
      ),
      unknown: unknown.sort(),
      watch: { mode: this.#watcher?.mode ?? 'watch', reason: this.#watcher?.reason ?? null },
    };
    const key = JSON.stringify(content);
    if (key === this.#lastStatus) return;
    this.#lastStatus = key;
    if (unknown.length > 0)
      this.#logger.warn({ files: unknown }, 'fault files name no device of this driver');
    const status: FaultDirStatus = {
      driver: this.#target.driverName,
      at: new Date().toISOString(),
      ...content,
    };
    await writeFileAtomic(join(this.dir, FAULT_STATUS_FILE), JSON.stringify(status, null, 2) + '\n');
  }
}
